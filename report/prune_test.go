package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/khook/khook/model"
)

func prunePlan() *model.Plan {
	return &model.Plan{Name: "demo", Changes: true, Notes: []string{"pruning needs a state record"}, Steps: []model.PlanStep{
		{Name: "cms", Type: "apply", Action: model.ActionUnchanged},
		{Name: "prune/cms", Type: model.TypePrune, Action: model.ActionDelete, Needs: []string{"cms"}, Reason: `no longer in step "cms"`, Objects: []model.ObjectPlan{
			{Action: model.ActionDelete, Kind: "ConfigMap", Namespace: "demo", Name: "gone", Reason: `no longer in step "cms"`},
			{Action: model.ActionNoop, Kind: "ConfigMap", Namespace: "demo", Name: "held", Reason: "kept: prune: false"},
		}},
		{Name: "prune/monitoring", Type: model.TypePrune, Action: model.ActionUninstall, Reason: `step "monitoring" left the spec`, Objects: []model.ObjectPlan{
			{Action: model.ActionUninstall, Kind: model.KindRelease, Namespace: "mon", Name: "prometheus", Reason: `step "monitoring" left the spec`},
		}},
	}}
}

// The terminal and the Markdown summary name each pruned or kept object
// with its reason, the totals count uninstalls, and the note is said once.
func TestPrunePlanRendered(t *testing.T) {
	p := prunePlan()
	var text, md bytes.Buffer
	if err := WritePlanText(&text, p); err != nil {
		t.Fatal(err)
	}
	if err := WritePlanMarkdown(&md, p, MarkdownOptions{Command: "plan", NoDiagram: true}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`delete  ConfigMap demo/gone (no longer in step "cms")`,
		`no-op   ConfigMap demo/held (kept: prune: false)`,
		`uninstall  HelmRelease mon/prometheus (step "monitoring" left the spec)`,
		"Note: pruning needs a state record",
		"1 to delete, 1 to uninstall",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("terminal plan lacks %q:\n%s", want, text.String())
		}
	}
	for _, want := range []string{
		`delete ConfigMap demo/gone (no longer in step "cms"); no-op ConfigMap demo/held (kept: prune: false)`,
		"**uninstall**",
		"> pruning needs a state record",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown plan lacks %q:\n%s", want, md.String())
		}
	}
	if model.Action(model.ActionUninstall).Done() != model.DidUninstall || !model.IsChange(model.ActionUninstall) {
		t.Error("an uninstall is a change, done as uninstalled")
	}
}
