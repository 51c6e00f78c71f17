package action

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/khook/khook/report"
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
		{&Failure{Reason: report.ReasonStateLocked, Err: errors.New("x")}, report.ReasonStateLocked},
		{fmt.Errorf("open: %w", &Failure{Reason: report.ReasonClusterUnreachable, Err: errors.New("x")}), report.ReasonClusterUnreachable},
		{fmt.Errorf("open: %w", &state.LockedError{}), report.ReasonStateLocked},
		{&kube.UnreachableError{Msg: "cannot reach"}, report.ReasonClusterUnreachable},
		{fmt.Errorf("stopped: %w", context.Canceled), report.ReasonCancelled},
	} {
		if got := ReasonOf(tc.err, "fallback"); got != tc.want {
			t.Errorf("ReasonOf(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
