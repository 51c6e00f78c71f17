package model

import (
	"context"
	"time"
)

type stepProgressKey struct{}

// WithStepProgress returns ctx carrying f, through which an executor's
// wait says what it is blocked on each time that changes ("0 of 1 updated
// replicas are available; pod web-7f9c-x2 Pending: ..."). The engine sets
// it per attempt and turns each call into an EventMessage of the step.
func WithStepProgress(ctx context.Context, f func(string)) context.Context {
	return context.WithValue(ctx, stepProgressKey{}, f)
}

// StepProgress is the function WithStepProgress put in ctx, or nil.
func StepProgress(ctx context.Context) func(string) {
	f, _ := ctx.Value(stepProgressKey{}).(func(string))
	return f
}

type stepBudgetKey struct{}

// stepBudget is an attempt's timeout and the deadline it sets.
type stepBudget struct {
	deadline time.Time
	timeout  time.Duration
}

// WithStepTimeout returns ctx carrying the attempt's timeout and the
// deadline it set. The engine sets it per attempt, so a wait that runs out
// of the step's time says "timed out after <the step's timeout>" in its own
// sentence, however late within the attempt the wait began.
func WithStepTimeout(ctx context.Context, deadline time.Time, timeout time.Duration) context.Context {
	return context.WithValue(ctx, stepBudgetKey{}, stepBudget{deadline, timeout})
}

// StepTimeout is the step's timeout when ctx's deadline is the one the
// attempt set (not a shorter one of the wait's own), or 0.
func StepTimeout(ctx context.Context) time.Duration {
	b, _ := ctx.Value(stepBudgetKey{}).(stepBudget)
	if dl, ok := ctx.Deadline(); ok && b.timeout > 0 && dl.Equal(b.deadline) {
		return b.timeout
	}
	return 0
}
