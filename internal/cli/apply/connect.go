package apply

import (
	"context"
	"time"

	"github.com/khook/khook/internal/cli/version"
	"github.com/khook/khook/internal/redact"
	"github.com/khook/khook/report"
	"github.com/khook/khook/runner/executors"
	"github.com/khook/khook/runner/helmstep"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/state"
	"github.com/khook/khook/spec"
)

// ClusterBackend is the real backend: clients from the kubeconfig, the
// state record (when the spec keeps one) and the executors of every step
// type. lockTimeout is how long to wait for a record another run holds.
func ClusterBackend(r *redact.Redactor, lockTimeout time.Duration) BackendFunc {
	return func(ctx context.Context, t Target, s *spec.Spec) (*Backend, error) {
		clients, err := kube.NewClients(t.Kubeconfig, t.Context)
		if err != nil {
			return nil, reasonError{report.ReasonClusterUnreachable, err}
		}
		return ForClients(ctx, clients, s, r, lockTimeout)
	}
}

// ForClients builds the backend over existing clients (tests pass the
// harness cluster's). It checks the API server answers first, so an
// unreachable cluster fails before any step is reported.
func ForClients(ctx context.Context, clients *kube.Clients, s *spec.Spec, r *redact.Redactor, lockTimeout time.Duration) (*Backend, error) {
	if err := clients.Ping(ctx); err != nil {
		return nil, reasonError{report.ReasonClusterUnreachable, err}
	}
	sess, err := state.Open(ctx, s, state.Options{Client: clients.Typed, Lock: state.LockOptions{Timeout: lockTimeout},
		Version: version.Get().Version, Redactor: r})
	if err != nil {
		if kube.IsUnreachable(err) {
			err = reasonError{report.ReasonClusterUnreachable, clients.Explain(err)}
		}
		return nil, err // a LockedError names state-locked itself
	}
	// Holding the state lock proves no other khook run is on the spec's
	// releases: the helm executor may then recover one an interrupted run
	// left pending (docs/recovery.md).
	exec := executors.New(clients, s.BaseDir, r, helmstep.WithStateLock(sess.Held))
	return &Backend{
		Exec:     exec,
		Server:   redact.StripURLCredentials(clients.Config.Host),
		Resume:   sess.Resume,
		OnFinish: sess.OnFinish,
		Close: func() error {
			exec.Close()
			// The record is written even when the run was cancelled.
			return sess.Close(context.WithoutCancel(ctx))
		},
	}, nil
}

// reasonError names the failure reason of a run-level error.
type reasonError struct {
	reason string
	err    error
}

func (e reasonError) Error() string         { return e.err.Error() }
func (e reasonError) Unwrap() error         { return e.err }
func (e reasonError) FailureReason() string { return e.reason }
