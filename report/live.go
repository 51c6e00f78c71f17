package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/khook/khook/model"
)

// FrameOptions configure the terminal view.
type FrameOptions struct {
	Color bool             // ANSI colours (off under NO_COLOR)
	Width int              // terminal columns; lines are cut to fit so redraws stay aligned
	Now   func() time.Time // clock for running steps' elapsed time
}

// FrameView is the terminal output: one line per step, redrawn in place
// with ANSI cursor movement on every event and Tick. Use it only on a
// terminal that is not TERM=dumb; elsewhere use LogView.
type FrameView struct {
	mu    sync.Mutex
	w     io.Writer
	t     *tracker
	opts  FrameOptions
	drawn int // lines of the last frame, to move back over
}

// NewFrameView draws the initial frame: every step pending (or skipped when
// excluded).
func NewFrameView(w io.Writer, steps []StepInfo, opts FrameOptions) *FrameView {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Width <= 0 {
		opts.Width = 80
	}
	v := &FrameView{w: w, t: newTracker(steps), opts: opts}
	v.mu.Lock()
	v.redraw()
	v.mu.Unlock()
	return v
}

// Handle applies an event and redraws.
func (v *FrameView) Handle(ev model.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.t.apply(ev)
	v.redraw()
}

// Tick redraws so running steps' elapsed time moves; the CLI calls it
// about once a second.
func (v *FrameView) Tick() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.redraw()
}

// Finish settles every step from the results, draws the last frame, then
// prints failed steps' full errors and the closing line below it.
func (v *FrameView) Finish(r *model.Results) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, s := range r.Steps {
		st := v.t.byKey[s.Name]
		if st == nil {
			st = v.t.add(StepInfo{Name: s.Name, Type: s.Type})
		}
		v.t.settle(st, s)
	}
	v.redraw()
	var b bytes.Buffer
	writeFailures(&b, r, true)
	writeStepWarnings(&b, r)
	b.WriteString(ResultsLine(r))
	b.WriteByte('\n')
	_, err := v.w.Write(b.Bytes())
	return err
}

// Above prints p (whole log lines) above the live lines: the frame is
// erased, p goes to w (stderr, on the same terminal), and the frame is
// drawn again below it, so log output never corrupts the redraw.
func (v *FrameView) Above(w io.Writer, p []byte) (int, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.drawn > 0 {
		fmt.Fprintf(v.w, "\x1b[%dA\r"+ansiClearDown, v.drawn)
		v.drawn = 0
	}
	n, err := w.Write(p)
	v.redraw()
	return n, err
}

// ANSI sequences the view uses.
const (
	ansiReset     = "\x1b[0m"
	ansiClearLine = "\x1b[2K"
	ansiClearDown = "\x1b[J"
)

var statusColor = map[model.Status]string{
	model.StatusPending: "\x1b[2m",
	model.StatusRunning: "\x1b[36m",
	model.StatusOK:      "\x1b[32m",
	model.StatusFailed:  "\x1b[31m",
	model.StatusSkipped: "\x1b[33m",
}

// redraw writes one frame in a single Write: back up over the last frame,
// then clear and write each step's line.
func (v *FrameView) redraw() {
	nameW, typeW := 0, 0
	for _, st := range v.t.order {
		nameW = max(nameW, len(st.info.Name))
		typeW = max(typeW, len(st.info.Type))
	}
	var b bytes.Buffer
	if v.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", v.drawn)
	}
	now := v.opts.Now()
	for _, st := range v.t.order {
		b.WriteString("\r" + ansiClearLine)
		b.WriteString(v.line(st, now, nameW, typeW))
		b.WriteByte('\n')
	}
	v.drawn = len(v.t.order)
	v.w.Write(b.Bytes())
}

// line is one step: "  running  cilium  helm  12.0s  attempt 2/3  <note>",
// cut to the terminal width before colour is added.
func (v *FrameView) line(st *stepState, now time.Time, nameW, typeW int) string {
	elapsed := ""
	switch st.status {
	case model.StatusRunning:
		if !st.started.IsZero() {
			elapsed = model.FormatDuration(now.Sub(st.started))
		}
	case model.StatusOK, model.StatusFailed:
		elapsed = model.FormatDuration(st.duration)
	}
	status := fmt.Sprintf("%-8s", st.status)
	rest := fmt.Sprintf(" %-*s  %-*s  %7s", nameW, st.info.Name, typeW, st.info.Type, elapsed)
	if a := st.attemptText(); a != "" {
		rest += "  " + a
	}
	if st.note != "" {
		rest += "  " + st.note
	}
	rest = strings.TrimRight(rest, " ")
	if room := v.opts.Width - 1 - 2 - len(status); utf8.RuneCountInString(rest) > room {
		rest = truncate(rest, room)
	}
	if v.opts.Color {
		status = statusColor[st.status] + status + ansiReset
	}
	return "  " + status + rest
}

// truncate cuts s to n runes, marking the cut with "…".
func truncate(s string, n int) string {
	r := []rune(s)
	if n <= 0 {
		return ""
	}
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
