package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Refused fails closed (#39): every answer of the API server about an
// object is a refusal with the server's message; only no answer (the
// server unreachable, the run's context ending) or not found is not.
func TestRefusedFailsClosed(t *testing.T) {
	cm := schema.GroupResource{Resource: "configmaps"}
	webhook := apierrors.NewInternalError(errors.New(`failed calling webhook "broken.example.com": failed to call webhook: Post "https://127.0.0.1:1/validate": dial tcp 127.0.0.1:1: connect: connection refused`))
	for _, c := range []struct {
		name    string
		err     error
		refused bool
		reason  string
	}{
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "x", nil), true, ""},
		{"forbidden", apierrors.NewForbidden(cm, "x", errors.New("denied by policy")), true, "denied by policy"},
		{"quota", apierrors.NewForbidden(cm, "x", errors.New("exceeded quota: q, requested: configmaps=1, used: configmaps=1, limited: configmaps=1")), true, "exceeded quota"},
		{"webhook failed (500)", webhook, true, "failed calling webhook"},
		{"webhook timed out (504)", apierrors.NewTimeoutError(`failed calling webhook "slow.example.com": context deadline exceeded`, 0), true, "context deadline exceeded"},
		{"conflict", apierrors.NewConflict(cm, "x", errors.New("the object has been modified")), true, "the object has been modified"},
		{"unavailable (503)", apierrors.NewServiceUnavailable("the aggregated API is unavailable"), true, "unavailable"},
		{"too many requests", apierrors.NewTooManyRequests("slow down", 1), true, "slow down"},
		{"wrapped", fmt.Errorf("release x: %w", webhook), true, "failed calling webhook"},
		{"not found", apierrors.NewNotFound(cm, "x"), false, ""},
		{"unauthorized", apierrors.NewUnauthorized("expired"), false, ""},
		{"unreachable", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, false, ""},
		{"canceled", context.Canceled, false, ""},
		{"nil", nil, false, ""},
	} {
		r := Refused("ConfigMap demo/x", c.err)
		if (r != nil) != c.refused {
			t.Errorf("%s: Refused = %v, want refused %t", c.name, r, c.refused)
			continue
		}
		if r != nil && (r.Object != "ConfigMap demo/x" || (c.reason != "" && !strings.Contains(r.Error(), c.reason))) {
			t.Errorf("%s: %q, want the object and %q", c.name, r.Error(), c.reason)
		}
	}
}
