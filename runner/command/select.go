package command

import (
	"context"
	"fmt"
	"strings"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/selection"
	"github.com/khook/khook/runner/state"
	"github.com/khook/khook/spec"
)

// selectSteps applies the run's step selection to s (the steps left out
// become spec.SkipNotSelected); a selection naming nothing fails with the
// validation reason, before the cluster is contacted.
func selectSteps(s *spec.Spec, req *model.Selection, dir selection.Direction) (*model.Selection, error) {
	sel, err := selection.Mark(s, req, dir)
	if err != nil {
		return nil, &Failure{Reason: model.ReasonValidation, Err: err}
	}
	return sel, nil
}

// checkTargetOnly refuses a --target-only run whose selected steps rely on
// steps it leaves out without proof from the state record: for an apply
// (Needs) every need left out must have succeeded; for a destroy
// (Dependents) no step left out that needs a torn-down step may still
// stand.
func checkTargetOnly(s *spec.Spec, sel *model.Selection, prev *state.Record, dir selection.Direction) error {
	if sel == nil || !sel.TargetOnly {
		return nil
	}
	outside := selection.NeedsOutside(s, dir)
	if len(outside) == 0 {
		return nil
	}
	ref, keeps := state.RefFor(s)
	var problems []string
	for _, st := range s.Steps {
		for _, n := range outside[st.Name] {
			var e state.StepRecord
			ok := false
			if prev != nil {
				e, ok = prev.Steps[n]
			}
			switch {
			case dir == selection.Needs && !keeps:
				problems = append(problems, fmt.Sprintf("step %s needs %s, and the spec keeps no state record to show %s succeeded (state: {enabled: true})", st.Name, n, n))
			case dir == selection.Needs && (!ok || e.Status != state.StepOK):
				problems = append(problems, fmt.Sprintf("step %s needs %s, which has no successful run in the state record %s", st.Name, n, ref))
			case dir == selection.Dependents && !keeps:
				problems = append(problems, fmt.Sprintf("step %s is needed by %s, and the spec keeps no state record to show %s is gone (state: {enabled: true})", st.Name, n, n))
			case dir == selection.Dependents && ok && e.Status == state.StepOK:
				problems = append(problems, fmt.Sprintf("step %s is needed by %s, which still stands", st.Name, n))
			}
		}
	}
	if len(problems) == 0 {
		return nil
	}
	fix := "drop --target-only to run them too, or --target them"
	if dir == selection.Dependents {
		fix = "drop --target-only to tear them down first, or --target them"
	}
	return &Failure{Reason: model.ReasonValidation, Err: fmt.Errorf("--target-only refused: %s; %s", strings.Join(problems, "; "), fix)}
}

// readRecord reads the spec's state record without taking its lock (plan
// is read-only); nil when the spec keeps none or none was written yet.
func readRecord(ctx context.Context, clients *kube.Clients, s *spec.Spec) (*state.Record, error) {
	ref, ok := state.RefFor(s)
	if !ok {
		return nil, nil
	}
	return state.NewStore(clients.Typed, ref).Load(ctx)
}
