package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/khook/khook/model"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// pruneSpec: step cms applies the named ConfigMaps (and, with crd, a CRD),
// step locked (prune: false) applies ConfigMaps of its own, and with mon a
// helm step installs the demo chart as release mon.
func pruneSpec(t *testing.T, ns string, cms []string, crd bool, locked []string, mon bool) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: prune}\nstate: {namespace: %s}\nsteps:\n", ns)
	manifests := func(names []string) {
		for _, n := range names {
			fmt.Fprintf(&b, "      - inline: |\n          {apiVersion: v1, kind: ConfigMap, metadata: {name: %s}, data: {k: v}}\n", n)
		}
	}
	fmt.Fprintf(&b, "  - name: cms\n    apply:\n      namespace: %s\n      manifests:\n", ns)
	manifests(cms)
	if crd {
		fmt.Fprintf(&b, "      - inline: |\n          {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: widgets.%[1]s.khook.test}, spec: {group: %[1]s.khook.test, scope: Namespaced, names: {plural: widgets, singular: widget, kind: Widget}, versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]}}\n", ns)
	}
	fmt.Fprintf(&b, "  - name: locked\n    prune: false\n    apply:\n      namespace: %s\n      manifests:\n", ns)
	manifests(locked)
	if mon {
		chart := filepath.Join(repoRoot, "test", "testdata", "charts", "demo")
		fmt.Fprintf(&b, "  - name: monitoring\n    needs: [cms]\n    helm: {chart: %s, release: mon, namespace: %s, values: {replicaCount: 1}}\n", chart, ns)
	}
	path := filepath.Join(t.TempDir(), "khook.yaml")
	must(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

// TestPrune: what leaves the spec is planned and pruned, with the reason;
// prune: false, the annotation, a replaced object and a CRD are kept, the
// plan saying why; the next plan exits 0.
func TestPrune(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := namespace(t)
	dyn, err := dynamic.NewForConfig(kc.RESTConfig)
	must(t, err)
	crdName := "widgets." + ns + ".khook.test"
	t.Cleanup(func() { _ = dyn.Resource(crdResource).Delete(context.Background(), crdName, metav1.DeleteOptions{}) })

	v1 := pruneSpec(t, ns, []string{"a", "gone", "annotated", "replaced"}, true, []string{"held"}, true)
	if out := applySpec(t, v1); out.Code != 0 {
		t.Fatalf("apply v1: exit %d\n%s%s", out.Code, out.Stdout, out.Stderr)
	}
	cms := kc.Client.CoreV1().ConfigMaps(ns)
	// Out of band: one ConfigMap annotated to be kept, one replaced (a new UID).
	_, err = cms.Patch(ctx, "annotated", types.MergePatchType, []byte(`{"metadata":{"annotations":{"khook.io/prune":"disabled"}}}`), metav1.PatchOptions{})
	must(t, err)
	must(t, cms.Delete(ctx, "replaced", metav1.DeleteOptions{}))
	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "replaced"}}, metav1.CreateOptions{FieldManager: "someone-else"})
	must(t, err)

	v2 := pruneSpec(t, ns, []string{"a"}, false, []string{"stay"}, false)
	out := khook(t, invocation{Args: []string{"plan", "-f", v2, "-o", "json", "--detailed-exitcode"}})
	if out.Code != 2 {
		t.Fatalf("plan v2 must exit 2 (changes), got %d\n%s%s", out.Code, out.Stdout, out.Stderr)
	}
	var p model.Plan
	must(t, json.Unmarshal([]byte(out.Stdout), &p))
	got := map[string]string{}
	for _, st := range p.Steps {
		for _, o := range st.Objects {
			if st.Type == model.TypePrune {
				got[st.Name+" "+o.Kind+" "+o.Name] = string(o.Action) + ": " + o.Reason
			}
		}
	}
	wants := map[string]string{
		"prune/cms ConfigMap gone":                      `delete: no longer in step "cms"`,
		"prune/cms ConfigMap annotated":                 "no-op: kept: annotated khook.io/prune: disabled",
		"prune/cms ConfigMap replaced":                  "no-op: kept: replaced since khook applied it",
		"prune/cms CustomResourceDefinition " + crdName: "no-op: kept: a CustomResourceDefinition",
		"prune/locked ConfigMap held":                   "no-op: kept: prune: false",
		"prune/monitoring HelmRelease mon":              `uninstall: step "monitoring" left the spec`,
	}
	for k, w := range wants {
		if !strings.HasPrefix(got[k], w) {
			t.Errorf("plan of %s = %q, want %q...", k, got[k], w)
		}
	}
	if len(got) != len(wants) {
		t.Errorf("plan prunes %v, want only %d objects", got, len(wants))
	}
	text := khook(t, invocation{Args: []string{"plan", "-f", v2}})
	if !strings.Contains(text.Stdout, `delete  ConfigMap `+ns+`/gone (no longer in step "cms")`) || !strings.Contains(text.Stdout, "1 to delete, 1 to uninstall") {
		t.Errorf("the terminal plan does not name the deletion and its reason:\n%s", text.Stdout)
	}

	out = applySpec(t, v2)
	if out.Code != 0 {
		t.Fatalf("apply v2: exit %d\n%s%s", out.Code, out.Stdout, out.Stderr)
	}
	if _, err := cms.Get(ctx, "gone", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap gone was not pruned: %v", err)
	}
	for _, keep := range []string{"a", "annotated", "replaced", "held"} {
		if _, err := cms.Get(ctx, keep, metav1.GetOptions{}); err != nil {
			t.Errorf("ConfigMap %s must be kept: %v", keep, err)
		}
	}
	if _, err := dyn.Resource(crdResource).Get(ctx, crdName, metav1.GetOptions{}); err != nil {
		t.Errorf("the CRD must be kept: %v", err)
	}
	var uninstalled bool
	for _, st := range out.Results.Steps {
		for _, c := range st.Changes {
			uninstalled = uninstalled || st.Name == "prune/monitoring" && c.Action == model.DidUninstall
		}
	}
	if !uninstalled {
		t.Errorf("the results do not report the release uninstalled: %+v", out.Results.Steps)
	}
	releases, err := kc.Client.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm,name=mon"})
	must(t, err)
	if len(releases.Items) != 0 {
		t.Errorf("release mon was not uninstalled: %d release secrets left", len(releases.Items))
	}
	if _, err := kc.Client.AppsV1().Deployments(ns).Get(ctx, "mon-demo", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the release's Deployment is still there: %v", err)
	}

	if out := khook(t, invocation{Args: []string{"plan", "-f", v2, "--detailed-exitcode"}}); out.Code != 0 {
		t.Errorf("the plan after pruning must exit 0, got %d\n%s%s", out.Code, out.Stdout, out.Stderr)
	}
}
