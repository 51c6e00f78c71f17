package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
)

// warnedSteps are a step the API server warned about and khook warned
// about both (a deprecated label; a CRD the upgrade keeps).
func warnedResults() *model.Results {
	return &model.Results{
		Name: "demo", Command: "apply", Status: model.RunOK, StartedAt: t0, DurationMs: 4200,
		Steps: []model.StepResult{{
			Name: "cilium", Type: "helm", Status: model.StatusOK, Attempts: 1, DurationMs: 4200,
			Detail: "upgraded release cilium to revision 4", Pos: spec.Pos{File: "khook.yaml", Line: 7, Col: 5},
			Warnings: []model.Warning{
				{From: model.WarnerAPIServer, Object: "Deployment kube-system/op", Message: "spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use \"kubernetes.io/os\" instead"},
				{From: model.WarnerKhook, Object: "CRD widgets.example.com", Message: "the chart no longer renders it and the upgrade keeps it: 2 Widget objects"},
			},
		}},
	}
}

func warnedPlan() *model.Plan {
	r := warnedResults()
	return &model.Plan{Name: "demo", Server: "https://10.0.0.1:6443", Steps: []model.PlanStep{{
		Name: "cilium", Type: "helm", Action: model.ActionUpgrade, Summary: "upgrade chart cilium 1.18.4 into kube-system",
		Pos: r.Steps[0].Pos, Warnings: r.Steps[0].Warnings,
	}}}
}

// Each warning says whose it is, in every output: the API server's keep
// the words they had, khook's own are under khook's name.
func TestWarningsSayWhoseTheyAre(t *testing.T) {
	var b bytes.Buffer
	if err := WriteResultsTable(&b, warnedResults()); err != nil {
		t.Fatal(err)
	}
	if err := WritePlanText(&b, warnedPlan()); err != nil {
		t.Fatal(err)
	}
	if err := WritePlanMarkdown(&b, warnedPlan(), MarkdownOptions{Command: "plan", NoDiagram: true}); err != nil {
		t.Fatal(err)
	}
	for _, a := range PlanAnnotations(warnedPlan(), false) {
		b.WriteString(a.Title + ": " + a.Message + "\n")
	}
	if err := WriteJSON(&b, warnedPlan().Steps[0].Warnings); err != nil {
		t.Fatal(err)
	}
	golden(t, "warnings.txt", b.Bytes())
	out := b.String()
	for _, want := range []string{
		"step cilium: the API server warned:\n    warning: Deployment kube-system/op",
		"step cilium: khook warned:\n    warning: CRD widgets.example.com",
		"warning: Deployment kube-system/op",
		"warning from khook: CRD widgets.example.com",
		"### Warnings\n\n#### ⚠️ cilium (khook.yaml:7:5)\n\n- Deployment kube-system/op",
		"### Warnings from khook\n\n#### ⚠️ cilium (khook.yaml:7:5)\n\n- CRD widgets.example.com",
		"khook: the API server warned about step cilium: Deployment kube-system/op",
		"khook warned about step cilium: CRD widgets.example.com",
		`"from": "api-server"`, `"from": "khook"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the outputs lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "the API server warned about step cilium: CRD") || strings.Contains(out, "warned:\n    warning: Deployment kube-system/op: spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use \"kubernetes.io/os\" instead\n    warning: CRD") {
		t.Errorf("khook's warning is under the API server's name:\n%s", out)
	}
}
