// Package plan predicts what apply would do. Offline builds the plan from
// the spec alone; the live plan (against a cluster) fills in actions,
// objects and diffs on the same model.Plan.
//
// May import: runner, runner/kube (and its manifest and objdiff rooms),
// runner/chartsource, runner/planfile, runner/policy, model, spec, redact,
// sops; no executor, no renderer (layout_test).
package plan

import (
	"strings"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/chartsource"
	"github.com/khook/khook/runner/kube/manifest"
	"github.com/khook/khook/spec"
)

// Offline builds a plan with no cluster: the DAG order (what each step
// starts after), each step's type and one-line summary, and which steps
// when: excludes. Steps are listed in an order that respects needs, ties
// kept in file order. Every included step's action is "planned".
// Each step reading a sops-encrypted file says it was not decrypted.
func Offline(s *spec.Spec) *model.Plan {
	p := skeleton(s)
	_, encrypted := manifest.CheckEncrypted(s)
	for i, st := range spec.Sorted(s.Steps) {
		for _, n := range encrypted {
			if strings.HasPrefix(n.Path, st.Path+".") && !st.Excluded() {
				p.Steps[i].Reason = strings.TrimPrefix(p.Steps[i].Reason+"; "+n.Message, "; ")
			}
		}
	}
	return p
}

// skeleton is the plan from the spec alone, the live plan's start too.
func skeleton(s *spec.Spec) *model.Plan {
	p := &model.Plan{Name: s.Metadata.Name, Identifier: s.Metadata.Name, Offline: true}
	for _, st := range spec.Sorted(s.Steps) {
		ps := model.PlanStep{
			Name:    st.Name,
			Type:    st.Type(),
			Action:  model.ActionPlanned,
			Summary: spec.Summary(st),
			Needs:   st.Needs,
			When:    st.When,
			Skip:    st.Skip,
			Pos:     s.PosOf(st.Path),
			// drift: warn (model.Plan.DriftFails)
			DriftWarn: st.DriftWarns(),
		}
		if st.Excluded() {
			ps.Action = model.ActionExcluded
			ps.Reason = st.ExcludedBecause()
		} else if st.Helm != nil {
			ps.Reason = strings.TrimPrefix(chartsource.DependenciesNote(chartsource.OfflineDependencies(s.BaseDir, st.Helm)), "; ")
		}
		p.Steps = append(p.Steps, ps)
	}
	p.Totals = model.PlanTotals(p.Steps)
	return p
}
