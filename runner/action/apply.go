package action

import (
	"context"
	"time"

	"github.com/khook/khook/internal/redact"
	"github.com/khook/khook/report"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/executors"
	"github.com/khook/khook/runner/helmstep"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/state"
	"github.com/khook/khook/spec"
)

// Apply runs a spec's steps against the cluster.
type Apply struct {
	Config      *Configuration
	Parallelism int // 0: the engine's default
	// LockTimeout is how long to wait for a state record another run holds.
	LockTimeout time.Duration
	// Started is called once connected, just before the first step, and
	// returns where events go (nil: nowhere). It is not called when the run
	// never starts.
	Started func() func(report.Event)
	// Backend builds what the run needs from the cluster; nil is
	// ClusterBackend. Tests pass executors of their own.
	Backend BackendFunc
}

// Backend is what a run needs from the cluster side.
type Backend struct {
	Exec   runner.Executor
	Server string // API server URL, credentials stripped, for the results
	// Resume, when set, lets the state record skip unchanged steps.
	Resume func(step *spec.Step) (reason string, skip bool)
	// OnFinish, when set, journals each step's result as it is known.
	OnFinish func(report.StepResult)
	// Close releases what the backend holds; it may return the error of
	// a final write (the state record), which fails the run.
	Close func() error
}

// BackendFunc connects to the cluster, opens the state record and builds
// the executors. Its error names its failure reason (see ReasonOf).
type BackendFunc func(ctx context.Context, a *Apply, s *spec.Spec) (*Backend, error)

// Run connects, runs every step and returns the results. A run that could
// not start returns its error, and results with no steps that carry the
// failure reason and the (redacted) error too.
func (a *Apply) Run(ctx context.Context, s *spec.Spec) (*report.Results, error) {
	if a.Config == nil {
		a.Config = &Configuration{}
	}
	cfg := a.Config
	r := cfg.redactor()
	started := cfg.now()
	ctx = kube.WithLiveCache(ctx) // one run: one LIST per resource and namespace
	res := &report.Results{Name: s.Metadata.Name, Command: "apply", Identifier: s.Metadata.Name, StartedAt: started, Steps: []report.StepResult{}}
	connect := a.Backend
	if connect == nil {
		connect = ClusterBackend
	}
	backend, err := connect(ctx, a, s)
	if err != nil {
		return res, notStarted(res, err, report.ReasonStepFailed, r)
	}
	res.Server = backend.Server
	var emit func(report.Event)
	if a.Started != nil {
		emit = a.Started()
	}
	eng := runner.ForSpec(s, backend.Exec)
	eng.Parallelism = a.Parallelism
	eng.Redactor = r
	eng.Emit = emit
	eng.Resume = backend.Resume
	eng.OnFinish = backend.OnFinish
	res.Steps = eng.Run(ctx)
	var closeErr error
	if backend.Close != nil {
		closeErr = backend.Close()
	}
	finish(ctx, res, closeErr, r)
	res.DurationMs = cfg.now().Sub(started).Milliseconds()
	return res, nil
}

// ClusterBackend is the real backend: the configuration's clients, the
// state record (when the spec keeps one) and the executors of every step
// type.
func ClusterBackend(ctx context.Context, a *Apply, s *spec.Spec) (*Backend, error) {
	clients, err := a.Config.connect(ctx)
	if err != nil {
		return nil, err
	}
	r := a.Config.redactor()
	sess, err := state.Open(ctx, s, state.Options{Client: clients.Typed, Lock: state.LockOptions{Timeout: a.LockTimeout},
		Version: a.Config.Version, Redactor: r})
	if err != nil {
		if kube.IsUnreachable(err) {
			err = &Failure{Reason: report.ReasonClusterUnreachable, Err: clients.Explain(err)}
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
