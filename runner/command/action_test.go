package command

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/state"
)

// One mechanism names a run-level error's failure reason.
func TestReasonOf(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, "fallback"},
		{errors.New("anything else"), "fallback"},
		{&Failure{Reason: model.ReasonStateLocked, Err: errors.New("x")}, model.ReasonStateLocked},
		{fmt.Errorf("open: %w", &Failure{Reason: model.ReasonClusterUnreachable, Err: errors.New("x")}), model.ReasonClusterUnreachable},
		{fmt.Errorf("open: %w", &state.LockedError{}), model.ReasonStateLocked},
		{&kube.UnreachableError{Msg: "cannot reach"}, model.ReasonClusterUnreachable},
		{fmt.Errorf("stopped: %w", context.Canceled), model.ReasonCancelled},
	} {
		if got := ReasonOf(tc.err, "fallback"); got != tc.want {
			t.Errorf("ReasonOf(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
