package command

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/dispatch"
	"github.com/khook/khook/runner/helmstep"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/manifest"
	"github.com/khook/khook/runner/planfile"
	"github.com/khook/khook/runner/selection"
	"github.com/khook/khook/runner/state"
	"github.com/khook/khook/spec"
)

// ApplyCommand runs a spec's steps against the cluster.
type ApplyCommand struct {
	Config      *Configuration
	Parallelism int // 0: the engine's default
	// LockTimeout is how long to wait for a state record another run holds.
	LockTimeout time.Duration
	// Started is called once connected, just before the first step, and
	// returns where events go (nil: nowhere). It is not called when the run
	// never starts.
	Started func() func(model.Event)
	// Backend builds what the run needs from the cluster; nil is
	// ClusterBackend. Tests pass executors of their own.
	Backend BackendFunc
	// Expect, when set, is the reviewed plan (apply --plan): once the
	// backend holds the state lock and before the first step, the spec is
	// planned again and any difference from Expect in what its fingerprint
	// covers refuses the run, nothing written, with a *planfile.ChangedError
	// (failure reason plan-changed). Without state: there is no lock, and
	// the check runs just before the first step.
	Expect *planfile.File
	// Selection picks the steps to run (--target, --selector ...; nil:
	// every step): the others are reported not selected and their state
	// record entries stay untouched. With Expect, it is the saved plan's.
	Selection *model.Selection
	// Reconcile runs every step whatever the state record says (apply
	// --reconcile): nothing resumes.
	Reconcile bool
}

// Backend is what a run needs from the cluster side.
type Backend struct {
	Exec runner.Executor
	// Clients reach the cluster for Apply.Expect's check (nil: a backend
	// that cannot check a plan).
	Clients *kube.Clients
	Server  string // API server URL, credentials stripped, for the results
	// Resume, when set, lets the state record skip unchanged steps.
	Resume func(step *spec.Step) (reason string, skip bool)
	// OnFinish, when set, journals each step's result as it is known.
	OnFinish func(model.StepResult)
	// Close releases what the backend holds; it may return the error of
	// a final write (the state record), which fails the run.
	Close func() error
	// Fail, when set, marks a run that is refused before its first step
	// (then Close is called).
	Fail func()
	// Prune, when set, prunes after the steps what the spec no longer has
	// (runner/prune) and returns a result per step it pruned for.
	Prune func(ctx context.Context, results []model.StepResult, emit func(model.Event)) []model.StepResult
	// Previous is the state record as the last run left it (nil: none),
	// for --target-only's check.
	Previous *state.Record
}

// BackendFunc connects to the cluster, opens the state record and builds
// the executors. Its error names its failure reason (see ReasonOf).
type BackendFunc func(ctx context.Context, a *ApplyCommand, s *spec.Spec) (*Backend, error)

// Run connects, runs every step and returns the results. A run that could
// not start returns its error, and results with no steps that carry the
// failure reason and the (redacted) error too.
func (a *ApplyCommand) Run(ctx context.Context, s *spec.Spec) (*model.Results, error) {
	if a.Config == nil {
		a.Config = &Configuration{}
	}
	cfg := a.Config
	r := cfg.redactor()
	started := cfg.now()
	ctx = kube.WithLiveCache(ctx) // one run: one LIST per resource and namespace
	res := &model.Results{Name: s.Metadata.Name, Command: "apply", Identifier: s.Metadata.Name, StartedAt: started, Steps: []model.StepResult{}}
	if a.Expect != nil && a.Selection == nil {
		a.Selection = a.Expect.Plan.Selection // apply --plan runs exactly the reviewed selection
	}
	sel, err := selectSteps(s, a.Selection, selection.Needs)
	if err != nil {
		return res, notStarted(res, err, model.ReasonValidation, r)
	}
	res.Selection = sel
	if a.Expect != nil {
		if err := refuseFailedPlan(a.Expect.Plan); err != nil {
			return res, notStarted(res, err, model.ReasonStepFailed, r)
		}
	}
	// sops files are opened before anything connects or writes.
	if problems := manifest.OpenEncrypted(s, r); len(problems) > 0 {
		return res, notStarted(res, problems, model.ReasonStepFailed, r)
	}
	connect := a.Backend
	if connect == nil {
		connect = ClusterBackend
	}
	backend, err := connect(ctx, a, s)
	if err != nil {
		return res, notStarted(res, err, model.ReasonStepFailed, r)
	}
	res.Server = backend.Server
	if err := checkTargetOnly(s, sel, backend.Previous, selection.Needs); err != nil {
		if backend.Fail != nil {
			backend.Fail()
		}
		if backend.Close != nil {
			_ = backend.Close() // the refusal is the run's error
		}
		return res, notStarted(res, err, model.ReasonValidation, r)
	}
	if a.Expect == nil && hasPolicies(s) {
		if err := a.checkPolicies(ctx, s, backend); err != nil {
			if backend.Fail != nil {
				backend.Fail()
			}
			if backend.Close != nil {
				_ = backend.Close() // the refusal is the run's error
			}
			return res, notStarted(res, err, model.ReasonStepFailed, r)
		}
	}
	if a.Expect != nil {
		if err := a.checkPlan(ctx, s, backend); err != nil {
			if backend.Fail != nil {
				backend.Fail()
			}
			if backend.Close != nil {
				_ = backend.Close() // the refusal is the run's error
			}
			return res, notStarted(res, err, model.ReasonStepFailed, r) // a ChangedError names plan-changed
		}
	}
	var emit func(model.Event)
	if a.Started != nil {
		emit = a.Started()
	}
	eng := runner.ForSpec(s, backend.Exec)
	eng.Parallelism = a.Parallelism
	eng.Redactor = r
	eng.WarningsAsErrors = a.Config.WarningsAsErrors
	eng.Emit = emit
	eng.Resume = backend.Resume
	var drifted map[string]string
	switch {
	case a.Reconcile:
		eng.Resume = nil
	case a.Expect != nil && backend.Resume != nil:
		eng.Resume = resumeUnchanged(a.Expect.Plan, backend.Resume)
	case backend.Resume != nil:
		eng.Resume, drifted = a.resumeUndrifted(ctx, s, backend)
	}
	eng.OnFinish = backend.OnFinish
	res.Steps = eng.Run(ctx)
	sayRepaired(res.Steps, drifted)
	if backend.Prune != nil {
		res.Steps = append(res.Steps, backend.Prune(ctx, res.Steps, emit)...)
	}
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
func ClusterBackend(ctx context.Context, a *ApplyCommand, s *spec.Spec) (*Backend, error) {
	clients, err := a.Config.connect(ctx)
	if err != nil {
		return nil, err
	}
	r := a.Config.redactor()
	sess, err := state.Open(ctx, s, state.Options{Client: clients.Typed, Lock: state.LockOptions{Timeout: a.LockTimeout},
		Version: a.Config.Version, Redactor: r, Notify: a.Config.Notify})
	if err != nil {
		if kube.IsUnreachable(err) {
			err = &Failure{Reason: model.ReasonClusterUnreachable, Err: clients.Explain(err)}
		}
		return nil, err // a LockedError names state-locked itself
	}
	// Holding the state lock proves no other khook run is on the spec's
	// releases: the helm executor may then recover one an interrupted run
	// left pending (docs/recovery.md).
	exec := dispatch.New(clients, s.BaseDir, r, helmstep.WithStateLock(sess.Held))
	return &Backend{
		Prune: func(ctx context.Context, results []model.StepResult, emit func(model.Event)) []model.StepResult {
			return pruneWith(ctx, clients, s, sess, r, results, emit)
		},
		Exec:     exec,
		Clients:  clients,
		Fail:     sess.Fail,
		Server:   redact.StripURLCredentials(clients.Config.Host),
		Resume:   sess.Resume,
		OnFinish: sess.OnFinish,
		Previous: sess.Record(),
		Close: func() error {
			exec.Close()
			// The record is written even when the run was cancelled.
			return sess.Close(context.WithoutCancel(ctx))
		},
	}, nil
}

// checkPlan plans s again and holds it to the reviewed plan: a
// *planfile.ChangedError names every difference.
func (a *ApplyCommand) checkPlan(ctx context.Context, s *spec.Spec, b *Backend) error {
	if b.Clients == nil {
		return errors.New("apply --plan: this backend cannot reach the cluster to check the plan")
	}
	now, err := a.Config.livePlan(ctx, b.Clients, s, false)
	if err != nil {
		return fmt.Errorf("apply --plan: cannot plan again to check the reviewed plan: %w", err)
	}
	if err := refuseDenied(now); err != nil {
		return err // the policies in force now, whatever the saved plan says
	}
	if changes := a.Expect.Changes(now); len(changes) > 0 {
		return &planfile.ChangedError{Fingerprint: a.Expect.Plan.Fingerprint, Now: now.Fingerprint, Changes: changes}
	}
	return nil
}

// resumeUnchanged lets the state record skip only steps the plan
// predicted no change for: a change that was planned (an object drifted
// since the step last succeeded) is applied, not resumed past, and so is
// a step planned fail or unknown (plan = apply: apply fails where plan
// did, and never calls such a step done).
func resumeUnchanged(p *model.Plan, resume func(*spec.Step) (string, bool)) func(*spec.Step) (string, bool) {
	planned := map[string]model.Action{}
	for _, ps := range p.Steps {
		planned[ps.Name] = ps.Action
	}
	return func(st *spec.Step) (string, bool) {
		if mustRun(planned[st.Name]) {
			return "", false
		}
		return resume(st)
	}
}

// mustRun reports whether a step planned action is run even when the
// state record would resume it: a change, or a plan that predicts a
// failure or cannot tell.
func mustRun(action model.Action) bool {
	return model.IsChange(action) || action == model.ActionFail || action == model.ActionUnknown
}
