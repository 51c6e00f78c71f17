package report

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
)

// Progress turns the engine's events into output while a run goes on, and
// prints the outcome once it is over. LogView and LiveView implement it.
type Progress interface {
	Handle(ev model.Event)
	Finish(r *model.Results) error
}

// stepState is what a view knows of one step.
type stepState struct {
	info     StepInfo
	status   model.Status
	attempt  int
	started  time.Time // first attempt
	duration time.Duration
	note     string // last message, error or skip reason, first line only
}

// tracker folds events into per-step state; both views share it.
type tracker struct {
	order []*stepState
	byKey map[string]*stepState
}

func newTracker(steps []StepInfo) *tracker {
	t := &tracker{byKey: map[string]*stepState{}}
	for _, info := range steps {
		t.add(info)
	}
	return t
}

func (t *tracker) add(info StepInfo) *stepState {
	if info.MaxAttempts < 1 {
		info.MaxAttempts = 1
	}
	st := &stepState{info: info, status: model.StatusPending}
	if info.Skip.Excluded() {
		st.status = model.StatusSkipped
		st.note = excludedNote(info.Skip)
	}
	t.order = append(t.order, st)
	t.byKey[info.Name] = st
	return st
}

// apply updates the step an event is about and returns it; a step the view
// was not told about is added rather than dropped.
func (t *tracker) apply(ev model.Event) *stepState {
	st := t.byKey[ev.Step]
	if st == nil {
		st = t.add(StepInfo{Name: ev.Step})
	}
	switch ev.Kind {
	case model.EventStarted:
		st.status = model.StatusRunning
		st.attempt = max(ev.Attempt, 1)
		if st.started.IsZero() {
			st.started = ev.Time
		}
		st.note = ""
	case model.EventRetrying:
		st.attempt = max(ev.Attempt, st.attempt)
		st.note = firstLine(ev.Message)
	case model.EventMessage:
		st.note = firstLine(ev.Message)
	case model.EventFinished:
		if ev.Result != nil {
			t.settle(st, *ev.Result)
		}
	}
	return st
}

// settle records a step's final result.
func (t *tracker) settle(st *stepState, r model.StepResult) {
	st.status = r.Status
	if r.Attempts > 0 {
		st.attempt = r.Attempts
	}
	if r.Type != "" {
		st.info.Type = r.Type
	}
	st.duration = time.Duration(r.DurationMs) * time.Millisecond
	st.note = stepDetail(r)
}

func (st *stepState) attemptText() string {
	if st.attempt == 0 || (st.info.MaxAttempts <= 1 && st.attempt == 1) {
		return ""
	}
	return fmt.Sprintf("attempt %d/%d", st.attempt, max(st.info.MaxAttempts, st.attempt))
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// LogView is the piped output: one log line per state change, then the final
// table. Each line is one Write.
type LogView struct {
	mu sync.Mutex
	w  io.Writer
	t  *tracker
}

// NewLogView starts a piped view of the given steps.
func NewLogView(w io.Writer, steps []StepInfo) *LogView {
	return &LogView{w: w, t: newTracker(steps)}
}

// Handle prints the line an event deserves:
// "12:00:01 step cilium: running (attempt 1/3)".
func (v *LogView) Handle(ev model.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	st := v.t.apply(ev)
	var msg string
	switch ev.Kind {
	case model.EventStarted:
		msg = "running"
		if a := st.attemptText(); a != "" {
			msg += " (" + a + ")"
		}
	case model.EventRetrying, model.EventMessage:
		msg = ev.Message // the engine's own words: "attempt 1 of 3 failed, retrying in 10s: ..."
	case model.EventFinished:
		msg = string(st.status)
		if st.status != model.StatusSkipped {
			msg += " in " + model.FormatDuration(st.duration)
		}
		if st.attempt > 1 {
			msg += fmt.Sprintf(" after %d attempts", st.attempt)
		}
		if ev.Result != nil {
			if d := detailOf(*ev.Result); d != "" {
				msg += ": " + d
			}
		}
	default:
		msg = ev.Message
	}
	line := fmt.Sprintf("%s step %s: %s\n", ev.Time.Format("15:04:05"), ev.Step, msg)
	io.WriteString(v.w, line)
}

// detailOf is the whole error, skip reason or detail of a result.
func detailOf(r model.StepResult) string {
	switch {
	case r.Error != "":
		return r.Error
	case r.SkipReason != "":
		return r.SkipReason
	}
	return r.Detail
}

// Finish prints the final table.
func (v *LogView) Finish(r *model.Results) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return WriteResultsTable(v.w, r)
}

// StepInfos lists a spec's steps as the progress views need them.
func StepInfos(s *spec.Spec) []StepInfo {
	infos := make([]StepInfo, len(s.Steps))
	for i, st := range s.Steps {
		infos[i] = StepInfo{Name: st.Name, Type: st.Type(), MaxAttempts: st.Retries + 1, Skip: st.Skip}
	}
	return infos
}
