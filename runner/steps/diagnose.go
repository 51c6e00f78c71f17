package steps

import (
	"context"
	"time"

	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/kube/wait"
)

// diagnose attaches to a failed attempt's outcome what it was waiting on
// and why that is stuck (wait.Diagnose). The original error is untouched:
// a diagnosis adds to it, never replaces it. since is when the step began
// (the events that count are the later ones).
func (e Env) diagnose(ctx context.Context, since time.Time, out *runner.Outcome, err error, refs []wait.ObjectRef) {
	if !wait.Diagnosable(ctx, err) || len(refs) == 0 {
		return
	}
	out.Diagnosis = wait.Diagnose(ctx, e.Clients, since, refs, e.limits())
}

// diagnoseTarget diagnoses the objects a wait target selects, listed anew
// on the diagnosis's own deadline.
func (e Env) diagnoseTarget(ctx context.Context, since time.Time, out *runner.Outcome, err error, t wait.Target) {
	if !wait.Diagnosable(ctx, err) {
		return
	}
	lim := e.limits()
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lim.ReadTimeout)
	objs, lerr := t.List(lctx, e.Clients)
	cancel()
	if lerr != nil {
		return // the wait's own error already says the target cannot be read
	}
	refs := make([]wait.ObjectRef, 0, len(objs))
	for _, o := range objs {
		refs = append(refs, wait.ObjectRef{GVK: t.Mapping.GroupVersionKind, Namespace: o.GetNamespace(), Name: o.GetName()})
	}
	e.diagnose(ctx, since, out, err, refs)
}

func (e Env) limits() wait.DiagnoseLimits {
	if e.DiagnoseLimits != nil {
		return *e.DiagnoseLimits
	}
	return wait.DefaultDiagnoseLimits
}

// diagnoseJob is diagnose without log tails: the job step reads its pod's
// log tail itself (Outcome.LogTail), and one output shows it once.
func (e Env) diagnoseJob(ctx context.Context, since time.Time, out *runner.Outcome, err error, refs []wait.ObjectRef) {
	lim := e.limits()
	lim.LogTails = 0
	e.DiagnoseLimits = &lim
	e.diagnose(ctx, since, out, err, refs)
}
