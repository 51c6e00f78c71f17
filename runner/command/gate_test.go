package command

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/planfile"
	"github.com/khook/khook/spec"
)

func TestPlanGateFailsAPlanThatPredictsFailure(t *testing.T) {
	p := &model.Plan{Steps: []model.PlanStep{{Name: "ns", Action: model.ActionCreate}, {Name: "base", Action: model.ActionFail}, {Name: "web", Action: model.ActionFail}}}
	err := PlanGate(p)
	var pf *PlanFailedError
	if !errors.As(err, &pf) || strings.Join(pf.Steps, ",") != "base,web" || ReasonOf(err, "") != model.ReasonStepFailed {
		t.Fatalf("PlanGate = %v, want the two failing steps, reason step-failed", err)
	}
	if !strings.Contains(err.Error(), "2 steps would fail on apply (base, web)") {
		t.Errorf("sentence: %s", err)
	}
	if err := PlanGate(&model.Plan{Steps: []model.PlanStep{{Name: "ns", Action: model.ActionCreate}}}); err != nil {
		t.Errorf("a plan of changes: %v", err)
	}
}

// apply --plan of a plan marked failed refuses before it connects.
func TestApplyRefusesASavedPlanThatPredictsFailure(t *testing.T) {
	p := &model.Plan{Name: "demo", Steps: []model.PlanStep{{Name: "base", Type: "helm", Action: model.ActionFail, Reason: "namespace istio-system not found"}}}
	f := planfile.New(p, "test", time.Unix(0, 0))
	if strings.Join(f.WouldFail, ",") != "base" {
		t.Fatalf("the saved plan is not marked: %v", f.WouldFail)
	}
	s := &spec.Spec{Metadata: spec.Metadata{Name: "demo"}, Steps: []*spec.Step{{Name: "base", Path: "steps[0]"}}}
	res, err := (&ApplyCommand{Expect: f, Backend: func(context.Context, *ApplyCommand, *spec.Spec) (*Backend, error) {
		t.Fatal("apply --plan of a failed plan connected")
		return nil, nil
	}}).Run(context.Background(), s)
	if err == nil || !strings.Contains(err.Error(), "apply --plan refuses the saved plan: it is marked as failed, 1 step would fail on apply (base)") {
		t.Fatalf("err = %v", err)
	}
	if res.Status != model.RunFailed || res.FailureReason != model.ReasonStepFailed {
		t.Errorf("results: %s %s", res.Status, res.FailureReason)
	}
}

// Where the plan is not printed (a fleet-wide plan's report), the error
// names the first failing steps' own reasons on one line.
func TestPlanFailedErrorWithReasons(t *testing.T) {
	var steps []model.PlanStep
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		steps = append(steps, model.PlanStep{Name: n, Action: model.ActionFail, Reason: "namespace " + n + "\n  not found"})
	}
	var pf *PlanFailedError
	if !errors.As(PlanGate(&model.Plan{Steps: steps}), &pf) {
		t.Fatal("no PlanFailedError")
	}
	want := "the plan predicts that 5 steps would fail on apply: step a: namespace a not found; step b: namespace b not found; step c: namespace c not found; and 2 more; fix the spec or the cluster and plan again"
	if got := pf.WithReasons(); got != want {
		t.Errorf("WithReasons:\n got %s\nwant %s", got, want)
	}
}
