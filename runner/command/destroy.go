package command

import (
	"context"
	"time"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner"
	teardown "github.com/khook/khook/runner/destroy"
	"github.com/khook/khook/runner/helmstep"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/selection"
	"github.com/khook/khook/runner/state"
	"github.com/khook/khook/runner/steps"
	"github.com/khook/khook/spec"
)

// DestroyCommand undoes what Apply installed, walking the DAG in reverse, and
// deletes the state record after a full success.
type DestroyCommand struct {
	Config      *Configuration
	Parallelism int
	LockTimeout time.Duration
	// Started is called once connected, just before the first teardown, and
	// returns where events go (nil: nowhere).
	Started func() func(model.Event)
	// Selection picks the steps to tear down (nil: every step); a target
	// brings every step that needs it, torn down first.
	Selection *model.Selection
}

// Run tears s down and returns the results; a teardown that could not
// start returns its error as Apply.Run does.
func (d *DestroyCommand) Run(ctx context.Context, s *spec.Spec) (*model.Results, error) {
	if d.Config == nil {
		d.Config = &Configuration{}
	}
	cfg := d.Config
	r := cfg.redactor()
	started := cfg.now()
	res := &model.Results{Name: s.Metadata.Name, Command: "destroy", Identifier: s.Metadata.Name, StartedAt: started, Steps: []model.StepResult{}}
	sel, err := selectSteps(s, d.Selection, selection.Dependents)
	if err != nil {
		return res, notStarted(res, err, model.ReasonValidation, r)
	}
	res.Selection = sel
	clients, err := cfg.connect(ctx)
	if err != nil {
		return res, notStarted(res, err, model.ReasonClusterUnreachable, r)
	}
	res.Server = redact.StripURLCredentials(clients.Config.Host)
	sess, err := state.OpenDestroy(ctx, s, state.Options{Client: clients.Typed, Lock: state.LockOptions{Timeout: d.LockTimeout},
		Version: cfg.Version, Redactor: r, Notify: cfg.Notify})
	if err != nil {
		if kube.IsUnreachable(err) {
			err = &Failure{Reason: model.ReasonClusterUnreachable, Err: clients.Explain(err)}
		}
		return res, notStarted(res, err, model.ReasonStepFailed, r)
	}
	if err := checkTargetOnly(s, sel, sess.Record(), selection.Dependents); err != nil {
		sess.Fail()
		_ = sess.Close(context.WithoutCancel(ctx)) // the refusal is the run's error
		return res, notStarted(res, err, model.ReasonValidation, r)
	}
	helm := helmstep.New(clients, s.BaseDir, r)
	defer helm.Close()
	uninstall := func(ctx context.Context, st *spec.Step) (runner.Outcome, error) {
		del := st.Delete
		return helm.Uninstall(ctx, del.Release, del.Namespace, del.IgnoresNotFound())
	}
	exec := steps.NewDeleteExecutor(steps.NewEnv(clients, s.BaseDir, r), steps.ReleaseDeleterFunc(uninstall))
	var emit func(model.Event)
	if d.Started != nil {
		emit = d.Started()
	}
	// What steps put in the cluster that the spec no longer has goes first:
	// the teardown below only knows the spec's steps.
	pruned := pruneWith(ctx, clients, s, sess, r, nil, emit)
	res.Steps = teardown.Run(ctx, s, teardown.Options{
		Delete: exec, Emit: emit, OnFinish: sess.OnFinish, Parallelism: d.Parallelism,
		Configure: func(e *runner.Engine) { e.Redactor = r },
	})
	res.Steps = append(pruned, res.Steps...)
	// The record is deleted (or kept) even when the run was cancelled.
	finish(ctx, res, sess.Close(context.WithoutCancel(ctx)), r)
	res.DurationMs = cfg.now().Sub(started).Milliseconds()
	return res, nil
}
