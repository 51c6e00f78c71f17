package prune

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner/helmstep"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/manifest"
	"github.com/khook/khook/runner/kube/wait"
	"github.com/khook/khook/runner/state"
	"github.com/khook/khook/runner/steps"
	"github.com/khook/khook/spec"
)

// Plan predicts the pruning apply would do after the spec's steps: one
// plan step per step with leftovers (model.PruneStepName), each object
// deleted, uninstalled or kept with the reason. rec is the state record as
// read (nil: none yet); a spec without a record gets the note that pruning
// needs one. It only reads. r opens sops-encrypted manifests (their names
// may be encrypted too: read encrypted, every object would look gone).
func Plan(ctx context.Context, c *kube.Clients, rel Releases, s *spec.Spec, rec *state.Record, r *redact.Redactor) ([]model.PlanStep, []string, error) {
	if _, ok := state.RefFor(s); !ok {
		if s.PruneDisabled() {
			return nil, nil, nil
		}
		return nil, []string{NoRecordNote}, nil
	}
	groups, notes := leftovers(s, rec, func(*spec.Step) bool { return true }, func(st *spec.Step) (map[string]bool, bool) {
		if rel, ok := state.Release(st); ok {
			return map[string]bool{rel.Key(): true}, true
		}
		if h := st.Helm; h != nil && h.OnlyCRDs() { // its CRDs are known by rendering its chart
			names, err := rel.OnlyCRDNames(ctx, st)
			if err != nil { // the step's own plan says why; prune nothing of it
				return nil, false
			}
			keys := map[string]bool{}
			for _, n := range names {
				keys[model.Owned{Group: kube.CRDMapping.GroupVersionKind.Group, Kind: "CustomResourceDefinition", Name: n}.Key()] = true
			}
			return keys, true
		}
		if m := st.Manifests(); m.Applied {
			objs, err := manifest.LoadManifests(ctx, s.BaseDir, m.Sources, r)
			if err != nil { // the step's own plan says why; prune nothing of it
				return nil, false
			}
			return keysOf(objs, m.Namespace), true
		}
		return map[string]bool{}, true
	})
	var out []model.PlanStep
	after := lastSteps(s)
	for _, g := range groups {
		ps := model.PlanStep{Name: model.PruneStepName(g.Step), Type: model.TypePrune, Action: model.ActionNoop, Pos: g.Pos, Needs: after,
			Reason: g.Candidates[0].Why(), Summary: fmt.Sprintf("prunes what step %q put in the cluster and the spec no longer has", g.Step)}
		for _, cand := range g.Candidates {
			d, err := Decide(ctx, c, rel, cand)
			if err != nil {
				return nil, nil, fmt.Errorf("plan of pruning %s: %w", g.Step, err)
			}
			if d.Action == "" {
				continue // already gone
			}
			it := d.Item
			ps.Objects = append(ps.Objects, model.ObjectPlan{Action: d.Action, Kind: it.Kind, Namespace: it.Namespace, Name: it.Name, Reason: d.Reason(), With: d.With})
			if rank[d.Action] > rank[ps.Action] {
				ps.Action = d.Action
			}
			if d.Action == model.ActionKeep {
				ps.Warnings = append(ps.Warnings, model.Warning{From: model.WarnerKhook, Object: it.String(), Message: "pruning keeps it: " + d.Kept})
			}
		}
		if len(ps.Objects) > 0 {
			out = append(out, ps)
			after = []string{ps.Name} // pruning goes one step at a time
		}
	}
	return out, notes, nil
}

// rank orders a prune step's action by its objects': what changes most.
var rank = map[model.Action]int{model.ActionNoop: 0, model.ActionKeep: 1, model.ActionDelete: 2, model.ActionUninstall: 3}

// Pruner carries out pruning for apply and destroy.
type Pruner struct {
	Clients *kube.Clients
	Helm    *helmstep.Executor
	Delete  *steps.DeleteExecutor
	Emit    func(model.Event)
	// Redactor masks secrets in the results' errors and details.
	Redactor *redact.Redactor
}

// Run prunes, after the spec's steps ran with results (nil: destroy, every
// step counts as run), the leftovers the session's record lists, and forgets
// in the record what it deleted, found gone or kept. A step that failed or
// did not run this time keeps its leftovers for a later run. It returns one
// result per step with leftovers.
func (p *Pruner) Run(ctx context.Context, s *spec.Spec, sess *state.Session, results []model.StepResult) []model.StepResult {
	if sess == nil || ctx.Err() != nil {
		return nil
	}
	byName := map[string]model.StepResult{}
	for _, r := range results {
		byName[r.Name] = r
	}
	ran := func(st *spec.Step) bool {
		if results == nil {
			return true
		}
		r, ok := byName[st.Name]
		return ok && r.Status != model.StatusFailed && r.Skip != spec.SkipBlocked && r.Skip != spec.SkipStopped
	}
	groups, _ := leftovers(s, sess.Record(), ran, func(*spec.Step) (map[string]bool, bool) { return nil, false })
	var out []model.StepResult
	for _, g := range groups {
		res := p.group(ctx, sess, g)
		if res.Status == "" {
			continue
		}
		if p.Emit != nil {
			p.Emit(model.Event{Time: time.Now(), Kind: model.EventFinished, Step: res.Name, Result: &res})
		}
		out = append(out, res)
	}
	return out
}

// group prunes one step's leftovers: deletions are awaited (watches) until
// gone, releases uninstalled through the helm executor's uninstall.
func (p *Pruner) group(ctx context.Context, sess *state.Session, g Group) (res model.StepResult) {
	res = model.StepResult{Name: model.PruneStepName(g.Step), Type: model.TypePrune, Pos: g.Pos, Attempts: 1}
	start := time.Now()
	defer func() { res.DurationMs = time.Since(start).Milliseconds() }()
	ctx, cancel := context.WithTimeout(ctx, spec.DefaultTimeout)
	defer cancel()
	var forget []model.Owned
	var victims []kube.Deleted
	var victimItems []model.Owned
	var errs, kept []string
	var with, went []string // what data goes (went) with each deleted object (prune: {data: true}, {crds: true})
	for _, cand := range g.Candidates {
		d, err := Decide(ctx, p.Clients, p.Helm, cand)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		switch d.Action {
		case "":
			forget = append(forget, d.Item)
		case model.ActionNoop, model.ActionKeep:
			kept = append(kept, fmt.Sprintf("kept %s (%s)", d.Item, d.Kept))
			forget = append(forget, d.Item)
		case model.ActionUninstall:
			_, err := p.Helm.Uninstall(ctx, d.Item.Name, d.Item.Namespace, true)
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			res.Changes = append(res.Changes, model.Change{Action: model.DidUninstall, Kind: model.KindRelease, Namespace: d.Item.Namespace, Name: d.Item.Name})
			forget = append(forget, d.Item)
		case model.ActionDelete:
			v, err := p.Delete.DeleteUID(ctx, d.mapping, d.Item.Namespace, d.Item.Name, d.uid())
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			if v == nil { // gone or replaced meanwhile
				forget = append(forget, d.Item)
				continue
			}
			victims = append(victims, *v)
			victimItems = append(victimItems, d.Item)
			with = append(with, d.With)
		}
	}
	if err := wait.Gone(ctx, p.Clients, victims); err != nil {
		errs = append(errs, err.Error())
	} else {
		for i, v := range victimItems {
			forget = append(forget, v)
			res.Changes = append(res.Changes, model.Change{Action: model.DidDelete, Kind: v.Kind, Namespace: v.Namespace, Name: victims[i].Name})
			if with[i] != "" {
				went = append(went, fmt.Sprintf("deleted %s and %s", v, with[i]))
			}
		}
	}
	sess.Forget(g.Step, forget, g.InSpec)
	kept = append(went, kept...)
	if len(res.Changes) == 0 && len(kept) == 0 && len(errs) == 0 {
		return model.StepResult{} // everything was gone already
	}
	why := g.Candidates[0].Why()
	res.Status = model.StatusOK
	res.Detail = why + ": " + strings.Join(append(pruneCounts(res.Changes), kept...), "; ")
	if len(errs) > 0 {
		res.Status = model.StatusFailed
		res.Error = fmt.Sprintf("pruning failed (%s): %s; what is left is pruned by the next apply", why, strings.Join(errs, "; "))
	}
	res.Detail, res.Error = p.Redactor.String(res.Detail), p.Redactor.String(res.Error)
	return res
}

// pruneCounts says what was pruned: "deleted 2 objects", "uninstalled release mon".
func pruneCounts(changes []model.Change) []string {
	var out []string
	deleted := 0
	for _, c := range changes {
		if c.Action == model.DidUninstall {
			out = append(out, "uninstalled release "+c.Namespace+"/"+c.Name)
		} else {
			deleted++
		}
	}
	switch deleted {
	case 0:
	case 1:
		out = append([]string{"deleted 1 object"}, out...)
	default:
		out = append([]string{fmt.Sprintf("deleted %d objects", deleted)}, out...)
	}
	return out
}

// lastSteps are the steps of the spec no other step needs: pruning starts
// once they are done, after every step.
func lastSteps(s *spec.Spec) []string {
	needed := map[string]bool{}
	for _, st := range s.Steps {
		for _, n := range st.Needs {
			needed[n] = true
		}
	}
	var out []string
	for _, st := range s.Steps {
		if !needed[st.Name] && !st.Excluded() {
			out = append(out, st.Name)
		}
	}
	return out
}
