package command

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner/helmstep"
	"github.com/khook/khook/runner/kube"
	runplan "github.com/khook/khook/runner/plan"
	"github.com/khook/khook/runner/prune"
	"github.com/khook/khook/runner/state"
	"github.com/khook/khook/runner/steps"
	"github.com/khook/khook/spec"
)

// pruneWith prunes what s no longer has, for apply (results: the steps'
// outcomes) and destroy (nil); a failed prune fails the run's record.
func pruneWith(ctx context.Context, clients *kube.Clients, s *spec.Spec, sess *state.Session, r *redact.Redactor,
	results []model.StepResult, emit func(model.Event)) []model.StepResult {
	if sess == nil {
		return nil
	}
	helm := helmstep.New(clients, s.BaseDir, r)
	defer helm.Close()
	p := &prune.Pruner{Clients: clients, Helm: helm, Delete: steps.NewDeleteExecutor(steps.NewEnv(clients, s.BaseDir, r), nil), Emit: emit, Redactor: r}
	out := p.Run(ctx, s, sess, results)
	for _, res := range out {
		if res.Status == model.StatusFailed {
			sess.Fail()
		}
	}
	return out
}

// planRecord reads the state record for a live plan (pruning, charts
// re-published). The record is a Secret: a plan under lookup-secrets deny
// (a fork's) does not read it, and a plan identity that may not read it
// plans without it; unread says why ("" when it was read or the spec keeps
// none).
func planRecord(ctx context.Context, clients *kube.Clients, s *spec.Spec, lookup string) (rec *state.Record, unread string, err error) {
	ref, ok := state.RefFor(s)
	if !ok {
		return nil, "", nil
	}
	if lookup == runplan.LookupDeny {
		return nil, fmt.Sprintf("under lookup-secrets deny the plan reads no Secret, and the state record %s is one", ref), nil
	}
	rec, err = state.NewStore(clients.Typed, ref).Load(ctx)
	if apierrors.IsForbidden(err) {
		return nil, fmt.Sprintf("the plan's identity may not read the state record %s", ref), nil
	}
	return rec, "", err
}

// planPrune adds pruning to a live plan from rec (planRecord): one step per
// step with leftovers, and the note when the spec keeps no record to prune
// from or the plan could not read it (unread).
func planPrune(ctx context.Context, clients *kube.Clients, helm *helmstep.Executor, s *spec.Spec, rec *state.Record, unread string, r *redact.Redactor, pl *model.Plan) error {
	if unread != "" {
		pl.Notes = append(pl.Notes, "pruning is not planned: "+unread)
		return nil
	}
	ps, notes, err := prune.Plan(ctx, clients, helm, s, rec, r)
	if err != nil {
		return err
	}
	pl.Steps = append(pl.Steps, ps...)
	pl.Notes = append(pl.Notes, notes...)
	for _, p := range ps {
		pl.Changes = pl.Changes || model.IsChange(p.Action)
	}
	pl.Totals = model.PlanTotals(pl.Steps)
	return nil
}
