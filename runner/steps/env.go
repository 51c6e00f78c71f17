// Package steps holds the executors of the Kubernetes-facing step types
// apply, delete, patch, wait and rollout (job lives here too). Each is a
// runner.Executor built from an Env; the engine owns retries and timeouts,
// and every executor honours ctx's deadline.
//
// Each executor has two entry points over one path: Execute, and Plan
// (runner.Planner): the same code with a server-side dry run (DryRun=All)
// where Execute writes and no waits, so plan predicts what apply does and
// fails where it fails, with its sentence. delete.release is delegated to
// a ReleaseDeleter (helm uninstall; its plan a ReleasePlanner).
//
// May import: runner, runner/kube, model, spec, redact; not runner/plan,
// action, executors or state, no renderer.
package steps

import (
	"fmt"

	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/wait"
	"github.com/khook/khook/spec"
)

// Env is what every executor needs: the run's clients, the spec's BaseDir
// (relative file: and kustomize: paths) and the run's redactor.
type Env struct {
	Clients  *kube.Clients
	BaseDir  string
	Redactor *redact.Redactor
	// DiagnoseLimits bound the diagnosis of a failed wait; nil:
	// wait.DefaultDiagnoseLimits.
	DiagnoseLimits *wait.DiagnoseLimits
}

// NewEnv bundles the shared dependencies.
func NewEnv(c *kube.Clients, baseDir string, r *redact.Redactor) Env {
	c.MaskSecretsWith(r, nil)
	return Env{Clients: c, BaseDir: baseDir, Redactor: r}
}

// finish redacts what leaves the executor.
func (e Env) finish(out runner.Outcome, err error) (runner.Outcome, error) {
	out.Detail = e.Redactor.String(out.Detail)
	out.SkipReason = e.Redactor.String(out.SkipReason)
	return out, e.Redactor.Error(err)
}

// wrongStep guards against a dispatcher handing an executor another type.
func wrongStep(st *spec.Step, want string) error {
	return fmt.Errorf("step %s: the %s executor got a %s step", st.Name, want, st.Type())
}
