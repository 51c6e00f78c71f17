// Package iostreams is where khook's commands read and write: the process's
// standard streams in production, buffers in tests. Out and ErrOut are the
// redacted writers; nothing else in khook prints.
//
// May import: the standard library only.
package iostreams

import (
	"bytes"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// IOStreams bundles the streams and what is known about the terminal.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	// Environ is the environment commands see (variables, NO_COLOR, TERM).
	Environ []string

	rawOut, rawErrOut io.Writer // before Wrap

	outTTY    bool
	errTTY    bool
	colorable bool
	dumb      bool
	width     int
	height    int
}

// System returns streams bound to the process, with terminal detection.
func System() *IOStreams {
	env := os.Environ()
	ios := &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, Environ: env}
	ios.outTTY = term.IsTerminal(int(os.Stdout.Fd()))
	ios.errTTY = term.IsTerminal(int(os.Stderr.Fd()))
	if ios.outTTY {
		if w, h, err := term.GetSize(int(os.Stdout.Fd())); err == nil {
			ios.width, ios.height = w, h
		}
	}
	ios.detect()
	return ios
}

// Test returns streams over buffers: in is read as stdin, out and errOut
// collect what commands print. Nothing is a terminal unless SetTTY says so.
func Test(in string) (*IOStreams, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: strings.NewReader(in), Out: out, ErrOut: errOut}, out, errOut
}

// SetTTY marks stdout and stderr as terminals (or not), re-detecting colour
// and TERM=dumb from Environ; tests use it to exercise the live view.
func (s *IOStreams) SetTTY(tty bool) {
	s.outTTY, s.errTTY = tty, tty
	s.detect()
}

// detect decides colour and cursor movement from the environment:
// NO_COLOR (any non-empty value) disables colour, TERM=dumb disables both.
func (s *IOStreams) detect() {
	termName := s.Getenv("TERM")
	s.dumb = termName == "dumb"
	s.colorable = s.outTTY && !s.dumb && s.Getenv("NO_COLOR") == ""
}

// Getenv looks a variable up in Environ.
func (s *IOStreams) Getenv(name string) string {
	prefix := name + "="
	v := ""
	for _, kv := range s.Environ {
		if strings.HasPrefix(kv, prefix) {
			v = kv[len(prefix):] // the last one wins, as in os/exec
		}
	}
	return v
}

// IsStdoutTTY reports whether stdout is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.outTTY }

// IsStderrTTY reports whether stderr is a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.errTTY }

// ColorEnabled reports whether output may use ANSI colours.
func (s *IOStreams) ColorEnabled() bool { return s.colorable }

// CanRedraw reports whether stdout may be redrawn in place with ANSI cursor
// movement: a terminal that is not TERM=dumb.
func (s *IOStreams) CanRedraw() bool { return s.outTTY && !s.dumb }

// TerminalWidth is stdout's width in columns, 80 when unknown.
func (s *IOStreams) TerminalWidth() int {
	if s.width > 0 {
		return s.width
	}
	return 80
}

// TerminalHeight is stdout's height in rows, 0 when unknown.
func (s *IOStreams) TerminalHeight() int { return s.height }

// SetSize sets the terminal size tests pretend to have.
func (s *IOStreams) SetSize(width, height int) { s.width, s.height = width, height }

// Wrap replaces Out and ErrOut, e.g. with redacting writers, keeping the
// first originals for Unwrapped.
func (s *IOStreams) Wrap(wrap func(io.Writer) io.Writer) {
	if s.rawOut == nil {
		s.rawOut, s.rawErrOut = s.Out, s.ErrOut
	}
	s.Out = wrap(s.Out)
	s.ErrOut = wrap(s.ErrOut)
}

// Unwrapped returns the streams as they were before Wrap. Only khook ci
// uses them: GitHub's ::add-mask:: lines must carry the raw secret, and ci
// wraps the streams with the same redactor itself for everything else.
func (s *IOStreams) Unwrapped() (out, errOut io.Writer) {
	if s.rawOut == nil {
		return s.Out, s.ErrOut
	}
	return s.rawOut, s.rawErrOut
}
