// Package dispatch wires every step type to its executor: the Kubernetes
// ones in runner/steps, helm (and delete.release, a helm uninstall) in
// runner/helmstep. The engine sees one runner.Executor.
//
// May import: runner, runner/steps, runner/helmstep, runner/kube, spec,
// redact.
package dispatch

import (
	"context"
	"fmt"

	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/helmstep"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/steps"
	"github.com/khook/khook/spec"
)

// Dispatcher runs each step with the executor of its type. It is safe for
// the concurrent use the engine makes of it; Close it after the run.
type Dispatcher struct {
	byType map[string]runner.Executor
	helm   *helmstep.Executor
}

// New builds every executor of one run from the run's clients, the spec's
// base directory (relative paths) and the run's redactor. Options go to the
// helm executor.
func New(clients *kube.Clients, baseDir string, r *redact.Redactor, helmOpts ...helmstep.Option) *Dispatcher {
	env := steps.NewEnv(clients, baseDir, r)
	helm := helmstep.New(clients, baseDir, r, helmOpts...)
	return &Dispatcher{
		helm: helm,
		byType: map[string]runner.Executor{
			spec.TypeHelm:    helm,
			spec.TypeApply:   steps.NewApplyExecutor(env),
			spec.TypeDelete:  steps.NewDeleteExecutor(env, releases{helm}),
			spec.TypePatch:   steps.NewPatchExecutor(env),
			spec.TypeWait:    steps.NewWaitExecutor(env),
			spec.TypeRollout: steps.NewRolloutExecutor(env),
			spec.TypeJob:     steps.NewJobExecutor(env),
		},
	}
}

// Execute runs one attempt of st with the executor of its type.
func (d *Dispatcher) Execute(ctx context.Context, st *spec.Step) (runner.Outcome, error) {
	x, ok := d.byType[st.Type()]
	if !ok {
		return runner.Outcome{}, fmt.Errorf("step %s has no action (one of %v) — the spec was not validated", st.Name, spec.StepTypes)
	}
	return x.Execute(ctx, st)
}

// Plan predicts st with the executor of its type (runner.Planner): its
// Execute's path with a server-side dry run.
func (d *Dispatcher) Plan(ctx context.Context, st *spec.Step, in runner.PlanInput) (runner.Prediction, error) {
	x, ok := d.byType[st.Type()].(runner.Planner)
	if !ok {
		return runner.Prediction{}, fmt.Errorf("step %s has no action (one of %v) — the spec was not validated", st.Name, spec.StepTypes)
	}
	return x.Plan(ctx, st, in)
}

// Helm is the run's helm executor (pruning uninstalls through it).
func (d *Dispatcher) Helm() *helmstep.Executor { return d.helm }

// releases is delete.release through the helm executor: an uninstall, or
// its prediction.
type releases struct{ helm *helmstep.Executor }

func (r releases) DeleteRelease(ctx context.Context, st *spec.Step) (runner.Outcome, error) {
	d := st.Delete
	return r.helm.Uninstall(ctx, d.Release, spec.NamespaceOrDefault(d.Namespace), d.IgnoresNotFound())
}

func (r releases) PlanDeleteRelease(ctx context.Context, st *spec.Step) (runner.Prediction, error) {
	return r.helm.PlanDeleteRelease(ctx, st)
}

// Close releases what the executors hold (Helm's temporary directory).
func (d *Dispatcher) Close() error { return d.helm.Close() }
