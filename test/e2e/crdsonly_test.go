package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/khook/khook/model"
	"github.com/khook/khook/test/chartsrc"
	"github.com/khook/khook/test/e2e/apiproxy"
)

// crds: only (#41), the helmfile bootstrap `template --include-crds |
// select CRDs | kubectl apply --server-side`, with the built binary and
// the chart from the HTTP repository.

const gizmosCRD = "gizmos.crdsonly.khook.io"

// crdsOnlyCharts serves the test chart crdsonly as 0.1.0, 0.2.0 (its
// crds/ Gizmo CRD gains spec.color) and 0.3.0 (the Gizmo CRD drops
// v1alpha1 for v1).
func crdsOnlyCharts(t *testing.T) *chartsrc.HTTPRepo {
	t.Helper()
	dir := t.TempDir()
	tgzs := []string{chartsrc.Package(t, "crdsonly", dir)}
	for _, v := range []struct{ version, old, new string }{
		{"0.2.0", "size: {type: string}", "size: {type: string}\n              color: {type: string}"},
		{"0.3.0", "- name: v1alpha1", "- name: v1"},
	} {
		ch, err := loader.Load(chartsrc.ChartDir("crdsonly"))
		must(t, err)
		ch.Metadata.Version = v.version
		for _, f := range ch.Files {
			if f.Name == "crds/gizmo.yaml" {
				f.Data = []byte(strings.Replace(string(f.Data), v.old, v.new, 1))
			}
		}
		p, err := chartutil.Save(ch, dir)
		must(t, err)
		tgzs = append(tgzs, p)
	}
	return chartsrc.NewHTTPRepoFromFiles(t, chartsrc.Auth{}, tgzs...)
}

func crdsOnlySpec(t *testing.T, ns, repo, version, extra string) string {
	return chartSpec(t, ns, fmt.Sprintf("    chart: crdsonly\n    repo: %s\n    version: %s\n    crds: only\n    values: {group: %s.crdsonly.e2e.khook.io}\n%s", repo, version, ns, extra))
}

// Plan predicts each CRD's create; apply creates the two CRDs (crds/ and
// templated), Established, and nothing else: no release record, no hook,
// no ConfigMap, no custom resource. A second apply writes nothing and the
// plan says unchanged. Chart 0.2.0 changes the crds/ CRD: configure, with
// its diff, applied. Chart 0.3.0 drops the version a Gizmo is stored in:
// plan fail and apply fail with the same sentence, nothing written.
func TestCRDsOnlyAppliesOnlyTheChartsCRDs(t *testing.T) {
	ns := namespace(t)
	things := "things." + ns + ".crdsonly.e2e.khook.io"
	dropCRD(t, things)
	dropCRD(t, gizmosCRD)
	repo := crdsOnlyCharts(t)
	v1 := crdsOnlySpec(t, ns, repo.URL, "0.1.0", "")

	p := planJSON(t, nil, v1)
	if p.Steps[0].Action != model.ActionCreate || len(p.Steps[0].Objects) != 2 {
		t.Fatalf("plan: %s (%s), objects %+v; want create of the 2 CRDs", p.Steps[0].Action, p.Steps[0].Reason, p.Steps[0].Objects)
	}
	for _, n := range []string{things, gizmosCRD} {
		if o := planObject(p, "CustomResourceDefinition", n); o == nil || o.Action != model.ActionCreate {
			t.Errorf("plan: CRD %s %+v, want create", n, o)
		}
	}
	// The reason ends with the chart's digest (#47).
	if want := "chart crdsonly@0.1.0: 2 CRDs created; chart sha256:"; !strings.HasPrefix(p.Steps[0].Reason, want) {
		t.Errorf("plan reason %q, want %q", p.Steps[0].Reason, want)
	}
	text := khook(t, invocation{Args: []string{"plan", "-f", v1}})
	for _, w := range []string{"create", "CustomResourceDefinition " + gizmosCRD, "CustomResourceDefinition " + things, "crds: only, no release"} {
		if !strings.Contains(text.Stdout, w) {
			t.Errorf("text plan does not say %q:\n%s", w, text.Stdout)
		}
	}

	out := khook(t, invocation{Args: []string{"apply", "-f", v1, "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusOK, Attempts: 1}})
	if got := out.Results.Steps[0].Changes; len(got) != 2 || got[0].Action != model.DidCreate || got[1].Action != model.DidCreate {
		t.Errorf("apply changes %+v, want the 2 CRDs created", got)
	}
	for _, n := range []string{things, gizmosCRD} {
		crd, err := dyn(t).Resource(crdGVR).Get(t.Context(), n, metav1.GetOptions{})
		must(t, err)
		if !crdEstablished(crd) {
			t.Errorf("CRD %s is not Established after apply", n)
		}
	}
	if s, err := kc.Client.CoreV1().Secrets(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "owner=helm"}); err != nil || len(s.Items) != 0 {
		t.Errorf("Helm release records in %s: %v %v; want none", ns, err, s)
	}
	cms, err := kc.Client.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{})
	must(t, err)
	for _, cm := range cms.Items {
		if strings.HasPrefix(cm.Name, "app-") {
			t.Errorf("ConfigMap %s exists: crds: only applies CRDs alone and runs no hook", cm.Name)
		}
	}
	gizmos := dyn(t).Resource(schema.GroupVersionResource{Group: "crdsonly.khook.io", Version: "v1alpha1", Resource: "gizmos"}).Namespace(ns)
	if _, err := gizmos.Get(t.Context(), "app", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Gizmo app: %v; want not found", err)
	}

	proxy := apiproxy.Start(t, kc.RESTConfig)
	again := khook(t, invocation{Args: []string{"apply", "-f", v1, "-o", "json"}, Kubeconfig: proxy.Kubeconfig})
	expectSteps(t, again, []want{{Name: "app", Status: model.StatusOK, Attempts: 1}})
	if writes, _ := proxy.Writes(); len(writes) != 0 {
		t.Errorf("the converged apply wrote: %v", writes)
	}
	if p = planJSON(t, nil, v1); p.Steps[0].Action != model.ActionUnchanged || p.Changes {
		t.Errorf("converged plan: %s (%s)", p.Steps[0].Action, p.Steps[0].Reason)
	}
	if code := khook(t, invocation{Args: []string{"plan", "-f", v1, "--detailed-exitcode"}}).Code; code != 0 {
		t.Errorf("converged plan --detailed-exitcode: exit %d, want 0", code)
	}

	v2 := crdsOnlySpec(t, ns, repo.URL, "0.2.0", "")
	p = planJSON(t, nil, v2)
	if o := planObject(p, "CustomResourceDefinition", gizmosCRD); p.Steps[0].Action != model.ActionConfigure || o == nil || o.Action != model.ActionConfigure {
		t.Errorf("plan of 0.2.0: %s (%s), Gizmo CRD %+v; want configure", p.Steps[0].Action, p.Steps[0].Reason, o)
	}
	if o := planObject(p, "CustomResourceDefinition", things); o == nil || o.Action != model.ActionUnchanged {
		t.Errorf("plan of 0.2.0: Thing CRD %+v, want unchanged", o)
	}
	if !strings.Contains(p.Steps[0].Diff, "color") {
		t.Errorf("the plan's diff does not show the new field:\n%s", p.Steps[0].Diff)
	}
	out = khook(t, invocation{Args: []string{"apply", "-f", v2, "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusOK, Attempts: 1}})
	crd, err := dyn(t).Resource(crdGVR).Get(t.Context(), gizmosCRD, metav1.GetOptions{})
	must(t, err)
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	if _, ok, _ := unstructured.NestedMap(versions[0].(map[string]any), "schema", "openAPIV3Schema", "properties", "spec", "properties", "color"); !ok {
		t.Errorf("CRD %s has no spec.color after apply of 0.2.0", gizmosCRD)
	}

	// A Gizmo stored in v1alpha1, which 0.3.0 drops.
	createServed(t, gizmos, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "crdsonly.khook.io/v1alpha1", "kind": "Gizmo", "metadata": map[string]any{"name": "precious"}}})
	before, err := dyn(t).Resource(crdGVR).Get(t.Context(), gizmosCRD, metav1.GetOptions{})
	must(t, err)
	v3 := crdsOnlySpec(t, ns, repo.URL, "0.3.0", "")
	const why = "CRD gizmos.crdsonly.khook.io: the update drops version v1alpha1, which status.storedVersions lists, with 1 Gizmo object in 1 namespace stored"
	if p = planJSON(t, nil, v3); p.Steps[0].Action != model.ActionFail || !strings.Contains(p.Steps[0].Reason, why) {
		t.Errorf("plan of 0.3.0: %s (%s), want fail: %s", p.Steps[0].Action, p.Steps[0].Reason, why)
	}
	out = khook(t, invocation{Args: []string{"apply", "-f", v3, "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusFailed, Attempts: 1, Error: why}})
	if p.Steps[0].Reason != out.Results.Steps[0].Error {
		t.Errorf("plan and apply differ:\nplan:  %s\napply: %s", p.Steps[0].Reason, out.Results.Steps[0].Error)
	}
	text = khook(t, invocation{Args: []string{"apply", "-f", v3}})
	if text.Code == 0 || !strings.Contains(text.Stdout+text.Stderr, why) {
		t.Errorf("text apply of 0.3.0: exit %d, want the refusal\nstdout:\n%s\nstderr:\n%s", text.Code, text.Stdout, text.Stderr)
	}
	after, err := dyn(t).Resource(crdGVR).Get(t.Context(), gizmosCRD, metav1.GetOptions{})
	must(t, err)
	if after.GetResourceVersion() != before.GetResourceVersion() {
		t.Errorf("the refused CRD change was written: resourceVersion %s -> %s", before.GetResourceVersion(), after.GetResourceVersion())
	}
	if _, err := gizmos.Get(t.Context(), "precious", metav1.GetOptions{}); err != nil {
		t.Errorf("Gizmo precious after the refused apply: %v", err)
	}
}

func crdEstablished(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// The state record keeps a crds: only step's CRDs as its inventory: a CRD
// the chart stops rendering is pruned under pruning's rules, kept by
// default (plan and apply say why), deleted with prune: {crds: true}.
func TestCRDsOnlyPrunesAsTheRulesSay(t *testing.T) {
	ns := namespace(t)
	things := "things." + ns + ".crdsonly.e2e.khook.io"
	dropCRD(t, things)
	dropCRD(t, gizmosCRD)
	repo := chartsrc.NewHTTPRepo(t, chartsrc.Auth{}, "crdsonly")
	file := func(crd bool, prune string) string {
		text := fmt.Sprintf("apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: crdsonly}\nstate: {namespace: %[1]s}\nsteps:\n- name: app\n%[5]s  helm:\n    namespace: %[1]s\n    chart: crdsonly\n    repo: %[2]s\n    crds: only\n    values: {crd: %[3]t, group: %[4]s.crdsonly.e2e.khook.io}\n",
			ns, repo.URL, crd, ns, prune)
		path := filepath.Join(t.TempDir(), "khook.yaml")
		must(t, os.WriteFile(path, []byte(text), 0o644))
		return path
	}
	pruned := func(f string) (model.ObjectPlan, bool) {
		t.Helper()
		pl := khook(t, invocation{Args: []string{"plan", "-f", f, "-o", "json"}})
		var p model.Plan
		if err := json.Unmarshal([]byte(pl.Stdout), &p); err != nil {
			t.Fatalf("plan: %v\n%s\n%s", err, pl.Stdout, pl.Stderr)
		}
		for _, s := range p.Steps {
			for _, o := range s.Objects {
				if s.Name == model.PruneStepName("app") && o.Name == things {
					return o, true
				}
			}
		}
		return model.ObjectPlan{}, false
	}
	out := khook(t, invocation{Args: []string{"apply", "-f", file(true, ""), "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusOK, Attempts: 1}})
	if _, ok := pruned(file(true, "")); ok {
		t.Errorf("the converged spec plans a prune of %s", things)
	}

	// The chart stops rendering the templated CRD: kept by default.
	const kept = "kept: a CustomResourceDefinition: deleting it deletes every resource of its kind"
	if o, ok := pruned(file(false, "")); !ok || o.Action != model.ActionNoop || !strings.Contains(o.Reason, kept) {
		t.Errorf("plan without the templated CRD: prune of %s %+v (found %t), want no-op: %s", things, o, ok, kept)
	}
	out = khook(t, invocation{Args: []string{"apply", "-f", file(false, ""), "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusOK, Attempts: 1}, {Name: model.PruneStepName("app"), Status: model.StatusOK, Attempts: 1}})
	if _, err := dyn(t).Resource(crdGVR).Get(t.Context(), things, metav1.GetOptions{}); err != nil {
		t.Fatalf("CRD %s after the apply that keeps it: %v", things, err)
	}

	// Rendered again, then dropped with prune: {crds: true}: deleted.
	out = khook(t, invocation{Args: []string{"apply", "-f", file(true, ""), "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusOK, Attempts: 1}})
	del := file(false, "  prune: {crds: true}\n")
	if o, ok := pruned(del); !ok || o.Action != model.ActionDelete {
		t.Errorf("plan with prune: {crds: true}: prune of %s %+v (found %t), want delete", things, o, ok)
	}
	out = khook(t, invocation{Args: []string{"apply", "-f", del, "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusOK, Attempts: 1}, {Name: model.PruneStepName("app"), Status: model.StatusOK, Attempts: 1}})
	if _, err := dyn(t).Resource(crdGVR).Get(t.Context(), things, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("CRD %s after prune: {crds: true}: %v, want gone", things, err)
	}
	if _, err := dyn(t).Resource(crdGVR).Get(t.Context(), gizmosCRD, metav1.GetOptions{}); err != nil {
		t.Errorf("CRD %s, which the chart still renders: %v", gizmosCRD, err)
	}
}

// A step that installed the chart as a release and then says crds: only:
// the plan uninstalls the release (pruning), apply does, and every CRD
// stays: crds/ and templated.
func TestCRDsOnlyTakesOverFromARelease(t *testing.T) {
	ns := namespace(t)
	things := "things." + ns + ".crdsonly.e2e.khook.io"
	dropCRD(t, things)
	dropCRD(t, gizmosCRD)
	repo := chartsrc.NewHTTPRepo(t, chartsrc.Auth{}, "crdsonly")
	file := func(crds string) string {
		text := fmt.Sprintf("apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: crdsonly}\nstate: {namespace: %[1]s}\nsteps:\n- name: app\n  helm:\n    namespace: %[1]s\n    chart: crdsonly\n    repo: %[2]s\n%[3]s    values: {group: %[1]s.crdsonly.e2e.khook.io}\n", ns, repo.URL, crds)
		path := filepath.Join(t.TempDir(), "khook.yaml")
		must(t, os.WriteFile(path, []byte(text), 0o644))
		return path
	}
	out := khook(t, invocation{Args: []string{"apply", "-f", file(""), "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusOK, Attempts: 1}})

	only := file("    crds: only\n")
	pl := khook(t, invocation{Args: []string{"plan", "-f", only, "-o", "json"}})
	var p model.Plan
	must(t, json.Unmarshal([]byte(pl.Stdout), &p))
	var uninstall bool
	for _, s := range p.Steps {
		if s.Name == "app" && s.Action != model.ActionUnchanged {
			t.Errorf("plan of crds: only over the release's CRDs: %s (%s), want unchanged", s.Action, s.Reason)
		}
		if s.Name == model.PruneStepName("app") && s.Action == model.ActionUninstall {
			uninstall = true
		}
	}
	if !uninstall {
		t.Errorf("the plan does not uninstall the release:\n%s", pl.Stdout)
	}
	out = khook(t, invocation{Args: []string{"apply", "-f", only, "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusOK, Attempts: 1}, {Name: model.PruneStepName("app"), Status: model.StatusOK, Attempts: 1}})
	for _, n := range []string{things, gizmosCRD} {
		if _, err := dyn(t).Resource(crdGVR).Get(t.Context(), n, metav1.GetOptions{}); err != nil {
			t.Errorf("CRD %s after the release was uninstalled: %v", n, err)
		}
	}
	if s, err := kc.Client.CoreV1().Secrets(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "owner=helm"}); err != nil || len(s.Items) != 0 {
		t.Errorf("Helm release records after the uninstall: %v %d", err, len(s.Items))
	}
	if p := planJSON(t, nil, only); p.Steps[0].Action != model.ActionUnchanged || p.Changes {
		t.Errorf("plan after the handover: %s (%s), changes %t", p.Steps[0].Action, p.Steps[0].Reason, p.Changes)
	}
}
