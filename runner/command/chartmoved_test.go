package command

import (
	"encoding/json"
	"testing"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/state"
)

// chartsMoved: a finding only where the record keeps a digest for the same
// chart version and the plan fetched other bytes; a record written before
// chart digests were kept loads and finds nothing.
func TestChartsMoved(t *testing.T) {
	var old state.Record // as khook wrote it before chartDigest
	if err := json.Unmarshal([]byte(`{"specName":"s","steps":{"app":{"hash":"h","status":"ok","type":"helm"}}}`), &old); err != nil {
		t.Fatal(err)
	}
	rec := &state.Record{Steps: map[string]state.StepRecord{
		"moved":    {ChartVersion: "demo@0.1.0", ChartDigest: "sha256:aaa"},
		"same":     {ChartVersion: "demo@0.1.0", ChartDigest: "sha256:aaa"},
		"upgraded": {ChartVersion: "demo@0.1.0", ChartDigest: "sha256:aaa"},
	}}
	plan := func() *model.Plan {
		return &model.Plan{Steps: []model.PlanStep{
			{Name: "app", Action: model.ActionUnchanged, Release: &model.ReleaseDigest{Version: "demo@0.1.0", Archive: "sha256:bbb"}},
			{Name: "moved", Action: model.ActionUnchanged, Reason: "revision 1", Release: &model.ReleaseDigest{Version: "demo@0.1.0", Archive: "sha256:bbb"}},
			{Name: "same", Action: model.ActionUnchanged, Release: &model.ReleaseDigest{Version: "demo@0.1.0", Archive: "sha256:aaa"}},
			{Name: "upgraded", Action: model.ActionUpgrade, Release: &model.ReleaseDigest{Version: "demo@0.2.0", Archive: "sha256:ccc"}},
		}}
	}
	p := plan()
	chartsMoved(p, &old)
	for _, st := range p.Steps {
		if st.ChartMoved != nil {
			t.Errorf("a record without chart digests found step %s's chart moved: %+v", st.Name, st.ChartMoved)
		}
	}
	p = plan()
	chartsMoved(p, rec)
	want := model.ChartMoved{Version: "demo@0.1.0", Applied: "sha256:aaa", Served: "sha256:bbb"}
	if m := p.Steps[1].ChartMoved; m == nil || *m != want || p.Steps[1].Reason != "revision 1; "+want.String() {
		t.Errorf("moved: %+v %q, want %+v", m, p.Steps[1].Reason, want)
	}
	for _, i := range []int{0, 2, 3} {
		if p.Steps[i].ChartMoved != nil {
			t.Errorf("step %s: a finding %+v where the bytes did not move under one version", p.Steps[i].Name, p.Steps[i].ChartMoved)
		}
	}
	if !p.DriftFails() || len(model.DriftedObjects(p)) != 2 {
		t.Errorf("drift fails %v, drifted %q; want the moved chart and the upgrade", p.DriftFails(), model.DriftedObjects(p))
	}
}
