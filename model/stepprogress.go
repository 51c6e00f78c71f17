package model

import "context"

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
