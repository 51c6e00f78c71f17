package helmstep

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/test/chartsrc"
)

// crds: only from the HTTP chart repository: plan predicts each CRD's
// create, apply creates exactly the two CRDs (crds/ and templated), both
// Established, with no release record, no hook and no other object; the
// re-run writes nothing and plans unchanged; a values change that changes
// the templated CRD plans and applies configure of that CRD alone.
func TestCRDsOnly(t *testing.T) {
	f := newFixture(t)
	repo := chartsrc.NewHTTPRepo(t, chartsrc.Auth{}, "crdsonly")
	group := f.ns + ".crdsonly.khook.io"
	things, gizmos := "things."+group, "gizmos.crdsonly.khook.io"
	t.Cleanup(func() {
		for _, n := range []string{things, gizmos} {
			_ = f.clients.Dynamic.Resource(kube.CRDMapping.Resource).Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	})
	st := f.step("ops", spec.Helm{Chart: "crdsonly", Repo: repo.URL, Version: chartsrc.Version, CRDs: spec.CRDsOnly, Values: map[string]any{"group": group}})

	plan := func() runner.Prediction {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
		defer cancel()
		p, err := f.exec.Plan(kube.WithLiveCache(ctx), st, runner.PlanInput{})
		if err != nil {
			t.Fatalf("plan: %v", err)
		}
		return p
	}
	actions := func(objs []runner.PlannedObject) map[string]model.Action {
		out := map[string]model.Action{}
		for _, o := range objs {
			if o.Kind != "CustomResourceDefinition" {
				t.Errorf("plan has %s %s: crds: only plans CRDs alone", o.Kind, o.Name)
			}
			out[o.Name] = o.Action
		}
		return out
	}

	p := plan()
	if p.Action != model.ActionCreate || actions(p.Objects)[things] != model.ActionCreate || actions(p.Objects)[gizmos] != model.ActionCreate || len(p.Objects) != 2 {
		t.Fatalf("first plan: %s (%s) %v, want create of both CRDs", p.Action, p.Reason, actions(p.Objects))
	}
	mustContain(t, "plan reason", p.Reason, "crdsonly@0.1.0", "2 CRDs created")

	out := f.run(st, stepTimeout)
	if out.Writes != 2 || len(out.Changes) != 2 || out.Inventory == nil || len(out.Inventory.Items) != 2 {
		t.Fatalf("apply: %q, %d writes, changes %+v, inventory %+v; want the 2 CRDs created and recorded", out.Detail, out.Writes, out.Changes, out.Inventory)
	}
	for _, it := range out.Inventory.Items {
		if it.Kind != "CustomResourceDefinition" || it.Group != "apiextensions.k8s.io" || it.UID == "" || it.Adopted {
			t.Errorf("inventory item %+v, want a CRD with its UID, created by khook", it)
		}
	}
	ctx := context.Background()
	for _, n := range []string{things, gizmos} {
		crd, err := f.clients.Dynamic.Resource(kube.CRDMapping.Resource).Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("CRD %s: %v", n, err)
		}
		if !established(crd) {
			t.Errorf("CRD %s is not Established after apply", n)
		}
		if n == things && (crd.GetLabels()["app.kubernetes.io/instance"] != "ops" || crd.GetLabels()["crdsonly.khook.io/namespace"] != f.ns) {
			t.Errorf("CRD %s labels %v: not rendered with the release name and namespace", n, crd.GetLabels())
		}
	}
	if n := f.revisions("ops"); n != 0 {
		t.Errorf("%d Helm release records: crds: only stores none", n)
	}
	for _, cm := range []string{"ops-settings", "ops-hooked"} {
		if _, err := testCluster.Client.CoreV1().ConfigMaps(f.ns).Get(ctx, cm, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("ConfigMap %s: %v; want not found (crds: only applies CRDs alone, and no hook)", cm, err)
		}
	}
	list, err := f.clients.Dynamic.Resource(schema.GroupVersionResource{Group: "crdsonly.khook.io", Version: "v1alpha1", Resource: "gizmos"}).Namespace(f.ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 0 {
		t.Errorf("Gizmos in %s: %v, %d; want none", f.ns, err, len(list.Items))
	}

	out = f.run(st, stepTimeout)
	if out.Writes != 0 || out.Changes[0].Action != model.DidUnchanged || out.Changes[1].Action != model.DidUnchanged {
		t.Errorf("re-run: %q with %d writes, %+v; want both unchanged, no write", out.Detail, out.Writes, out.Changes)
	}
	mustContain(t, "re-run detail", out.Detail, "2 CRDs unchanged")
	if p = plan(); p.Action != model.ActionUnchanged {
		t.Errorf("converged plan: %s (%s)", p.Action, p.Reason)
	}

	st.Helm.Values = map[string]any{"group": group, "color": "blue"}
	p = plan()
	if got := actions(p.Objects); p.Action != model.ActionConfigure || got[things] != model.ActionConfigure || got[gizmos] != model.ActionUnchanged {
		t.Fatalf("plan of color: %s (%s) %v; want configure of %s alone", p.Action, p.Reason, got, things)
	}
	out = f.run(st, stepTimeout)
	if out.Writes != 1 {
		t.Errorf("apply of color: %q with %d writes, want 1", out.Detail, out.Writes)
	}
	crd, err := f.clients.Dynamic.Resource(kube.CRDMapping.Resource).Get(ctx, things, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := unstructured.NestedMap(crd.Object, "spec", "versions"); ok {
		t.Fatal("spec.versions is not a list")
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	if _, ok, _ := unstructured.NestedMap(versions[0].(map[string]any), "schema", "openAPIV3Schema", "properties", "spec", "properties", "color"); !ok {
		t.Errorf("CRD %s has no spec.color after the apply", things)
	}

	// The chart stops setting spec.color: the apply removes the field
	// khook set, so plan and apply say configure.
	st.Helm.Values = map[string]any{"group": group}
	if p = plan(); p.Action != model.ActionConfigure || actions(p.Objects)[things] != model.ActionConfigure {
		t.Errorf("plan without color: %s (%s) %v; want configure of %s", p.Action, p.Reason, actions(p.Objects), things)
	}
	if out = f.run(st, stepTimeout); out.Writes != 1 {
		t.Errorf("apply without color: %q with %d writes, want 1", out.Detail, out.Writes)
	}
	crd, err = f.clients.Dynamic.Resource(kube.CRDMapping.Resource).Get(ctx, things, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	versions, _, _ = unstructured.NestedSlice(crd.Object, "spec", "versions")
	if _, ok, _ := unstructured.NestedMap(versions[0].(map[string]any), "schema", "openAPIV3Schema", "properties", "spec", "properties", "color"); ok {
		t.Errorf("CRD %s still has spec.color after the chart dropped it", things)
	}
	if out = f.run(st, stepTimeout); out.Writes != 0 {
		t.Errorf("converged again: %q with %d writes, want none", out.Detail, out.Writes)
	}
}

func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// crds: only from the OCI registry: the CRDs applied, then a converged
// re-run with no write.
func TestCRDsOnlyFromOCI(t *testing.T) {
	f := newFixture(t)
	auth := chartsrc.Auth{Username: "ci", Password: "crds-s3cret"}
	reg := chartsrc.NewOCIRegistry(t, auth)
	ref := reg.Push(t, "crdsonly")
	group := f.ns + ".oci.crdsonly.khook.io"
	t.Cleanup(func() {
		for _, n := range []string{"things." + group, "gizmos.crdsonly.khook.io"} {
			_ = f.clients.Dynamic.Resource(kube.CRDMapping.Resource).Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	})
	st := f.step("ops", spec.Helm{Chart: ref, Version: chartsrc.Version, Auth: &spec.Auth{Username: auth.Username, Password: auth.Password}, CRDs: spec.CRDsOnly, Values: map[string]any{"group": group}})
	out := f.run(st, stepTimeout)
	if len(out.Changes) != 2 || out.Changes[0].Action != model.DidCreate || out.Changes[1].Action != model.DidCreate || f.revisions("ops") != 0 {
		t.Fatalf("apply: %q, %+v, %d release records; want the 2 CRDs created and no release", out.Detail, out.Changes, f.revisions("ops"))
	}
	mustNotContain(t, "detail", out.Detail, auth.Password)
	if out = f.run(st, stepTimeout); out.Writes != 0 {
		t.Errorf("re-run: %q with %d writes, want none", out.Detail, out.Writes)
	}
}

// A CRD the API server refuses (an invalid scope) is plan's failure with
// the sentence apply then fails with, and apply writes nothing.
func TestCRDsOnlyRefusedByTheServer(t *testing.T) {
	f := newFixture(t)
	group := f.ns + ".bad.crdsonly.khook.io"
	// A crds/ CRD of its own: the one other tests share may be going when
	// this one starts, and waiting for it raced them.
	chart, gizmos := t.TempDir(), "gizmos.gizmo."+group
	if err := os.CopyFS(chart, os.DirFS(chartsrc.ChartDir("crdsonly"))); err != nil {
		t.Fatal(err)
	}
	crd := filepath.Join(chart, "crds", "gizmo.yaml")
	b, err := os.ReadFile(crd)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(crd, []byte(strings.ReplaceAll(string(b), "crdsonly.khook.io", "gizmo."+group)), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range []string{"things." + group, gizmos} {
			_ = f.clients.Dynamic.Resource(kube.CRDMapping.Resource).Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	})
	st := f.step("bad", spec.Helm{Chart: chart, CRDs: spec.CRDsOnly, Values: map[string]any{"group": group, "scope": "Galactic"}})
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	_, perr := f.exec.Plan(kube.WithLiveCache(ctx), st, runner.PlanInput{})
	out, aerr := f.try(st, stepTimeout)
	if perr == nil || aerr == nil || perr.Error() != aerr.Error() {
		t.Fatalf("plan: %v\napply: %v\nwant the same failure", perr, aerr)
	}
	mustContain(t, "failure", aerr.Error(), "things."+group, "Galactic")
	if strings.Contains(aerr.Error(), "\n") {
		t.Errorf("the failure is not one line: %q", aerr)
	}
	if _, err := f.clients.Dynamic.Resource(kube.CRDMapping.Resource).Get(ctx, "things."+group, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused CRD exists: %v", err)
	}
	if out.Writes != 0 || len(out.Changes) != 0 {
		t.Errorf("the refused apply wrote %d, changes %+v; want nothing, crds/ CRD included", out.Writes, out.Changes)
	}
	if _, err := f.clients.Dynamic.Resource(kube.CRDMapping.Resource).Get(ctx, gizmos, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the crds/ CRD was written although the step failed: %v", err)
	}
}
