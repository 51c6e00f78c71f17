package steps

import (
	"context"
	"fmt"
	"time"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/readiness"
	"github.com/khook/khook/runner/kube/wait"
	"github.com/khook/khook/spec"
)

// WaitExecutor is kubectl wait: it watches the selected objects until the condition
// holds for all of them (or, for delete, until none is left).
type WaitExecutor struct{ Env }

// NewWaitExecutor returns the wait executor.
func NewWaitExecutor(env Env) *WaitExecutor { return &WaitExecutor{env} }

// Execute blocks until the condition holds or ctx ends.
func (x *WaitExecutor) Execute(ctx context.Context, st *spec.Step) (runner.Outcome, error) {
	if st.Wait == nil {
		return runner.Outcome{}, wrongStep(st, spec.TypeWait)
	}
	out, err := x.run(ctx, st.Wait)
	return x.finish(out, err)
}

func (x *WaitExecutor) run(ctx context.Context, w *spec.Wait) (runner.Outcome, error) {
	var out runner.Outcome
	start := time.Now()
	t, cond, err := WaitTarget(ctx, x.Clients, w)
	if err != nil {
		return out, err
	}
	if err := wait.For(ctx, x.Clients, t, cond.String(), cond.Predicate()); err != nil {
		x.diagnoseTarget(ctx, start, &out, err, t)
		return out, err
	}
	out.Detail = fmt.Sprintf("%s met on %s", cond, t)
	return out, nil
}

// WaitTarget parses wait.for and resolves wait.on with its selectors. Plan
// uses it too: cond.Evaluate over t.List tells whether the wait is a no-op.
func WaitTarget(ctx context.Context, c *kube.Clients, w *spec.Wait) (wait.Target, readiness.Condition, error) {
	parsed, err := w.Condition()
	if err != nil {
		return wait.Target{}, readiness.Condition{}, fmt.Errorf("for %w", err)
	}
	cond, err := readiness.NewCondition(parsed)
	if err != nil {
		return wait.Target{}, cond, err
	}
	res, err := c.ResolveObject(ctx, "on", w)
	if err != nil {
		return wait.Target{}, cond, err
	}
	t := wait.Target{Mapping: res.Mapping, Name: res.Name, LabelSelector: w.Selector, FieldSelector: w.FieldSelector}
	if !w.AllNamespaces {
		t.Namespace = spec.NamespaceOrDefault(w.Namespace)
	}
	return t, cond, t.Validate()
}

// Plan is Execute's path without the wait: no-op when the condition holds
// already, else wait with what is pending. An unresolvable target is a
// wait with apply's sentence (an earlier step may create it).
func (x *WaitExecutor) Plan(ctx context.Context, st *spec.Step, _ runner.PlanInput) (runner.Prediction, error) {
	var p runner.Prediction
	if st.Wait == nil {
		return p, wrongStep(st, spec.TypeWait)
	}
	t, cond, err := WaitTarget(ctx, x.Clients, st.Wait)
	if err != nil {
		if kube.IsUnreachable(err) {
			return p, err
		}
		p.Action, p.Reason = model.ActionWait, x.Redactor.String(err.Error())
		return p, nil
	}
	objs, err := t.List(ctx, x.Clients)
	if err != nil {
		return p, err
	}
	if done, pending := cond.Evaluate(objs); done {
		p.Action, p.Reason = model.ActionNoop, fmt.Sprintf("%s already holds on %s", cond, t)
	} else {
		p.Action, p.Reason = model.ActionWait, pending
	}
	return p, nil
}
