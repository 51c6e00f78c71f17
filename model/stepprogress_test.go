package model

import (
	"context"
	"testing"
	"time"
)

func TestStepTimeoutOnlyForTheStepsOwnDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dl, _ := ctx.Deadline()
	step := WithStepTimeout(ctx, dl, time.Minute)
	if got := StepTimeout(step); got != time.Minute {
		t.Errorf("StepTimeout of the attempt's context = %s, want 1m", got)
	}
	inner, cancel2 := context.WithTimeout(step, time.Second) // a wait's own, shorter
	defer cancel2()
	if got := StepTimeout(inner); got != 0 {
		t.Errorf("StepTimeout under a shorter deadline = %s, want 0", got)
	}
	if got := StepTimeout(context.Background()); got != 0 {
		t.Errorf("StepTimeout without a step = %s, want 0", got)
	}
}
