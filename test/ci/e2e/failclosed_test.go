package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/khook/khook/internal/ci/gha"
	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/command"
	"github.com/khook/khook/test/ci/citest"
)

// ciRun is one `khook ci` run of a fail-closed test: its exit, outputs,
// job summary, the PR's one comment and the JSON file it wrote.
type ciRun struct {
	res     citest.Result
	outs    map[string]string
	summary string
	comment string
}

// runCI runs command on the workspace's khook.yaml and, when file names a
// JSON output (plan-json-path, results-json-path), decodes it into into.
func runCI(t *testing.T, g *citest.GitHub, srv *githubtest.Server, command, file string, into any) ciRun {
	t.Helper()
	g.ResetFiles()
	g.Set("INPUT_COMMAND=" + command)
	res := citest.Run(t, g.Workspace, g.Environ)
	outs, _ := gha.ParseKeyValues(g.Read(t, "output"))
	if outs[file] == "" {
		t.Fatalf("%s: exit %d, no %s output: %v\n%s\n%s", command, res.Code, file, outs, res.Stdout, res.Stderr)
	}
	data, err := os.ReadFile(filepath.Join(g.Workspace, outs[file]))
	must(t, err)
	must(t, json.Unmarshal(data, into))
	cs := srv.Comments(7)
	if len(cs) != 1 {
		t.Fatalf("%s: want one PR comment, got %d", command, len(cs))
	}
	return ciRun{res: res, outs: outs, summary: g.Read(t, "summary"), comment: cs[0].Body}
}

// sinks are a run's outputs a user reads: the log, the job summary, the
// PR comment.
func (r ciRun) sinks() map[string]string {
	return map[string]string{"log": r.res.Stdout, "summary": r.summary, "comment": r.comment}
}

// The recreate that could not be undone (#39 point 1), through
// khook ci: a helm upgrade under onImmutable: recreate that changes a
// chart Job's template and renders a ConfigMap someone else created. The
// plan fails naming the ConfigMap; apply fails the same way and deletes
// nothing (the Job's UID and image unchanged); no output says anything
// was replaced. An upgrade whose pre-upgrade hook fails after the Job
// was deleted recreates it, and every output says so, never "No
// changes".
func TestHelmRecreateRefusedInEveryCIOutput(t *testing.T) {
	ns := kube.Namespace(t)
	chart, err := filepath.Abs(filepath.Join("..", "..", "testdata", "charts", "immutable"))
	must(t, err)
	srv := githubtest.New()
	defer srv.Close()
	g := newRunner(t, srv.URL, "repair.yaml", map[string]string{"command": "apply", "comment": "always"})
	write := func(tag string, shared, hookFails bool) {
		g.Write(t, "khook.yaml", fmt.Sprintf(`apiVersion: khook.io/v1
kind: Khook
metadata: {name: immutable-helm}
defaults:
  timeout: 60s
  onImmutable: recreate
steps:
  - name: imm
    helm:
      chart: %s
      namespace: %s
      values: {tag: "%s", shared: %t, hookFails: %t}
`, chart, ns, tag, shared, hookFails))
	}
	job := func() (types.UID, string) {
		t.Helper()
		j, err := kube.Client.BatchV1().Jobs(ns).Get(context.Background(), "imm-migrate", metav1.GetOptions{})
		must(t, err)
		return j.UID, j.Spec.Template.Spec.Containers[0].Image
	}
	write("1", false, false)
	var results model.Results
	if r := runCI(t, g, srv, "apply", "results-json-path", &results); r.res.Code != 0 {
		t.Fatalf("apply v1: exit %d\n%s", r.res.Code, r.res.Stdout)
	}
	uid, _ := job()
	_, err = kube.Client.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "imm-shared"}}, metav1.CreateOptions{})
	must(t, err)

	write("2", true, false)
	var plan model.Plan
	r := runCI(t, g, srv, "plan", "plan-json-path", &plan)
	if r.res.Code != 1 || r.outs["status"] != "failed" || r.outs["failed-steps"] != "imm" {
		t.Errorf("plan: exit %d outputs %v, want 1, failed, imm\n%s", r.res.Code, r.outs, r.res.Stdout)
	}
	if len(plan.Steps) != 1 || plan.Steps[0].Action != model.ActionFail || !strings.Contains(plan.Steps[0].Reason, "imm-shared") {
		t.Errorf("plan JSON: %+v, want imm planned fail naming imm-shared", plan.Steps)
	}
	for sink, text := range r.sinks() {
		if !strings.Contains(text, "imm-shared") || strings.Contains(text, "No changes") {
			t.Errorf("the plan's %s does not say why imm fails, or says No changes:\n%s", sink, text)
		}
	}

	results = model.Results{}
	r = runCI(t, g, srv, "apply", "results-json-path", &results)
	if r.res.Code != 1 || r.outs["status"] != "failed" || r.outs["failed-steps"] != "imm" || r.outs["changes"] == "true" {
		t.Errorf("apply: exit %d outputs %v, want 1, failed, imm and no change\n%s", r.res.Code, r.outs, r.res.Stdout)
	}
	if len(results.Steps) != 1 || results.Steps[0].Status != model.StatusFailed || !strings.Contains(results.Steps[0].Error, "imm-shared") || len(results.Steps[0].Changes) != 0 {
		t.Errorf("results JSON: %+v, want imm failed naming imm-shared, no change", results.Steps)
	}
	// It wrote nothing, so "No changes." is true here; what matters is
	// that no output says the Job went.
	for sink, text := range r.sinks() {
		if !strings.Contains(text, "imm-shared") || strings.Contains(text, "replaced") || strings.Contains(text, "recreated") {
			t.Errorf("the refused apply's %s does not say why, or says the Job was replaced:\n%s", sink, text)
		}
	}
	if u, img := job(); u != uid || img != "example.invalid/migrate:1" {
		t.Fatalf("the refused apply touched the Job: uid %s -> %s, image %s", uid, u, img)
	}
	must(t, kube.Client.CoreV1().ConfigMaps(ns).Delete(context.Background(), "imm-shared", metav1.DeleteOptions{}))

	// The hook fails after the Job was deleted: it is created again from
	// the rendered manifest, and every output says it was replaced.
	write("2", false, true)
	results = model.Results{}
	r = runCI(t, g, srv, "apply", "results-json-path", &results)
	if r.res.Code != 1 || r.outs["status"] != "failed" || r.outs["changes"] != "true" {
		t.Errorf("apply with a failing hook: exit %d outputs %v, want 1, failed, changes\n%s", r.res.Code, r.outs, r.res.Stdout)
	}
	replaced := false
	for _, st := range results.Steps {
		for _, c := range st.Changes {
			replaced = replaced || c.Action == model.DidReplace && c.Kind == "Job" && c.Name == "imm-migrate"
		}
	}
	if !replaced {
		t.Errorf("results JSON: %+v, want the Job replaced", results.Steps)
	}
	for sink, text := range r.sinks() {
		if !strings.Contains(text, "recreated from the rendered manifest") || strings.Contains(text, "No changes") {
			t.Errorf("the apply that replaced the Job: its %s does not say so, or says No changes:\n%s", sink, text)
		}
	}
	if u, img := job(); u == uid || img != "example.invalid/migrate:2" {
		t.Errorf("after the failed upgrade: Job uid %s -> %s, image %s; want a new Job of image :2", uid, u, img)
	}
}

// A webhook that does not answer in time refuses a helm step's object
// (#39 point 5), through khook ci: the plan fails the step with the
// sentence apply fails with, in its JSON, log, job summary, PR comment
// and an error annotation; apply fails with it and writes no ConfigMap.
func TestHelmWebhookTimeoutInEveryCIOutput(t *testing.T) {
	ns := kube.Namespace(t)
	hook := kube.SilentWebhook(t, ns)
	chart, err := filepath.Abs(filepath.Join("..", "..", "testdata", "charts", "immutable"))
	must(t, err)
	srv := githubtest.New()
	defer srv.Close()
	g := newRunner(t, srv.URL, "repair.yaml", map[string]string{"command": "plan", "comment": "always"})
	g.Write(t, "khook.yaml", fmt.Sprintf(`apiVersion: khook.io/v1
kind: Khook
metadata: {name: webhook}
steps:
  - name: app
    helm:
      chart: %s
      namespace: %s
      values: {denied: true}
`, chart, ns))
	why := `failed calling webhook "` + hook + `"`
	var plan model.Plan
	r := runCI(t, g, srv, "plan", "plan-json-path", &plan)
	if r.res.Code != 1 || r.outs["status"] != "failed" || r.outs["failed-steps"] != "app" {
		t.Errorf("plan: exit %d outputs %v, want 1, failed, app\n%s", r.res.Code, r.outs, r.res.Stdout)
	}
	if len(plan.Steps) != 1 || plan.Steps[0].Action != model.ActionFail || !strings.Contains(plan.Steps[0].Reason, why) || !strings.Contains(plan.Steps[0].Reason, "app-settings") {
		t.Errorf("plan JSON: %+v, want app planned fail: %s on app-settings", plan.Steps, why)
	}
	for sink, text := range r.sinks() {
		if !strings.Contains(text, why) {
			t.Errorf("the plan's %s does not say %q:\n%s", sink, why, text)
		}
	}
	if !hasAnnotation(annotationLine.FindAllString(r.res.Stdout, -1), "::error file=khook.yaml", "failed calling webhook") {
		t.Errorf("no error annotation at the step:\n%s", r.res.Stdout)
	}

	var results model.Results
	r = runCI(t, g, srv, "apply", "results-json-path", &results)
	if r.res.Code != 1 || r.outs["status"] != "failed" || r.outs["failed-steps"] != "app" {
		t.Errorf("apply: exit %d outputs %v, want 1, failed, app\n%s", r.res.Code, r.outs, r.res.Stdout)
	}
	if len(results.Steps) != 1 || results.Steps[0].Status != model.StatusFailed || !strings.Contains(results.Steps[0].Error, why) {
		t.Errorf("results JSON: %+v, want app failed: %s", results.Steps, why)
	}
	for sink, text := range r.sinks() {
		if !strings.Contains(text, why) {
			t.Errorf("apply's %s does not say %q:\n%s", sink, why, text)
		}
	}
	if _, err := kube.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), "app-settings", metav1.GetOptions{}); err == nil {
		t.Errorf("the refused apply wrote ConfigMap app-settings")
	}
}

// Drift repair is plan = apply for unknown too (#39 point 2): with a
// state record, the object a succeeded patch step patched is deleted out
// of band, so the step's plan is unknown (its target does not exist). Apply
// runs that step (the record would have resumed it), which fails saying
// the target is missing, never "skipped" or "unchanged since it
// succeeded"; the undrifted step is resumed.
func TestApplyRunsAResumableStepWhosePlanIsUnknown(t *testing.T) {
	ns := kube.Namespace(t)
	ctx := context.Background()
	srv := githubtest.New()
	defer srv.Close()
	g := newRunner(t, srv.URL, "repair.yaml", map[string]string{"command": "apply", "comment": "always"})
	g.Write(t, "khook.yaml", fmt.Sprintf(`apiVersion: khook.io/v1
kind: Khook
metadata: {name: unknown-repair}
state: {}
steps:
  - name: settings
    apply:
      namespace: %[1]s
      manifests:
        - inline: |
            {apiVersion: v1, kind: ConfigMap, metadata: {name: settings}, data: {region: eu-west-1}}
  - name: tweak
    timeout: 2s
    patch: {target: configmap/external, namespace: %[1]s, type: merge, patch: {data: {tuned: "true"}}}
`, ns))
	_, err := kube.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "external"}}, metav1.CreateOptions{})
	must(t, err)
	var results model.Results
	if r := runCI(t, g, srv, "apply", "results-json-path", &results); r.res.Code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.res.Code, r.res.Stdout)
	}
	must(t, kube.Client.CoreV1().ConfigMaps(ns).Delete(ctx, "external", metav1.DeleteOptions{}))
	settings, err := kube.Client.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	must(t, err)

	var plan model.Plan
	r := runCI(t, g, srv, "plan", "plan-json-path", &plan)
	planned := map[string]model.Action{}
	for _, st := range plan.Steps {
		planned[st.Name] = st.Action
	}
	if planned["tweak"] != model.ActionUnknown || planned["settings"] != model.ActionUnchanged {
		t.Fatalf("plan: %v, want tweak unknown and settings unchanged\n%s", planned, r.res.Stdout)
	}

	results = model.Results{}
	r = runCI(t, g, srv, "apply", "results-json-path", &results)
	if r.res.Code != 1 || r.outs["status"] != "failed" || r.outs["failed-steps"] != "tweak" {
		t.Errorf("apply: exit %d outputs %v, want 1, failed, tweak\n%s", r.res.Code, r.outs, r.res.Stdout)
	}
	byName := map[string]model.StepResult{}
	for _, st := range results.Steps {
		byName[st.Name] = st
	}
	tweak := byName["tweak"]
	if tweak.Status != model.StatusFailed || tweak.Skip != "" || !strings.Contains(tweak.Error, "configmap/external") || !strings.Contains(tweak.Detail, command.UnknownRerunNote) {
		t.Errorf("tweak: %s skip %q error %q detail %q, want it run, failed naming its target and saying why it ran", tweak.Status, tweak.Skip, tweak.Error, tweak.Detail)
	}
	if byName["settings"].Skip == "" {
		t.Errorf("settings: %s, want it resumed by the state record (undrifted, planned unchanged)", byName["settings"].Status)
	}
	for sink, text := range r.sinks() {
		if !strings.Contains(text, "configmap/external") {
			t.Errorf("apply's %s does not say why tweak failed:\n%s", sink, text)
		}
		for _, line := range strings.Split(text, "\n") {
			if strings.Contains(line, "tweak") && (strings.Contains(line, "unchanged since it succeeded") || strings.Contains(line, "skipped")) {
				t.Errorf("apply's %s calls the unknown step resumed: %q", sink, line)
			}
		}
	}
	now, err := kube.Client.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	must(t, err)
	if now.UID != settings.UID || now.ResourceVersion != settings.ResourceVersion {
		t.Errorf("the resumed step wrote settings: uid %s rv %s, was %s rv %s", now.UID, now.ResourceVersion, settings.UID, settings.ResourceVersion)
	}
}

// Where khook cannot tell whether a CRD holds data, it keeps it and says
// why (#39 points 5 and 6), through khook ci: a Widget is stored, then
// the CRD stops serving v1 out of band, so its objects cannot be listed;
// the CRD leaves the spec. The plan (JSON, log, job summary, PR comment)
// keeps it saying why and the word that deletes it; apply keeps it (same
// UID) and its summary and comment say why.
func TestUncountableCRDKeptInEveryCIOutput(t *testing.T) {
	ns := kube.Namespace(t)
	ctx := context.Background()
	dyn, err := dynamic.NewForConfig(kube.RESTConfig)
	must(t, err)
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	group := ns + ".khook.test"
	crdName := "widgets." + group
	t.Cleanup(func() { _ = crds.Delete(context.Background(), crdName, metav1.DeleteOptions{}) })
	srv := githubtest.New()
	defer srv.Close()
	g := newRunner(t, srv.URL, "repair.yaml", map[string]string{"command": "apply", "comment": "always"})
	write := func(withCRD bool) {
		var b strings.Builder
		fmt.Fprintf(&b, "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: uncounted}\nstate: {namespace: %s}\nsteps:\n  - name: crds\n    apply:\n      namespace: %s\n      manifests:\n", ns, ns)
		b.WriteString("      - inline: |\n          {apiVersion: v1, kind: ConfigMap, metadata: {name: anchor}, data: {k: v}}\n")
		if withCRD {
			fmt.Fprintf(&b, "      - inline: |\n          {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: %s}, spec: {group: %s, scope: Namespaced, names: {plural: widgets, singular: widget, kind: Widget}, versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]}}\n", crdName, group)
		}
		g.Write(t, "khook.yaml", b.String())
	}
	write(true)
	var results model.Results
	if r := runCI(t, g, srv, "apply", "results-json-path", &results); r.res.Code != 0 {
		t.Fatalf("apply v1: exit %d\n%s", r.res.Code, r.res.Stdout)
	}
	widgets := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}).Namespace(ns)
	w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": "Widget", "metadata": map[string]any{"name": "precious"}}}
	must(t, wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := widgets.Create(ctx, w, metav1.CreateOptions{})
		return err == nil, nil
	}))
	_, err = crds.Patch(ctx, crdName, types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/versions/0/served","value":false}]`), metav1.PatchOptions{})
	must(t, err)
	must(t, wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := widgets.List(ctx, metav1.ListOptions{})
		return apierrors.IsNotFound(err), nil
	}))
	live, err := crds.Get(ctx, crdName, metav1.GetOptions{})
	must(t, err)

	const why = "it serves no version, and objects were stored as v1 (status.storedVersions): they cannot be listed to count them"
	const word = "set prune: {crds: true}"
	write(false)
	var plan model.Plan
	r := runCI(t, g, srv, "plan", "plan-json-path", &plan)
	if r.res.Code != 0 {
		t.Errorf("plan: exit %d, want 0 (the CRD kept)\n%s", r.res.Code, r.res.Stdout)
	}
	var kept model.ObjectPlan
	for _, st := range plan.Steps {
		for _, o := range st.Objects {
			if o.Kind == "CustomResourceDefinition" && o.Name == crdName {
				kept = o
			}
		}
	}
	if kept.Action != model.ActionKeep || !strings.Contains(kept.Reason, why) || !strings.Contains(kept.Reason, word) {
		t.Errorf("plan JSON of the uncountable CRD: %+v, want keep saying %q and %q", kept, why, word)
	}
	for sink, text := range r.sinks() {
		if !strings.Contains(text, why) || !strings.Contains(text, word) {
			t.Errorf("the plan's %s does not say why the CRD is kept and the word that deletes it:\n%s", sink, text)
		}
	}

	results = model.Results{}
	r = runCI(t, g, srv, "apply", "results-json-path", &results)
	if r.res.Code != 0 {
		t.Errorf("apply: exit %d\n%s", r.res.Code, r.res.Stdout)
	}
	for _, st := range results.Steps {
		for _, c := range st.Changes {
			if c.Kind == "CustomResourceDefinition" && c.Action == model.DidDelete {
				t.Errorf("apply deleted the uncountable CRD: %+v", c)
			}
		}
	}
	for sink, text := range map[string]string{"summary": r.summary, "comment": r.comment} {
		if !strings.Contains(text, why) {
			t.Errorf("apply's %s does not say why the CRD was kept:\n%s", sink, text)
		}
	}
	now, err := crds.Get(ctx, crdName, metav1.GetOptions{})
	must(t, err)
	if now.GetUID() != live.GetUID() {
		t.Errorf("the CRD was replaced or deleted: uid %s, was %s", now.GetUID(), live.GetUID())
	}
}
