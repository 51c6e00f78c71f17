package ci

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/khook/khook/model"
)

// timeline keeps when each step started and finished, for GitLab sections.
type timeline struct {
	mu       sync.Mutex
	started  map[string]time.Time
	finished map[string]time.Time
}

func newTimeline() *timeline {
	return &timeline{started: map[string]time.Time{}, finished: map[string]time.Time{}}
}

func (t *timeline) span(step string, fallback time.Time) (time.Time, time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.started[step]
	if !ok {
		s = fallback
	}
	e, ok := t.finished[step]
	if !ok {
		e = s
	}
	return s, e
}

// progress returns the event handler that prints one log line per state
// change and records the timeline.
func (r *runState) progress() func(model.Event) {
	var mu sync.Mutex
	return func(ev model.Event) {
		mu.Lock()
		defer mu.Unlock()
		at := ev.Time
		if at.IsZero() {
			at = r.opts.Now()
		}
		r.timeline.mu.Lock()
		switch ev.Kind {
		case model.EventStarted:
			if _, ok := r.timeline.started[ev.Step]; !ok {
				r.timeline.started[ev.Step] = at
			}
		case model.EventFinished:
			r.timeline.finished[ev.Step] = at
		}
		r.timeline.mu.Unlock()
		var line string
		switch ev.Kind {
		case model.EventStarted:
			line = fmt.Sprintf("%s started (attempt %d)", ev.Step, max(ev.Attempt, 1))
		case model.EventRetrying:
			line = fmt.Sprintf("%s attempt %d failed, retrying: %s", ev.Step, ev.Attempt, ev.Message)
		case model.EventMessage:
			line = fmt.Sprintf("%s: %s", ev.Step, ev.Message)
		case model.EventFinished:
			if ev.Result == nil {
				return
			}
			res := *ev.Result
			d := model.FormatDuration(time.Duration(res.DurationMs) * time.Millisecond)
			switch res.Status {
			case model.StatusFailed:
				line = fmt.Sprintf("%s failed after %s: %s", ev.Step, d, res.Error)
			case model.StatusSkipped:
				line = fmt.Sprintf("%s skipped: %s", ev.Step, res.SkipReason)
			default:
				line = fmt.Sprintf("%s %s in %s", ev.Step, res.Status, d)
				if res.Detail != "" {
					line += ": " + res.Detail
				}
			}
		default:
			return
		}
		io.WriteString(r.out, at.UTC().Format("15:04:05")+" "+line+"\n")
	}
}

// note prints one line the run says besides its steps' progress (the
// state record converted from upstream khook's), timed as progress is.
func (r *runState) note(msg string) {
	io.WriteString(r.out, r.opts.Now().UTC().Format("15:04:05")+" "+msg+"\n")
}
