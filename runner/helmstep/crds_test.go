package helmstep

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/objdiff"
	"github.com/khook/khook/runner/kube/wait"
	"github.com/khook/khook/spec"
)

// e2eChart is a fixture chart of the end-to-end tests (test/e2e/testdata).
func e2eChart(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "test", "e2e", "testdata", "charts", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func crdObject(t *testing.T, group string, versions string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	text := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.` + group + `}
spec:
  group: ` + group + `
  scope: Namespaced
  names: {kind: Widget, plural: widgets}
  versions:
` + versions
	if err := yaml.Unmarshal([]byte(text), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

const widgetSchema = `    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: string}, color: {type: string}}}
`

// The one CRD check, on the real control plane: a stored version dropped
// or no longer served while an object exists is refused (the sentence
// names the CRD, the version and the count); a field removed that an
// object carries is a warning; the apply decision (PlanApply, apply steps
// and crds/ alike) refuses before anything is written.
func TestCheckCRDChange(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	group := f.ns + ".check.khook.io"
	live := crdObject(t, group, "  - name: v1alpha1\n    served: true\n    storage: true\n"+widgetSchema)
	crds := f.clients.Dynamic.Resource(kube.CRDMapping.Resource)
	if _, err := crds.Create(ctx, live, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crds.Delete(context.Background(), live.GetName(), metav1.DeleteOptions{}) })
	if err := f.clients.WaitCRDEstablished(ctx, live.GetName()); err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: group, Version: "v1alpha1", Resource: "widgets"}
	w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1alpha1", "kind": "Widget",
		"metadata": map[string]any{"name": "w"}, "spec": map[string]any{"color": "red"}}}
	if _, err := f.clients.Dynamic.Resource(gvr).Namespace(f.ns).Create(ctx, w, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stored, err := crds.Get(ctx, live.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	var refused *kube.CRDRefusedError
	dropped := crdObject(t, group, "  - name: v1\n    served: true\n    storage: true\n"+widgetSchema)
	_, err = f.clients.CheckCRDChange(ctx, stored, dropped)
	if !errors.As(err, &refused) {
		t.Fatalf("dropping v1alpha1: %v, want a refusal", err)
	}
	mustContain(t, "refusal", err.Error(), "CRD widgets."+group+": the update drops version v1alpha1", "1 Widget object in 1 namespace")

	unserved := crdObject(t, group, "  - name: v1alpha1\n    served: false\n    storage: false\n"+widgetSchema+"  - name: v1\n    served: true\n    storage: true\n"+widgetSchema)
	_, err = f.clients.CheckCRDChange(ctx, stored, unserved)
	if !errors.As(err, &refused) {
		t.Fatalf("unserving v1alpha1: %v, want a refusal", err)
	}
	mustContain(t, "refusal", err.Error(), "stops serving version v1alpha1", "while 1 Widget object in 1 namespace exist")

	noColor := crdObject(t, group, "  - name: v1alpha1\n    served: true\n    storage: true\n"+strings.Replace(widgetSchema, ", color: {type: string}", "", 1))
	warnings, err := f.clients.CheckCRDChange(ctx, stored, noColor)
	if err != nil || len(warnings) != 1 {
		t.Fatalf("removing spec.color: %v, %v; want one warning", warnings, err)
	}
	mustContain(t, "warning", warnings[0], "version v1alpha1: the update removes field spec.color, which 1 Widget object carry")

	// Apply's decision refuses it before sending anything.
	if _, err := f.clients.PlanApply(ctx, dropped, kube.CRDMapping, true, objdiff.Options{}); !errors.As(err, &refused) {
		t.Errorf("PlanApply of the CRD without v1alpha1: %v, want the refusal", err)
	}
	after, err := crds.Get(ctx, live.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.GetResourceVersion() != stored.GetResourceVersion() {
		t.Errorf("the refused change was written")
	}
}

// crds/ CRDs are upgraded with the chart (the default), created only with
// crds: create, left alone with crds: skip; the upgrade's custom resource
// uses the new field.
func TestChartCRDsUpgrade(t *testing.T) {
	f := newFixture(t)
	crd := "widgets.up.e2e.khook.io"
	crds := f.clients.Dynamic.Resource(kube.CRDMapping.Resource)
	t.Cleanup(func() { _ = crds.Delete(context.Background(), crd, metav1.DeleteOptions{}) })
	_ = crds.Delete(context.Background(), crd, metav1.DeleteOptions{})
	if err := wait.Gone(t.Context(), f.clients, []kube.Deleted{{Mapping: kube.CRDMapping, Name: crd}}); err != nil {
		t.Fatal(err)
	}

	out := f.run(f.step("up", spec.Helm{Chart: e2eChart(t, "crdup-1")}), 2*time.Minute)
	if len(out.Changes) == 0 || out.Changes[0].Kind != "CustomResourceDefinition" || out.Changes[0].Action != model.DidCreate {
		t.Errorf("install changes = %+v, want the CRD created first", out.Changes)
	}
	hasColor := func() bool {
		live, err := crds.Get(t.Context(), crd, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		versions, _, _ := unstructured.NestedSlice(live.Object, "spec", "versions")
		_, found, _ := unstructured.NestedMap(versions[0].(map[string]any), "schema", "openAPIV3Schema", "properties", "spec", "properties", "color")
		return found
	}
	// crds: skip (and create: it exists) leave the 1.0.0 CRD: the 2.0.0
	// custom resource with spec.color is then refused.
	for _, mode := range []string{spec.CRDsSkip, spec.CRDsCreate} {
		_, err := f.try(f.step("up", spec.Helm{Chart: e2eChart(t, "crdup-2"), CRDs: mode}), 2*time.Minute)
		if err == nil || !strings.Contains(err.Error(), "color") || hasColor() {
			t.Errorf("crds: %s: %v (CRD has color: %t), want the CRD left and spec.color refused", mode, err, hasColor())
		}
	}
	out = f.run(f.step("up", spec.Helm{Chart: e2eChart(t, "crdup-2")}), 2*time.Minute)
	if !hasColor() || len(out.Changes) == 0 || out.Changes[0].Action != model.DidConfigure {
		t.Errorf("upgrade: changes %+v, CRD has color %t: want the CRD configured", out.Changes, hasColor())
	}
}

func TestDropped(t *testing.T) {
	old := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: gone\n"
	next := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep\n  namespace: demo\n"
	got, err := dropped(old, next, "demo")
	if err != nil || len(got) != 1 || got[0].GetName() != "gone" {
		t.Fatalf("dropped = %v, %v, want the Service only", got, err)
	}
	// A manifest that does not read drops nothing that can be told: an
	// error, so no decision deletes anything (fail closed).
	if got, err := dropped(old, "apiVersion: v1\nkind: [ConfigMap\n", "demo"); err == nil {
		t.Errorf("dropped of an unreadable manifest = %v, nil; want an error", got)
	}
}
