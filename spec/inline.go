package spec

import (
	"fmt"
	"strings"
)

// TextAt is where the text of an inline manifest starts in the spec: its
// line 1, column 1 is at Line:Col of File, and its lines follow one for one
// (a literal block scalar, "inline: |"). Errors about a field of an inline
// manifest point there.
type TextAt struct {
	File      string
	Line, Col int
}

// Pos is the spec position of a line and column of the text.
func (t *TextAt) Pos(line, col int) Pos {
	if t == nil {
		return Pos{}
	}
	return Pos{File: t.File, Line: t.Line + line - 1, Col: t.Col + col - 1}
}

// locateInline sets Source.At for every inline manifest written as a
// literal block scalar whose lines are the text's lines one for one. A
// folded or quoted scalar, or a substitution that added lines, leaves it
// nil: errors then point at the inline: field itself.
func locateInline(s *Spec, maps []*posMap) {
	for _, st := range s.Steps {
		if st == nil {
			continue
		}
		var srcs []Source
		var kind string
		switch {
		case st.Apply != nil:
			srcs, kind = st.Apply.Manifests, "apply"
		case st.Delete != nil:
			srcs, kind = st.Delete.Manifests, "delete"
		}
		for i := range srcs {
			if srcs[i].Inline == "" {
				continue
			}
			pos, ok := s.Positions[fmt.Sprintf("%s.%s.manifests.%d.inline", st.Path, kind, i)]
			if !ok {
				continue
			}
			for _, m := range maps {
				if m != nil && m.file == pos.File {
					srcs[i].At = literalBlockAt(m.orig, pos, srcs[i].Inline)
					break
				}
			}
		}
	}
}

// literalBlockAt finds the first content line of the literal block scalar
// whose indicator ("|", "|-", "|+", "|2") is at pos in raw, when the block
// holds text's lines one for one.
func literalBlockAt(raw []byte, pos Pos, text string) *TextAt {
	lines := strings.Split(string(raw), "\n")
	if pos.Line < 1 || pos.Line > len(lines) {
		return nil
	}
	head := []rune(lines[pos.Line-1])
	if pos.Col < 1 || pos.Col > len(head) || head[pos.Col-1] != '|' {
		return nil
	}
	want := strings.Split(strings.TrimRight(text, "\n"), "\n")
	first := pos.Line // 0-based index of the first content line
	indent := -1
	for j := first; j < len(lines) && j < first+len(want); j++ {
		if t := strings.TrimLeft(lines[j], " "); t != "" {
			indent = len(lines[j]) - len(t)
			break
		}
	}
	if indent < 0 || first+len(want) > len(lines) {
		return nil
	}
	for k, w := range want {
		got := lines[first+k]
		if strings.TrimSpace(got) == "" && strings.TrimSpace(w) == "" {
			continue
		}
		if len(got) < indent || strings.TrimSpace(got[:indent]) != "" {
			return nil // the block ended early: a substitution added lines
		}
		if got[indent:] != w && !strings.Contains(got, "${") {
			return nil
		}
	}
	return &TextAt{File: pos.File, Line: first + 1, Col: indent + 1}
}

// maps are the position maps of every file the tree was built from.
func (ft *fileTree) maps() []*posMap {
	out := []*posMap{ft.pm}
	seen := map[*posMap]bool{ft.pm: true}
	for _, m := range ft.origin {
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}
