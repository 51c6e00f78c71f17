package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
)

func offlinePlan() *model.Plan {
	steps := []model.PlanStep{
		{Name: "cilium", Type: "helm", Action: model.ActionPlanned, Summary: "install or upgrade release cilium from chart cilium 1.18.4", Pos: spec.Pos{File: "khook.yaml", Line: 7, Col: 5}},
		{Name: "coredns-ready", Type: "wait", Action: model.ActionPlanned, Summary: "wait for condition=Available on deployment/coredns", Needs: []string{"cilium"}},
		{Name: "argocd", Type: "helm", Action: model.ActionExcluded, Summary: "install or upgrade release argocd", Needs: []string{"cilium", "coredns-ready"},
			When: `vars.ENV == "prod"`, Skip: spec.SkipWhen, Reason: `when vars.ENV == "prod" is false`},
	}
	return &model.Plan{Name: "demo", Identifier: "demo", Offline: true, Steps: steps, Totals: model.PlanTotals(steps)}
}

func livePlan() *model.Plan {
	steps := []model.PlanStep{
		{Name: "cilium", Type: "helm", Action: model.ActionUpgrade, Summary: "install or upgrade release cilium from chart cilium 1.18.4",
			Reason: "revision 3, chart 1.18.3 -> 1.18.4",
			Diff:   "--- kube-system/DaemonSet/cilium (live)\n+++ kube-system/DaemonSet/cilium (planned)\n@@ -1,2 +1,2 @@\n-image: cilium:1.18.3\n+image: cilium:1.18.4\n"},
		{Name: "settings", Type: "apply", Action: model.ActionCreate, Summary: "apply 1 manifest source(s)", Needs: []string{"cilium"},
			Objects:  []model.ObjectPlan{{Action: model.ActionCreate, Kind: "ConfigMap", Namespace: "demo", Name: "settings"}, {Action: model.ActionUnchanged, Kind: "Namespace", Name: "demo"}},
			DiffNote: "unavailable (namespace demo is created by an earlier step)"},
		{Name: "coredns-ready", Type: "wait", Action: model.ActionNoop, Summary: "wait for condition=Available on deployment/coredns", DiffNote: "no changes"},
		{Name: "crs", Type: "apply", Action: model.ActionUnknown, Needs: []string{"settings"}, Reason: "kind Application is registered by an earlier step"},
		{Name: "argocd", Type: "helm", Action: model.ActionExcluded, Skip: spec.SkipWhen, Reason: `when vars.ENV == "prod" is false`},
	}
	return &model.Plan{Name: "demo", Identifier: "prod-eu", Server: "https://10.0.0.1:6443", Changes: true, Steps: steps, Totals: model.PlanTotals(steps)}
}

func TestWritePlanTextOffline(t *testing.T) {
	var w writeCounter
	if err := WritePlanText(&w, offlinePlan()); err != nil {
		t.Fatal(err)
	}
	if w.writes != 1 {
		t.Errorf("WritePlanText made %d writes, want 1", w.writes)
	}
	golden(t, "plan-offline.txt", w.Bytes())
}

func TestWritePlanTextLive(t *testing.T) {
	var w writeCounter
	if err := WritePlanText(&w, livePlan()); err != nil {
		t.Fatal(err)
	}
	golden(t, "plan-live.txt", w.Bytes())
}

func TestWritePlanJSON(t *testing.T) {
	var w writeCounter
	if err := WriteJSON(&w, offlinePlan()); err != nil {
		t.Fatal(err)
	}
	if w.writes != 1 {
		t.Errorf("WriteJSON made %d writes, want 1", w.writes)
	}
	golden(t, "plan-offline.json", w.Bytes())
}

func TestTotalsLine(t *testing.T) {
	for _, tc := range []struct {
		plan *model.Plan
		want string
	}{
		{&model.Plan{Totals: map[model.Action]int{"install": 2, "upgrade": 1, "unchanged": 3, "excluded": 1}}, "Plan: 2 to install, 1 to upgrade, 3 unchanged, 1 excluded."},
		{&model.Plan{Steps: []model.PlanStep{{Action: "run"}, {Action: "skip"}, {Action: "odd"}}}, "Plan: 1 to run, 1 to skip, 1 odd."},
		{&model.Plan{Offline: true}, "Plan (offline): no steps."},
	} {
		if got := model.TotalsLine(tc.plan); got != tc.want {
			t.Errorf("TotalsLine = %q, want %q", got, tc.want)
		}
	}
}

// A CRD deleted with its custom resources is in the verdict and a warning
// annotation, not only in the step's objects; a kept one counts as keep.
func TestPlanSaysWhatACRDDeletionTakes(t *testing.T) {
	p := &model.Plan{Steps: []model.PlanStep{{Name: "operator", Action: model.ActionUpgrade, Objects: []model.ObjectPlan{
		{Action: model.ActionDelete, Kind: "CustomResourceDefinition", Name: "widgets.example.com", Reason: "deleteCRDs: true", With: "its 2 Widget objects in 1 namespace"},
	}}, {Name: "other", Action: model.ActionKeep}}}
	v := model.PlanVerdict(p, false)
	if want := "1 step would change the cluster. It deletes CRD widgets.example.com and its 2 Widget objects in 1 namespace."; v.Text != want || v.Tone != model.ToneWarning {
		t.Errorf("verdict = %q (tone %d), want %q as a warning", v.Text, v.Tone, want)
	}
	found := false
	for _, a := range PlanAnnotations(p, false) {
		if a.Level == AnnotationWarning && strings.Contains(a.Title, "deletes CRD widgets.example.com and its 2 Widget objects") {
			found = true
		}
	}
	if !found {
		t.Errorf("no annotation names the CRD deletion: %+v", PlanAnnotations(p, false))
	}
	if got := model.TotalsLine(p); !strings.Contains(got, "1 to keep") {
		t.Errorf("totals = %q, want 1 to keep", got)
	}
}

// A plan that keeps what the spec dropped (a PVC pruning keeps without a
// word) does not say the cluster matches the spec; the step table's row
// of a claim deleted with prune: {data: true} says its data goes.
func TestPlanSaysWhatItKeepsAndWhatDataGoes(t *testing.T) {
	keep := &model.Plan{Steps: []model.PlanStep{{Name: "prune/store", Type: model.TypePrune, Action: model.ActionKeep, Objects: []model.ObjectPlan{
		{Action: model.ActionKeep, Kind: "PersistentVolumeClaim", Namespace: "shop", Name: "data", Reason: "kept: deleting it deletes its data; set prune: {data: true} to delete both"},
	}}}}
	for drift, want := range map[bool]string{
		false: "No changes to apply; 1 object kept: PersistentVolumeClaim shop/data.",
		true:  "No drift to repair; 1 object kept: PersistentVolumeClaim shop/data.",
	} {
		if v := model.PlanVerdict(keep, drift); v.Text != want || v.Tone == model.ToneOK {
			t.Errorf("verdict (drift %v) = %q (tone %d), want %q, not ok", drift, v.Text, v.Tone, want)
		}
	}
	var many []model.ObjectPlan
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		many = append(many, model.ObjectPlan{Action: model.ActionKeep, Kind: "PersistentVolumeClaim", Namespace: "shop", Name: n})
	}
	keep.Steps[0].Objects = many
	if v, want := model.PlanVerdict(keep, false).Text, "No changes to apply; 5 objects kept: PersistentVolumeClaim shop/a, PersistentVolumeClaim shop/b, PersistentVolumeClaim shop/c, 2 more."; v != want {
		t.Errorf("verdict = %q, want %q", v, want)
	}
	if v := model.PlanVerdict(&model.Plan{Steps: []model.PlanStep{{Name: "x", Action: model.ActionUnchanged}}}, false).Text; v != "No changes: the cluster matches the spec." {
		t.Errorf("verdict of a converged plan = %q", v)
	}

	gone := &model.Plan{Steps: []model.PlanStep{{Name: "prune/store", Type: model.TypePrune, Action: model.ActionDelete, Objects: []model.ObjectPlan{
		{Action: model.ActionDelete, Kind: "PersistentVolumeClaim", Namespace: "shop", Name: "data", Reason: `no longer in step "store"`, With: "its data (volume pvc-1, 1Gi, reclaimPolicy Delete)"},
	}}}}
	var md bytes.Buffer
	if err := WritePlanMarkdown(&md, gone, MarkdownOptions{Command: "plan", NoDiagram: true}); err != nil {
		t.Fatal(err)
	}
	if row := `| prune/store | prune | **delete** | delete PersistentVolumeClaim shop/data and its data (volume pvc-1, 1Gi, reclaimPolicy Delete) (no longer in step "store") |`; !strings.Contains(md.String(), row) {
		t.Errorf("the step table lacks the row %q:\n%s", row, md.String())
	}
}
