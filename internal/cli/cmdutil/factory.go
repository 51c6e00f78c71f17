package cmdutil

import (
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/cli/iostreams"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/report"
)

// Factory is handed to every command constructor. The streams are already
// wrapped by Redactor when a command runs.
type Factory struct {
	IOStreams *iostreams.IOStreams
	Redactor  *redact.Redactor
	Global    GlobalFlags
	// Logger writes to LogSink; set once flags are parsed.
	Logger *slog.Logger
	// LogSink is where log records go: the redacted stderr, or above the
	// live view while one is on screen.
	LogSink *LogSink
	// Now is the clock renderers use; tests fix it.
	Now func() time.Time
	// Version is khook's version, for the state record and reports.
	Version string
}

// GlobalFlags are accepted by every command.
type GlobalFlags struct {
	Kubeconfig string
	Context    string
	LogLevel   string
	LogFormat  string
}

// NewLogger builds the slog logger the flags ask for, writing whole records
// per Write to w (the redacted stderr).
func NewLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lvl slog.Level
	switch strings.ToLower(level) {
	case "debug":
		lvl = slog.LevelDebug
	case "info", "":
		lvl = slog.LevelInfo
	case "warn", "warning":
		lvl = slog.LevelWarn
	case "error":
		lvl = slog.LevelError
	default:
		return nil, FlagErrorf("--log-level %q is not a level: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch format {
	case "text", "":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, FlagErrorf("--log-format %q is not a format: use text or json", format)
}

// Output formats of -o/--output.
const (
	OutputText = "text"
	OutputJSON = "json"
)

// CheckOutput validates an -o value against the formats a command supports.
func CheckOutput(value string, allowed ...string) error {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	return FlagErrorf("-o/--output %q is not supported here: use %s", value, strings.Join(allowed, " or "))
}

// AddOutputFlag registers -o/--output (text by default).
func AddOutputFlag(cmd *cobra.Command, target *string) {
	cmd.Flags().StringVarP(target, "output", "o", OutputText, "output format: text or json (one JSON document on stdout; logs stay on stderr)")
}

// WriteJSON writes v as one JSON document.
func WriteJSON(w io.Writer, v any) error { return report.WriteJSON(w, v) }

// NoArgs rejects positional arguments as a usage error (exit 2).
func NoArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return FlagErrorf("%s takes no arguments, got %q (spec files go in -f/--file)", cmd.CommandPath(), args)
	}
	return nil
}

// NewFactory wraps ios with a fresh redactor (before anything is printed)
// and returns the factory commands share. The logger writes text at info
// level until the global flags say otherwise.
func NewFactory(ios *iostreams.IOStreams) *Factory {
	r := redact.New()
	ios.Wrap(r.Writer)
	sink := &LogSink{w: ios.ErrOut}
	return &Factory{
		IOStreams: ios,
		Redactor:  r,
		Logger:    slog.New(slog.NewTextHandler(sink, nil)),
		LogSink:   sink,
		Now:       time.Now,
	}
}

// LogSink is a writer whose destination can be switched while in use.
type LogSink struct {
	mu sync.Mutex
	w  io.Writer
}

// Write passes one log record on to the current destination.
func (s *LogSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	w := s.w
	s.mu.Unlock()
	return w.Write(p)
}

// Redirect sends records to w until the returned function restores the
// previous destination.
func (s *LogSink) Redirect(w io.Writer) (restore func()) {
	s.mu.Lock()
	prev := s.w
	s.w = w
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.w = prev
		s.mu.Unlock()
	}
}

// WriterFunc adapts a function to io.Writer.
type WriterFunc func(p []byte) (int, error)

func (f WriterFunc) Write(p []byte) (int, error) { return f(p) }

// ProgressView picks where a run's progress goes: with -o json, log lines
// on stderr (stdout holds only the document); on a terminal that can
// redraw and is tall enough for one line per step, the live view;
// otherwise (piped, TERM=dumb, too many steps) one log line per state change.
func (f *Factory) ProgressView(output string, steps []report.StepInfo) report.Progress {
	ios := f.IOStreams
	fits := ios.TerminalHeight() == 0 || len(steps) < ios.TerminalHeight()
	switch {
	case output == OutputJSON:
		return report.NewLogView(ios.ErrOut, steps)
	case ios.CanRedraw() && fits:
		return report.NewFrameView(ios.Out, steps, report.FrameOptions{Color: ios.ColorEnabled(), Width: ios.TerminalWidth(), Now: f.Now})
	}
	return report.NewLogView(ios.Out, steps)
}
