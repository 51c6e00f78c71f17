// Package executors wires every step type to its executor: the Kubernetes
// ones in runner/steps, helm (and delete.release, a helm uninstall) in
// runner/helmstep. The engine sees one runner.Executor.
//
// May import: runner, runner/steps, runner/helmstep, runner/kube, spec,
// redact.
package executors

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
	uninstall := steps.ReleaseDeleterFunc(func(ctx context.Context, st *spec.Step) (runner.Outcome, error) {
		d := st.Delete
		return helm.Uninstall(ctx, d.Release, spec.NamespaceOrDefault(d.Namespace), d.IgnoresNotFound())
	})
	return &Dispatcher{
		helm: helm,
		byType: map[string]runner.Executor{
			spec.TypeHelm:    helm,
			spec.TypeApply:   steps.NewApplyExecutor(env),
			spec.TypeDelete:  steps.NewDeleteExecutor(env, uninstall),
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

// Close releases what the executors hold (Helm's temporary directory).
func (d *Dispatcher) Close() error { return d.helm.Close() }
