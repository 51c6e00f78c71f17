package command

import (
	"errors"
	"fmt"
	"strings"

	"github.com/khook/khook/model"
	"github.com/khook/khook/words"
)

// PlanFailedError is a plan that predicts failure: some step would fail on
// apply. It is the one rule every gate built on a plan applies (plan's
// exit code with or without --detailed-exitcode, a saved plan's mark,
// apply --plan's refusal, khook ci's status), whatever the step type and
// whatever the cause.
type PlanFailedError struct {
	Steps   []string // the steps planned fail, in DAG order
	Reasons []string // why each would fail, as the plan says (Steps' order)
}

func (e *PlanFailedError) Error() string {
	return fmt.Sprintf("the plan predicts that %d %s would fail on apply (%s): the plan says why; fix the spec or the cluster and plan again",
		len(e.Steps), words.Plural(len(e.Steps), "step", "steps"), strings.Join(e.Steps, ", "))
}

// maxWhy bounds the steps WithReasons words.
const maxWhy = 3

// WithReasons is the error on one line with the failing steps' own reasons
// (the first few), for where the plan itself is not printed (a fleet-wide
// plan's report).
func (e *PlanFailedError) WithReasons() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the plan predicts that %d %s would fail on apply: ", len(e.Steps), words.Plural(len(e.Steps), "step", "steps"))
	for i, name := range e.Steps {
		if i == maxWhy {
			fmt.Fprintf(&b, "; and %d more", len(e.Steps)-maxWhy)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString("step " + name)
		if i < len(e.Reasons) && e.Reasons[i] != "" {
			b.WriteString(": " + strings.Join(strings.Fields(e.Reasons[i]), " "))
		}
	}
	b.WriteString("; fix the spec or the cluster and plan again")
	return b.String()
}

// FailureReason: a predicted failure is a step's failure, as on apply.
func (e *PlanFailedError) FailureReason() string { return model.ReasonStepFailed }

// PlanGate is nil for a plan no step of which would fail, else a
// *PlanFailedError naming them.
func PlanGate(p *model.Plan) error {
	if p == nil {
		return nil
	}
	failing := p.Failing()
	if len(failing) == 0 {
		return nil
	}
	e := &PlanFailedError{}
	for _, s := range failing {
		e.Steps = append(e.Steps, s.Name)
		e.Reasons = append(e.Reasons, s.Reason)
	}
	return e
}

// refuseFailedPlan is apply --plan's refusal of a plan that predicted
// failure: what was reviewed is a failure, not a change to apply.
func refuseFailedPlan(p *model.Plan) error {
	var pf *PlanFailedError
	if !errors.As(PlanGate(p), &pf) {
		return nil
	}
	return &Failure{Reason: model.ReasonStepFailed, Err: fmt.Errorf(
		"apply --plan refuses the saved plan: it is marked as failed, %d %s would fail on apply (%s); fix the spec or the cluster, plan again and review the new plan",
		len(pf.Steps), words.Plural(len(pf.Steps), "step", "steps"), strings.Join(pf.Steps, ", "))}
}
