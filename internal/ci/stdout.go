package ci

import (
	"io"
	"strings"
	"sync"

	"github.com/khook/khook/internal/ci/gha"
)

// stdout is the one ordered writer in front of the process's stdout: the
// redacted log, fenced report text and ::add-mask:: lines all go through
// it, whole writes at a time, so a mask announced mid-run lands between
// two lines and before any line that could hold the value.
type stdout struct {
	mu sync.Mutex
	w  io.Writer
	// fence is the token of the open ::stop-commands:: block, "" when none:
	// the runner ignores ::add-mask:: inside one, so addMask closes it
	// around its lines and opens a new one.
	fence string
	seen  map[string]bool
}

func newStdout(w io.Writer) *stdout { return &stdout{w: w, seen: map[string]bool{}} }

func (s *stdout) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// stopCommands opens a ::stop-commands:: block; end closes it.
func (s *stdout) stopCommands() (end func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fence = gha.RandomToken()
	io.WriteString(s.w, "::stop-commands::"+s.fence+"\n")
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.fence != "" {
			io.WriteString(s.w, "::"+s.fence+"::\n")
			s.fence = ""
		}
	}
}

// addMask registers forms with the runner's masker, one line of each at a
// time, raw (through the redactor the value would be ***), outside any
// ::stop-commands:: block.
func (s *stdout) addMask(forms []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, f := range forms {
		for _, line := range strings.FieldsFunc(f, func(c rune) bool { return c == '\n' || c == '\r' }) {
			if strings.TrimSpace(line) == "" || s.seen[line] {
				continue
			}
			s.seen[line] = true
			b.WriteString(gha.Command("add-mask", nil, line) + "\n")
		}
	}
	if b.Len() == 0 {
		return
	}
	if s.fence != "" {
		io.WriteString(s.w, "::"+s.fence+"::\n")
		s.fence = gha.RandomToken()
		io.WriteString(s.w, b.String()+"::stop-commands::"+s.fence+"\n")
		return
	}
	io.WriteString(s.w, b.String())
}
