package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/model"
)

// An immutable change — a Deployment's selector in an apply step, a chart's
// plain Job whose pod template changes in a helm step — plans as fail
// naming the field in one line, and apply writes nothing of either object;
// with onImmutable: recreate both plan as replace, apply replaces them, and
// the next plan is clean (#36).
func TestImmutableFieldsFailOrAreReplaced(t *testing.T) {
	ns := namespace(t)
	file := testdata("immutable", "khook.yaml")
	vars := func(app, tag, on string) []string {
		return []string{"--set", "NS=" + ns, "--set", "APP=" + app, "--set", "TAG=" + tag, "--set", "ON=" + on}
	}
	plan := func(app, tag, on string) (outcome, model.Plan) {
		t.Helper()
		out := khook(t, invocation{Args: append([]string{"plan", "--diff", "-f", file, "-o", "json"}, vars(app, tag, on)...)})
		var p model.Plan
		if err := json.Unmarshal([]byte(out.Stdout), &p); err != nil {
			t.Fatalf("plan: exit %d, %v\nstdout:\n%s\nstderr:\n%s", out.Code, err, out.Stdout, out.Stderr)
		}
		return out, p
	}
	apply := func(app, tag, on string) outcome {
		t.Helper()
		return khook(t, invocation{Args: append([]string{"apply", "-f", file, "-o", "json"}, vars(app, tag, on)...)})
	}
	expectSteps(t, apply("web", "1", "fail"), []want{{Name: "web", Status: model.StatusOK, Attempts: 1}, {Name: "imm", Status: model.StatusOK, Attempts: 1}})
	webUID, jobUID := liveUIDs(t, ns)

	_, p := plan("web2", "2", "fail")
	for _, c := range []struct{ step, field string }{{"web", "spec.selector: field is immutable"}, {"imm", "spec.template: field is immutable"}} {
		ps := step(p, c.step)
		if ps.Action != model.ActionFail || !strings.Contains(ps.Reason, c.field) || strings.Contains(ps.Reason, "\n") || strings.Contains(ps.Reason, "{") {
			t.Errorf("plan of step %s: %s: %s\nwant fail naming %q in one line, no struct dump", c.step, ps.Action, ps.Reason, c.field)
		}
	}
	out := apply("web2", "2", "fail")
	expectSteps(t, out, []want{{Name: "web", Status: model.StatusFailed, Attempts: 1, Error: "spec.selector: field is immutable"},
		{Name: "imm", Status: model.StatusFailed, Attempts: 1, Error: "spec.template: field is immutable"}})
	if w, j := liveUIDs(t, ns); w != webUID || j != jobUID || selectorOf(t, ns) != "app=web" || imageOf(t, ns) != "example.invalid/migrate:1" {
		t.Errorf("the refused apply wrote: web %s -> %s (selector %s), job %s -> %s (image %s)", webUID, w, selectorOf(t, ns), jobUID, j, imageOf(t, ns))
	}

	_, p = plan("web2", "2", "recreate")
	for _, name := range []string{"web", "imm"} {
		ps := step(p, name)
		replaced := false
		for _, o := range ps.Objects {
			replaced = replaced || o.Action == model.ActionReplace
		}
		if !replaced || ps.Diff == "" {
			t.Errorf("plan of step %s under onImmutable: recreate: %s: %s, objects %v: want an object replaced, with a diff", name, ps.Action, ps.Reason, ps.Objects)
		}
	}
	expectSteps(t, apply("web2", "2", "recreate"), []want{{Name: "web", Status: model.StatusOK, Attempts: 1}, {Name: "imm", Status: model.StatusOK, Attempts: 1}})
	if w, j := liveUIDs(t, ns); w == webUID || j == jobUID || selectorOf(t, ns) != "app=web2" || imageOf(t, ns) != "example.invalid/migrate:2" {
		t.Errorf("not replaced: web %s -> %s (selector %s), job %s -> %s (image %s)", webUID, w, selectorOf(t, ns), jobUID, j, imageOf(t, ns))
	}
	if _, p = plan("web2", "2", "recreate"); p.Changes {
		t.Errorf("the plan after the replacement is not clean: %s", model.TotalsLine(&p))
	}
}

func step(p model.Plan, name string) model.PlanStep {
	for _, s := range p.Steps {
		if s.Name == name {
			return s
		}
	}
	return model.PlanStep{}
}

func liveUIDs(t *testing.T, ns string) (web, job string) {
	t.Helper()
	d, err := kc.Client.AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{})
	must(t, err)
	j, err := kc.Client.BatchV1().Jobs(ns).Get(context.Background(), "imm-migrate", metav1.GetOptions{})
	must(t, err)
	return string(d.UID), string(j.UID)
}

func selectorOf(t *testing.T, ns string) string {
	d, err := kc.Client.AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{})
	must(t, err)
	return metav1.FormatLabelSelector(d.Spec.Selector)
}

func imageOf(t *testing.T, ns string) string {
	j, err := kc.Client.BatchV1().Jobs(ns).Get(context.Background(), "imm-migrate", metav1.GetOptions{})
	must(t, err)
	return j.Spec.Template.Spec.Containers[0].Image
}
