package runner

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestTimedOutDropsGoNoise(t *testing.T) {
	for in, want := range map[error]string{
		context.DeadlineExceeded: "timed out after 1s",
		fmt.Errorf("cannot patch configmap/x in namespace a: Patch \"https://127.0.0.1:6443/api/v1/namespaces/a/configmaps/x?fieldManager=khook\": %w", context.DeadlineExceeded): "timed out after 1s: cannot patch configmap/x in namespace a",
		errors.New("timed out after 2m waiting for ready"): "timed out after 2m waiting for ready",
	} {
		if got := timedOut(time.Second, in).Error(); got != want {
			t.Errorf("timedOut(%q) = %q, want %q", in, got, want)
		}
	}
}
