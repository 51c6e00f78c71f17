package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
)

func step(name string, needs ...string) *spec.Step {
	return &spec.Step{Name: name, Needs: needs, Path: "steps." + name,
		Rollout: &spec.Rollout{Restart: "deployment/" + name, Namespace: "default"}}
}

func TestOffline(t *testing.T) {
	ex := step("extras", "a")
	ex.When, ex.Skip = `vars.ENV == "prod"`, spec.SkipWhen
	s := &spec.Spec{Metadata: spec.Metadata{Name: "demo"}, Steps: []*spec.Step{ex, step("a")},
		Positions: map[string]spec.Pos{"steps.a": {File: "k.yaml", Line: 9, Col: 5}}}
	p := Offline(s)
	if !p.Offline || p.Changes || p.Name != "demo" {
		t.Errorf("plan header = %+v", p)
	}
	if diff := cmp.Diff(map[model.Action]int{model.ActionPlanned: 1, model.ActionExcluded: 1}, p.Totals); diff != "" {
		t.Errorf("totals (-want +got):\n%s", diff)
	}
	a, e := p.Steps[0], p.Steps[1]
	if a.Name != "a" || a.Action != model.ActionPlanned || a.Summary == "" || a.Pos.Line != 9 {
		t.Errorf("step a = %+v", a)
	}
	if e.Action != model.ActionExcluded || e.Reason != `when vars.ENV == "prod" is false` || e.Skip != spec.SkipWhen {
		t.Errorf("step extras = %+v", e)
	}
}
