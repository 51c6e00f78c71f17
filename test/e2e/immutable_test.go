package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
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

// A helm step under onImmutable: recreate deletes nothing until every
// check of the upgrade has passed (#39): an upgrade that also renders an
// object someone else created (Helm's ownership check) or that admission
// denies fails with the Job untouched (same UID, old image), and the run
// says nothing changed; an upgrade whose pre-upgrade hook fails after the
// Job was deleted creates it again from the rendered manifest and says
// so; a clean upgrade replaces it and says so, in text and JSON.
func TestHelmRecreateOnlyWhenNothingAfterCanRefuse(t *testing.T) {
	ns := namespace(t)
	file := testdata("immutable", "helm.yaml")
	type vals struct {
		tag                       string
		shared, hookFails, denied bool
	}
	args := func(v vals) []string {
		return []string{"-f", file, "--set", "NS=" + ns, "--set", "TAG=" + v.tag, "--set", fmt.Sprintf("SHARED=%t", v.shared),
			"--set", fmt.Sprintf("HOOK_FAILS=%t", v.hookFails), "--set", fmt.Sprintf("DENIED=%t", v.denied)}
	}
	plan := func(v vals) model.PlanStep {
		t.Helper()
		out := khook(t, invocation{Args: append([]string{"plan", "-o", "json"}, args(v)...)})
		var p model.Plan
		if err := json.Unmarshal([]byte(out.Stdout), &p); err != nil {
			t.Fatalf("plan: exit %d, %v\nstdout:\n%s\nstderr:\n%s", out.Code, err, out.Stdout, out.Stderr)
		}
		return step(p, "imm")
	}
	// apply runs in JSON, then (for the text) reads the same run's
	// terminal lines from stderr.
	apply := func(v vals) outcome {
		t.Helper()
		return khook(t, invocation{Args: append([]string{"apply", "-o", "json"}, args(v)...)})
	}
	applyText := func(v vals) outcome {
		t.Helper()
		return khook(t, invocation{Args: append([]string{"apply"}, args(v)...)})
	}
	job := func() (uid, image string) {
		t.Helper()
		j, err := kc.Client.BatchV1().Jobs(ns).Get(context.Background(), "imm-migrate", metav1.GetOptions{})
		must(t, err)
		return string(j.UID), j.Spec.Template.Spec.Containers[0].Image
	}
	changes := func(out outcome) []model.Change {
		if out.Results == nil || len(out.Results.Steps) == 0 {
			t.Fatalf("no results\nstdout:\n%s\nstderr:\n%s", out.Stdout, out.Stderr)
		}
		return out.Results.Steps[0].Changes
	}
	hasChange := func(cs []model.Change, did model.Did, kind, name string) bool {
		for _, c := range cs {
			if c.Action == did && c.Kind == kind && c.Name == name {
				return true
			}
		}
		return false
	}

	expectSteps(t, apply(vals{tag: "1"}), []want{{Name: "imm", Status: model.StatusOK, Attempts: 1}})
	uid, _ := job()

	// The scenario: a ConfigMap the upgrade renders exists, made
	// by someone else. Plan and apply both refuse; the Job stays.
	shared := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "imm-shared", Namespace: ns}}
	_, err := kc.Client.CoreV1().ConfigMaps(ns).Create(context.Background(), shared, metav1.CreateOptions{})
	must(t, err)
	if ps := plan(vals{tag: "2", shared: true}); ps.Action != model.ActionFail || !strings.Contains(ps.Reason, "imm-shared") {
		t.Errorf("plan with an unowned ConfigMap in the way: %s: %s; want fail naming imm-shared", ps.Action, ps.Reason)
	}
	out := apply(vals{tag: "2", shared: true})
	expectSteps(t, out, []want{{Name: "imm", Status: model.StatusFailed, Attempts: 1, Error: "imm-shared"}})
	if cs := changes(out); len(cs) != 0 || out.Results.Changed() {
		t.Errorf("a refused upgrade reports changes %v", cs)
	}
	if u, img := job(); u != uid || img != "example.invalid/migrate:1" {
		t.Errorf("the refused upgrade touched the Job: uid %s -> %s, image %s", uid, u, img)
	}
	must(t, kc.Client.CoreV1().ConfigMaps(ns).Delete(context.Background(), "imm-shared", metav1.DeleteOptions{}))

	// A pre-upgrade hook fails after the Job was deleted: the Job is
	// created again from the rendered manifest, and every output says
	// it was replaced.
	out = apply(vals{tag: "2", hookFails: true})
	expectSteps(t, out, []want{{Name: "imm", Status: model.StatusFailed, Attempts: 1, Error: "recreated from the rendered manifest"}})
	if cs := changes(out); !hasChange(cs, model.DidReplace, "Job", "imm-migrate") || !out.Results.Changed() {
		t.Errorf("a failed upgrade that replaced the Job reports changes %v (changed %t)", cs, out.Results.Changed())
	}
	u2, img := job()
	if u2 == uid || img != "example.invalid/migrate:2" {
		t.Errorf("after the failed upgrade: Job uid %s -> %s, image %s; want a new Job of image :2", uid, u2, img)
	}

	// Admission denies the upgrade's ConfigMap: the per-object dry run
	// refuses before anything is deleted.
	admit(t, ns, `{apiGroups: ["*"], apiVersions: ["*"], resources: ["*"], operations: [CREATE, UPDATE, DELETE]}`, `objectSelector: {matchLabels: {khook.test/deny: "true"}}`)
	if ps := plan(vals{tag: "3", denied: true}); ps.Action != model.ActionFail || !strings.Contains(ps.Reason, deniedMessage) {
		t.Errorf("plan of a denied upgrade: %s: %s; want fail with the denial", ps.Action, ps.Reason)
	}
	text := applyText(vals{tag: "3", denied: true})
	if text.Code == 0 || !strings.Contains(text.Stdout+text.Stderr, deniedMessage) || strings.Contains(text.Stdout+text.Stderr, "replaced") {
		t.Errorf("apply of a denied upgrade: exit %d\nstdout:\n%s\nstderr:\n%s", text.Code, text.Stdout, text.Stderr)
	}
	if u, img := job(); u != u2 || img != "example.invalid/migrate:2" {
		t.Errorf("the denied upgrade touched the Job: uid %s -> %s, image %s", u2, u, img)
	}

	// A clean upgrade replaces the Job and says so.
	text = applyText(vals{tag: "3"})
	if all := text.Stdout + text.Stderr; text.Code != 0 || !strings.Contains(all, "replaced") || strings.Contains(all, "No changes") {
		t.Errorf("apply replacing the Job: exit %d\nstdout:\n%s\nstderr:\n%s", text.Code, text.Stdout, text.Stderr)
	}
	if u, img := job(); u == u2 || img != "example.invalid/migrate:3" {
		t.Errorf("after the upgrade: Job uid %s -> %s, image %s; want a new Job of image :3", u2, u, img)
	}
	if ps := plan(vals{tag: "3"}); ps.Action != model.ActionUnchanged {
		t.Errorf("plan after the replacement: %s: %s", ps.Action, ps.Reason)
	}
}
