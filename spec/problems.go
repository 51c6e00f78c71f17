package spec

import (
	"fmt"
	"sort"
	"strings"
)

// Problem is one thing wrong with a spec, at the place it was written.
type Problem struct {
	Pos     Pos    `json:"pos"`
	Path    string `json:"path,omitempty"` // field path, e.g. steps.2.helm.chart
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"` // one line on how to fix it
}

func (p Problem) String() string {
	s := p.Message
	if p.Pos.File != "" || p.Pos.Line > 0 {
		s = p.Pos.String() + ": " + s
	}
	if p.Hint != "" {
		s += " (" + p.Hint + ")"
	}
	return s
}

// Problems is every problem found in one load; validation never stops at the first.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Sort orders problems by file, line and column so output is stable.
func (ps Problems) Sort() {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i].Pos, ps[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}

// Errorf builds a Problem.
func Errorf(pos Pos, path, format string, args ...any) Problem {
	return Problem{Pos: pos, Path: path, Message: fmt.Sprintf(format, args...)}
}
