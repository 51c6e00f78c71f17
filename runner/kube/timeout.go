package kube

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/khook/khook/model"
	"github.com/khook/khook/words"
)

// WaitError is how a wait that ended before its condition held says so: a
// *TimeoutError when ctx's deadline passed, else that it was cancelled.
// target names what was awaited ("deployment.apps/web in demo").
func WaitError(ctx context.Context, start time.Time, what, target string, pending string) error {
	elapsed := RoundElapsed(time.Since(start))
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		if d := model.StepTimeout(ctx); d > 0 {
			elapsed = d // the step's time ran out, however late the wait began
		}
		return &TimeoutError{Elapsed: elapsed, What: what, Target: target, Pending: pending}
	}
	return fmt.Errorf("cancelled after %s waiting for %s on %s: %s", words.ShortDuration(elapsed), what, target, pending)
}

// TimeoutError is a wait that ran out of time; it says what was still unmet.
type TimeoutError struct {
	Elapsed time.Duration
	What    string
	Target  string
	Pending string
}

func (e *TimeoutError) Error() string {
	if e.Target == "" {
		return fmt.Sprintf("timed out after %s waiting for %s: %s", words.ShortDuration(e.Elapsed), e.What, e.Pending)
	}
	return fmt.Sprintf("timed out after %s waiting for %s on %s: %s", words.ShortDuration(e.Elapsed), e.What, e.Target, e.Pending)
}

// Unwrap makes errors.Is(err, context.DeadlineExceeded) hold.
func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

// RoundElapsed rounds a time a wait took as its messages print it.
func RoundElapsed(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}
