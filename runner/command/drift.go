package command

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
	// RefusedRerunNote and UnknownRerunNote are what a step the state
	// record would resume says when it runs because its plan is fail or
	// unknown: apply does not call done what plan says fails.
	RefusedRerunNote = "re-run: its plan says it fails, so the state record does not resume it"
	UnknownRerunNote = "re-run: its plan cannot tell its outcome (unknown), so the state record does not resume it"
	RepairCommand    = "khook apply (it re-runs the drifted steps, state record or not; khook apply --reconcile re-runs every step)"
)

// resumeUndrifted is apply's own drift check (docs/dsl.md, "state"): when
// the state record would resume any step, the spec is planned first, as
// plan does, and a step the record would skip but whose plan is a change
// (its live objects drifted), fail or unknown runs again. It returns the
// Resume hook and those steps, each with why it runs. A plan that cannot
// be made resumes nothing: every step runs.
func (a *ApplyCommand) resumeUndrifted(ctx context.Context, s *spec.Spec, b *Backend) (func(*spec.Step) (string, bool), map[string]string) {
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
	drifted := map[string]string{}
	for _, ps := range p.Steps {
		if !resumable[ps.Name] || !mustRun(ps.Action) {
			continue
		}
		switch ps.Action {
		case model.ActionFail:
			drifted[ps.Name] = RefusedRerunNote
		case model.ActionUnknown:
			drifted[ps.Name] = UnknownRerunNote
		default:
			drifted[ps.Name] = DriftRepairNote
		}
	}
	return resumeUnchanged(p, b.Resume), drifted
}

// sayRepaired says on each step the record would have resumed why it ran.
func sayRepaired(steps []model.StepResult, rerun map[string]string) {
	for i := range steps {
		st := &steps[i]
		note := rerun[st.Name]
		if note == "" || st.Skip != "" {
			continue
		}
		if st.Detail == "" {
			st.Detail = note
		} else {
			st.Detail = note + "; " + st.Detail
		}
	}
}

// chartsMoved marks each helm step whose chart version is the one the state
// record says it last applied but whose bytes are not (the version was
// re-published): a drift finding naming both digests, whatever the step's
// action (the same templates repackaged plan unchanged).
func chartsMoved(p *model.Plan, rec *state.Record) {
	if rec == nil {
		return
	}
	for i := range p.Steps {
		ps := &p.Steps[i]
		e, ok := rec.Steps[ps.Name]
		if !ok || ps.Release == nil || e.ChartDigest == "" || ps.Release.Archive == "" {
			continue
		}
		if e.ChartVersion != ps.Release.Version || e.ChartDigest == ps.Release.Archive {
			continue
		}
		ps.ChartMoved = &model.ChartMoved{Version: e.ChartVersion, Applied: e.ChartDigest, Served: ps.Release.Archive}
		ps.Reason += "; " + ps.ChartMoved.String()
	}
}
