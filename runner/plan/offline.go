// Package plan predicts what apply would do. Offline builds the plan from
// the spec alone; the live plan (against a cluster) fills in actions,
// objects and diffs on the same model.Plan.
//
// May import: runner/kube, runner/steps, runner/chartsource, runner/planfile,
// model, spec, redact, sops; no renderer.
package plan

import (
	"strings"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/chartsource"
	"github.com/khook/khook/spec"
)

// Offline builds a plan with no cluster: the DAG order (what each step
// starts after), each step's type and one-line summary, and which steps
// when: excludes. Steps are listed in an order that respects needs, ties
// kept in file order. Every included step's action is "planned".
// Each step reading a sops-encrypted file says it was not decrypted.
func Offline(s *spec.Spec) *model.Plan {
	p := skeleton(s)
	_, encrypted := CheckEncrypted(s)
	for i, st := range Order(s.Steps) {
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
	for _, st := range Order(s.Steps) {
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

// Order sorts steps topologically (Kahn), taking ready steps in file order
// so the output is stable. The loader rejects cycles and unknown needs;
// should any remain, the steps involved follow in file order rather than
// being lost.
func Order(steps []*spec.Step) []*spec.Step {
	known := map[string]bool{}
	for _, st := range steps {
		known[st.Name] = true
	}
	waiting := map[string]int{}
	dependents := map[string][]*spec.Step{}
	for _, st := range steps {
		for _, n := range st.Needs {
			if known[n] {
				waiting[st.Name]++
				dependents[n] = append(dependents[n], st)
			}
		}
	}
	done := map[string]bool{}
	out := make([]*spec.Step, 0, len(steps))
	for len(out) < len(steps) {
		progressed := false
		for _, st := range steps {
			if done[st.Name] || waiting[st.Name] > 0 {
				continue
			}
			done[st.Name] = true
			out = append(out, st)
			progressed = true
			for _, d := range dependents[st.Name] {
				waiting[d.Name]--
			}
			break // rescan from the top: earlier ready steps go first
		}
		if !progressed {
			for _, st := range steps {
				if !done[st.Name] {
					done[st.Name] = true
					out = append(out, st)
				}
			}
		}
	}
	return out
}
