package helmstep

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Only a dropped or refused connection starts a step over; rejected
// credentials, time-outs and ordinary failures do not.
func TestLostConnection(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("install failed: %w", refused), true},
		{errors.New(`failed to create resource: Post "https://x/api": http2: server sent GOAWAY and closed the connection`), true},
		{errors.New("failed to create resource: unexpected EOF"), true},
		{apierrors.NewUnauthorized("Unauthorized"), false},
		{fmt.Errorf("wait: %w", context.DeadlineExceeded), false},
		{apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "x"), false},
		{errors.New("template: demo/templates/x.yaml:3: function \"nope\" not defined"), false},
	} {
		if got := lostConnection(tc.err); got != tc.want {
			t.Errorf("lostConnection(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
