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

// planPrune adds pruning to a live plan: one step per step with leftovers,
// and the note when the spec keeps no record to prune from. The record is a
// Secret: a plan under lookup-secrets deny (a fork's) does not read it, and
// a plan identity that may not read it plans without pruning; each says so.
func planPrune(ctx context.Context, clients *kube.Clients, helm *helmstep.Executor, s *spec.Spec, lookup string, r *redact.Redactor, pl *model.Plan) error {
	var rec *state.Record
	if ref, ok := state.RefFor(s); ok {
		if lookup == runplan.LookupDeny {
			pl.Notes = append(pl.Notes, fmt.Sprintf("pruning is not planned: under lookup-secrets deny the plan reads no Secret, and the state record %s is one", ref))
			return nil
		}
		var err error
		rec, err = state.NewStore(clients.Typed, ref).Load(ctx)
		if apierrors.IsForbidden(err) {
			pl.Notes = append(pl.Notes, fmt.Sprintf("pruning is not planned: the plan's identity may not read the state record %s", ref))
			return nil
		}
		if err != nil {
			return err
		}
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
