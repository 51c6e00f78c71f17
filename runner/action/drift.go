package action

import (
	"context"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/state"
	"github.com/khook/khook/spec"
)

// DriftRepairNote is what a step re-run because it drifted says, and
// RepairCommand the command that repairs drift (drift reports name it).
const (
	DriftRepairNote = "re-run: its live objects drifted since it last succeeded (state record)"
	RepairCommand   = "khook apply (it re-runs the drifted steps, state record or not; khook apply --reconcile re-runs every step)"
)

// resumeUndrifted is apply's own drift check (docs/dsl.md, "state"): when
// the state record would resume any step, the spec is planned first, as
// plan does, and a step the record would skip but whose plan is a change
// (its live objects drifted) runs again. It returns the Resume hook and
// those steps. A plan that cannot be made resumes nothing: every step runs.
func (a *ApplyCommand) resumeUndrifted(ctx context.Context, s *spec.Spec, b *Backend) (func(*spec.Step) (string, bool), map[string]bool) {
	hashes := state.Hashes(s)
	resumable := map[string]bool{}
	for _, st := range s.Steps {
		if b.Previous.Resumes(st.Name, hashes[st.Name]) {
			resumable[st.Name] = true
		}
	}
	if len(resumable) == 0 || b.Clients == nil {
		return b.Resume, nil
	}
	p, err := a.Config.livePlan(ctx, b.Clients, s, false)
	if err != nil {
		if a.Config.Notify != nil {
			a.Config.Notify("the state record resumes nothing this run: the drift check could not plan (" + a.Config.redactor().String(err.Error()) + ")")
		}
		return nil, nil
	}
	drifted := map[string]bool{}
	for _, ps := range p.Steps {
		if resumable[ps.Name] && model.IsChange(ps.Action) {
			drifted[ps.Name] = true
		}
	}
	return resumeUnchanged(p, b.Resume), drifted
}

// sayRepaired says on each step re-run for its drift why it ran.
func sayRepaired(steps []model.StepResult, drifted map[string]bool) {
	for i := range steps {
		st := &steps[i]
		if !drifted[st.Name] || st.Skip != "" {
			continue
		}
		if st.Detail == "" {
			st.Detail = DriftRepairNote
		} else {
			st.Detail = DriftRepairNote + "; " + st.Detail
		}
	}
}
