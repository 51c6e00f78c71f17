package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/model"
	"github.com/khook/khook/test/cluster"
)

// The CRD lifecycle (#36, docs/charts.md "CRDs"), with the built binary:
// crds/ upgraded, stored versions protected, CRDs holding data kept.

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

func dyn(t *testing.T) dynamic.Interface {
	t.Helper()
	d, err := dynamic.NewForConfig(kc.RESTConfig)
	must(t, err)
	return d
}

// dropCRD deletes a cluster-wide CRD a test made, at its end.
func dropCRD(t *testing.T, name string) {
	t.Cleanup(func() {
		_ = dyn(t).Resource(crdGVR).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// createServed creates a custom resource of a CRD Helm just created (the
// release does not wait for it).
func createServed(t *testing.T, ri dynamic.ResourceInterface, obj *unstructured.Unstructured) {
	t.Helper()
	cluster.CreateServed(t, ri, obj)
}

func planObject(p model.Plan, kind, name string) *model.ObjectPlan {
	for i, o := range p.Steps[0].Objects {
		if o.Kind == kind && o.Name == name {
			return &p.Steps[0].Objects[i]
		}
	}
	return nil
}

// A crds/ CRD gains a field (chart 1.0.0 -> 2.0.0): the plan shows the CRD
// change and no failure, and the custom resource that uses the new field
// applies in the same run.
func TestCRDsUpgradeWithTheChart(t *testing.T) {
	ns := namespace(t)
	dropCRD(t, "widgets.up.e2e.khook.io")
	v1 := chartSpec(t, ns, "    chart: "+testdata("charts", "crdup-1")+"\n")
	out := khook(t, invocation{Args: []string{"apply", "-f", v1, "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusOK, Attempts: 1}})

	v2 := chartSpec(t, ns, "    chart: "+testdata("charts", "crdup-2")+"\n")
	p := planJSON(t, nil, v2)
	if p.Steps[0].Action != model.ActionUpgrade {
		t.Fatalf("plan of 2.0.0: %s (%s), want upgrade", p.Steps[0].Action, p.Steps[0].Reason)
	}
	if o := planObject(p, "CustomResourceDefinition", "widgets.up.e2e.khook.io"); o == nil || o.Action != model.ActionConfigure {
		t.Errorf("plan of 2.0.0: CRD %+v, want configure; objects %+v", o, p.Steps[0].Objects)
	}
	if !strings.Contains(p.Steps[0].Diff, "color") {
		t.Errorf("the plan's diff does not show the new field:\n%s", p.Steps[0].Diff)
	}
	out = khook(t, invocation{Args: []string{"apply", "-f", v2, "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusOK, Attempts: 1}})
	w, err := dyn(t).Resource(schema.GroupVersionResource{Group: "up.e2e.khook.io", Version: "v1", Resource: "widgets"}).Namespace(ns).Get(t.Context(), "app", metav1.GetOptions{})
	must(t, err)
	if c, _, _ := unstructured.NestedString(w.Object, "spec", "color"); c != "blue" {
		t.Errorf("Widget app: spec.color = %q, want blue", c)
	}
	if p = planJSON(t, nil, v2); p.Steps[0].Action != model.ActionUnchanged {
		t.Errorf("converged plan: %s (%s)", p.Steps[0].Action, p.Steps[0].Reason)
	}

	// 3.0.0 brings a new kind in crds/ and a custom resource of it: the
	// upgrade registers it first, so the plan says upgrade, not fail.
	dropCRD(t, "gizmos.up.e2e.khook.io")
	v3 := chartSpec(t, ns, "    chart: "+testdata("charts", "crdup-3")+"\n")
	p = planJSON(t, nil, v3)
	if p.Steps[0].Action != model.ActionUpgrade {
		t.Errorf("plan of 3.0.0: %s (%s), want upgrade", p.Steps[0].Action, p.Steps[0].Reason)
	}
	if o := planObject(p, "CustomResourceDefinition", "gizmos.up.e2e.khook.io"); o == nil || o.Action != model.ActionCreate {
		t.Errorf("plan of 3.0.0: CRD gizmos %+v, want create", o)
	}
	out = khook(t, invocation{Args: []string{"apply", "-f", v3, "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusOK, Attempts: 1}})
	if _, err := dyn(t).Resource(schema.GroupVersionResource{Group: "up.e2e.khook.io", Version: "v1", Resource: "gizmos"}).Namespace(ns).Get(t.Context(), "app", metav1.GetOptions{}); err != nil {
		t.Errorf("Gizmo app after the upgrade: %v", err)
	}
}

// A crds/ CRD update that drops the stored version v1alpha1 while a
// Gadget is stored in it is refused by plan (fail) and by apply, which
// writes nothing: v1alpha1 is still served.
func TestCRDDroppingAStoredVersionIsRefused(t *testing.T) {
	ns := namespace(t)
	dropCRD(t, "gadgets.ver.e2e.khook.io")
	v1 := chartSpec(t, ns, "    chart: "+testdata("charts", "crdver-1")+"\n")
	out := khook(t, invocation{Args: []string{"apply", "-f", v1, "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusOK, Attempts: 1}})

	v2 := chartSpec(t, ns, "    chart: "+testdata("charts", "crdver-2")+"\n")
	const why = "CRD gadgets.ver.e2e.khook.io: the update drops version v1alpha1, which status.storedVersions lists, with 1 Gadget object in 1 namespace stored"
	p := planJSON(t, nil, v2)
	if p.Steps[0].Action != model.ActionFail || !strings.Contains(p.Steps[0].Reason, why) {
		t.Errorf("plan: %s (%s), want fail: %s", p.Steps[0].Action, p.Steps[0].Reason, why)
	}
	out = khook(t, invocation{Args: []string{"apply", "-f", v2, "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusFailed, Attempts: 1, Error: why}})
	crd, err := dyn(t).Resource(crdGVR).Get(t.Context(), "gadgets.ver.e2e.khook.io", metav1.GetOptions{})
	must(t, err)
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	if len(versions) != 1 || versions[0].(map[string]any)["name"] != "v1alpha1" || versions[0].(map[string]any)["served"] != true {
		t.Errorf("CRD versions after the refused apply: %v, want v1alpha1 served only", versions)
	}
}

// A templated CRD switched off while a custom resource of it exists is
// kept (planned keep, with the count), and the object survives; a
// resource-policy keep ConfigMap the chart drops plans keep. With
// deleteCRDs: true the plan says the CRD goes with its custom resource,
// and apply deletes both.
func TestTemplatedCRDWithDataIsKept(t *testing.T) {
	ns := namespace(t)
	group := ns + ".tpl.e2e.khook.io"
	crdName := "things." + group
	dropCRD(t, crdName)
	chart := "    chart: " + testdata("charts", "crdtpl") + "\n"
	on := chartSpec(t, ns, chart+"    values: {group: "+group+"}\n")
	out := khook(t, invocation{Args: []string{"apply", "-f", on, "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusOK, Attempts: 1}})
	things := dyn(t).Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "things"}).Namespace(ns)
	createServed(t, things, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1", "kind": "Thing", "metadata": map[string]any{"name": "precious"}, "data": "keep me"}})

	off := chartSpec(t, ns, chart+"    values: {group: "+group+", crd: false, keepme: false}\n")
	p := planJSON(t, nil, off)
	o := planObject(p, "CustomResourceDefinition", crdName)
	if o == nil || o.Action != model.ActionKeep || !strings.Contains(o.Reason, "1 Thing object in 1 namespace exist") {
		t.Errorf("plan: CRD %+v, want keep with the count; objects %+v", o, p.Steps[0].Objects)
	}
	if cm := planObject(p, "ConfigMap", "keepme"); cm == nil || cm.Action != model.ActionKeep || !strings.Contains(cm.Reason, "helm.sh/resource-policy: keep") {
		t.Errorf("plan: ConfigMap keepme %+v, want keep (helm.sh/resource-policy)", cm)
	}
	if !strings.Contains(p.Steps[0].Reason, "keeps CRD "+crdName) || len(p.Steps[0].Warnings) == 0 {
		t.Errorf("plan: reason %q, warnings %v: want the kept CRD in both", p.Steps[0].Reason, p.Steps[0].Warnings)
	}
	for _, w := range p.Steps[0].Warnings { // the kept CRD is khook's word, not the server's
		if strings.Contains(w.Object, crdName) && w.From != model.WarnerKhook {
			t.Errorf("plan: warning %+v about the kept CRD is not khook's", w)
		}
	}
	if text := khook(t, invocation{Args: []string{"plan", "-f", off}}); !strings.Contains(text.Stdout, "warning from khook: customresourcedefinition.apiextensions.k8s.io/"+crdName) {
		t.Errorf("plan text does not put the kept CRD under khook's name:\n%s", text.Stdout)
	}
	out = khook(t, invocation{Args: []string{"apply", "-f", off, "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusOK, Attempts: 1}})
	if d := out.Results.Steps[0].Detail; !strings.Contains(d, "kept CRD "+crdName+" (1 Thing object in 1 namespace)") {
		t.Errorf("apply detail = %q, want the kept CRD", d)
	}
	if _, err := things.Get(t.Context(), "precious", metav1.GetOptions{}); err != nil {
		t.Errorf("Thing precious after the upgrade: %v", err)
	}
	if _, err := kc.Client.CoreV1().ConfigMaps(ns).Get(t.Context(), "keepme", metav1.GetOptions{}); err != nil {
		t.Errorf("ConfigMap keepme after the upgrade: %v", err)
	}

	// The explicit opt-in, on a second CRD of the same chart.
	group2 := ns + ".tpl2.e2e.khook.io"
	crd2 := "things." + group2
	dropCRD(t, crd2)
	ns2 := namespace(t)
	on2 := chartSpec(t, ns2, chart+"    values: {group: "+group2+", keepme: false}\n")
	out = khook(t, invocation{Args: []string{"apply", "-f", on2, "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusOK, Attempts: 1}})
	things2 := dyn(t).Resource(schema.GroupVersionResource{Group: group2, Version: "v1", Resource: "things"}).Namespace(ns2)
	createServed(t, things2, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group2 + "/v1", "kind": "Thing", "metadata": map[string]any{"name": "doomed"}}})
	off2 := chartSpec(t, ns2, chart+"    deleteCRDs: true\n    values: {group: "+group2+", crd: false, keepme: false}\n")
	p = planJSON(t, nil, off2)
	o = planObject(p, "CustomResourceDefinition", crd2)
	if o == nil || o.Action != model.ActionDelete || !strings.Contains(p.Steps[0].Reason, "deletes CRD "+crd2+" and its 1 Thing object in 1 namespace") {
		t.Errorf("plan with deleteCRDs: CRD %+v, reason %q: want its deletion with its custom resource", o, p.Steps[0].Reason)
	}
	out = khook(t, invocation{Args: []string{"apply", "-f", off2, "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusOK, Attempts: 1}})
	if _, err := dyn(t).Resource(crdGVR).Get(t.Context(), crd2, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("CRD %s after the upgrade with deleteCRDs: %v, want it gone", crd2, err)
	}
}

// A chart whose templates hold a custom resource its own crds/ CRD rejects
// (velero 11: spec.provider null) plans fail, the field named, before
// anything is installed.
func TestChartCustomResourceCheckedAgainstItsCRDs(t *testing.T) {
	ns := namespace(t)
	dropCRD(t, "locations.bad.e2e.khook.io")
	file := chartSpec(t, ns, "    chart: "+testdata("charts", "crdbad")+"\n")
	p := planJSON(t, nil, file)
	if p.Steps[0].Action != model.ActionFail || !strings.Contains(p.Steps[0].Reason, "spec.provider") {
		t.Errorf("plan: %s (%s), want fail naming spec.provider", p.Steps[0].Action, p.Steps[0].Reason)
	}
	if _, err := dyn(t).Resource(crdGVR).Get(t.Context(), "locations.bad.e2e.khook.io", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the plan wrote the CRD: %v", err)
	}
}

// The same check guards an apply step's CRD: a field removed that an
// object carries is a warning in the plan; a stored version dropped is
// refused by plan and apply, and the CRD keeps serving it.
func TestApplyStepCRDChecked(t *testing.T) {
	ns := namespace(t)
	group := ns + ".apply.e2e.khook.io"
	crdName := "widgets." + group
	dropCRD(t, crdName)
	crd := func(version, fields string) string {
		return `{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: ` + crdName + `}, spec: {group: ` + group +
			`, scope: Namespaced, names: {kind: Widget, plural: widgets}, versions: [{name: ` + version + `, served: true, storage: true, schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {` + fields + `}}}}}}]}}`
	}
	specFile := func(docs ...string) string {
		text := "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: crds}\nsteps:\n- name: crds\n  apply:\n    namespace: " + ns + "\n    manifests:\n"
		for _, d := range docs {
			text += "    - inline: '" + d + "'\n"
		}
		path := filepath.Join(t.TempDir(), "khook.yaml")
		must(t, os.WriteFile(path, []byte(text), 0o644))
		return path
	}
	widget := `{apiVersion: ` + group + `/v1alpha1, kind: Widget, metadata: {name: w}, spec: {color: red}}`
	out := khook(t, invocation{Args: []string{"apply", "-f", specFile(crd("v1alpha1", "size: {type: string}, color: {type: string}"), widget), "-o", "json"}})
	expectSteps(t, out, []want{{Name: "crds", Status: model.StatusOK, Attempts: 1}})

	p := planJSON(t, nil, specFile(crd("v1alpha1", "size: {type: string}")))
	warned := false
	for _, w := range p.Steps[0].Warnings {
		warned = warned || strings.Contains(w.Message, "the update removes field spec.color, which 1 Widget object carry")
	}
	if !warned {
		t.Errorf("plan warnings = %v, want the removed field spec.color", p.Steps[0].Warnings)
	}

	dropped := specFile(crd("v1", "size: {type: string}"))
	const why = "the update drops version v1alpha1, which status.storedVersions lists, with 1 Widget object in 1 namespace stored"
	if p := planJSON(t, nil, dropped); p.Steps[0].Action != model.ActionFail || !strings.Contains(p.Steps[0].Reason, why) {
		t.Errorf("plan: %s (%s), want fail: %s", p.Steps[0].Action, p.Steps[0].Reason, why)
	}
	out = khook(t, invocation{Args: []string{"apply", "-f", dropped, "-o", "json"}})
	expectSteps(t, out, []want{{Name: "crds", Status: model.StatusFailed, Attempts: 1, Error: why}})
	if _, err := dyn(t).Resource(schema.GroupVersionResource{Group: group, Version: "v1alpha1", Resource: "widgets"}).Namespace(ns).Get(t.Context(), "w", metav1.GetOptions{}); err != nil {
		t.Errorf("Widget w through v1alpha1 after the refused apply: %v", err)
	}
}

// A helm step's custom resource is checked against the CRD an earlier
// apply step of the same plan applies, not the one live: the field that
// CRD adds plans clean, a field it lacks plans fail, named.
func TestCustomResourceCheckedAgainstAnEarlierStepsCRD(t *testing.T) {
	ns := namespace(t)
	group := ns + ".use.e2e.khook.io"
	crdName := "widgets." + group
	dropCRD(t, crdName)
	crd := func(fields string) string {
		return `{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: ` + crdName + `}, spec: {group: ` + group +
			`, scope: Namespaced, names: {kind: Widget, plural: widgets}, versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {` + fields + `}}}}}}]}}`
	}
	specFile := func(crd, field string) string {
		text := "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: crds}\nsteps:\n- name: crds\n  apply:\n    manifests:\n    - inline: '" + crd + "'\n"
		if field != "" {
			text += "- name: app\n  needs: [crds]\n  helm:\n    namespace: " + ns + "\n    chart: " + testdata("charts", "crduse") + "\n    values: {group: " + group + ", field: " + field + "}\n"
		}
		path := filepath.Join(t.TempDir(), "khook.yaml")
		must(t, os.WriteFile(path, []byte(text), 0o644))
		return path
	}
	out := khook(t, invocation{Args: []string{"apply", "-f", specFile(crd("size: {type: string}"), ""), "-o", "json"}})
	expectSteps(t, out, []want{{Name: "crds", Status: model.StatusOK, Attempts: 1}})

	next := crd("size: {type: string}, color: {type: string}")
	if p := planAll(t, specFile(next, "shade")); p.Steps[1].Action != model.ActionFail || !strings.Contains(p.Steps[1].Reason, "spec.shade") {
		t.Errorf("plan with spec.shade: %s (%s), want fail naming spec.shade", p.Steps[1].Action, p.Steps[1].Reason)
	}
	file := specFile(next, "color")
	if p := planAll(t, file); p.Steps[1].Action != model.ActionInstall {
		t.Errorf("plan with spec.color: %s (%s), want install", p.Steps[1].Action, p.Steps[1].Reason)
	}
	out = khook(t, invocation{Args: []string{"apply", "-f", file, "-o", "json"}})
	expectSteps(t, out, []want{{Name: "crds", Status: model.StatusOK, Attempts: 1}, {Name: "app", Status: model.StatusOK, Attempts: 1}})
}

// planAll is `plan -o json` of a spec of any number of steps.
func planAll(t *testing.T, file string) model.Plan {
	t.Helper()
	out := khook(t, invocation{Args: []string{"plan", "-f", file, "-o", "json"}})
	var p model.Plan
	if err := json.Unmarshal([]byte(out.Stdout), &p); err != nil {
		t.Fatalf("plan: %v (exit %d)\nstdout:\n%s\nstderr:\n%s", err, out.Code, out.Stdout, out.Stderr)
	}
	return p
}

// Every path that writes a templated CRD checks the change (#39): a
// re-install of a release whose CRD was kept, a takeOwnership install
// that adopts it, and an upgrade whose last revision had no CRD (a CRD
// moved from crds/ into the templates). Each would drop the version the
// cluster stores a Thing in: plan and apply refuse, naming it, and the
// CRD (resourceVersion) and the Thing are as before.
func TestTemplatedCRDChangeCheckedOnEveryPath(t *testing.T) {
	chart := "    chart: " + testdata("charts", "crdtpl") + "\n"
	for _, c := range []struct {
		name  string
		owned bool   // the CRD carries the release's Helm metadata (kept at an uninstall)
		extra string // more of the helm step
		first string // values of an install before the CRD exists ("": none)
	}{
		{name: "reinstall", owned: true},
		{name: "takeownership", extra: "    takeOwnership: true\n"},
		{name: "moved", owned: true, first: "crd: false, "},
	} {
		t.Run(c.name, func(t *testing.T) {
			ns := namespace(t)
			group := ns + "." + c.name + ".e2e.khook.io"
			crdName := "things." + group
			dropCRD(t, crdName)
			if c.first != "" {
				out := khook(t, invocation{Args: []string{"apply", "-f", chartSpec(t, ns, chart+c.extra+"    values: {"+c.first+"keepme: false, group: "+group+"}\n"), "-o", "json"}})
				expectSteps(t, out, []want{{Name: "app", Status: model.StatusOK, Attempts: 1}})
			}
			crd := &unstructured.Unstructured{}
			must(t, yaml.Unmarshal([]byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: `+crdName+`}
spec:
  group: `+group+`
  scope: Namespaced
  names: {kind: Thing, plural: things, singular: thing, listKind: ThingList}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`), &crd.Object))
			if c.owned {
				crd.SetLabels(map[string]string{"app.kubernetes.io/managed-by": "Helm"})
				crd.SetAnnotations(map[string]string{"meta.helm.sh/release-name": "app", "meta.helm.sh/release-namespace": ns})
			}
			_, err := dyn(t).Resource(crdGVR).Create(t.Context(), crd, metav1.CreateOptions{})
			must(t, err)
			things := dyn(t).Resource(schema.GroupVersionResource{Group: group, Version: "v1alpha1", Resource: "things"}).Namespace(ns)
			createServed(t, things, &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": group + "/v1alpha1", "kind": "Thing", "metadata": map[string]any{"name": "precious"}}})
			before, err := dyn(t).Resource(crdGVR).Get(t.Context(), crdName, metav1.GetOptions{})
			must(t, err)

			file := chartSpec(t, ns, chart+c.extra+"    values: {keepme: false, group: "+group+"}\n")
			const why = "the update drops version v1alpha1, which status.storedVersions lists"
			if p := planJSON(t, nil, file); p.Steps[0].Action != model.ActionFail || !strings.Contains(p.Steps[0].Reason, why) {
				t.Errorf("plan: %s: %s; want fail: %s", p.Steps[0].Action, p.Steps[0].Reason, why)
			}
			out := khook(t, invocation{Args: []string{"apply", "-f", file, "-o", "json"}})
			expectSteps(t, out, []want{{Name: "app", Status: model.StatusFailed, Attempts: 1, Error: why}})
			if out.Results != nil && out.Results.Changed() {
				t.Errorf("the refused apply reports changes: %+v", out.Results.Steps[0].Changes)
			}
			text := khook(t, invocation{Args: []string{"apply", "-f", file}})
			if text.Code == 0 || !strings.Contains(text.Stdout+text.Stderr, why) {
				t.Errorf("text apply: exit %d, want the refusal\nstdout:\n%s\nstderr:\n%s", text.Code, text.Stdout, text.Stderr)
			}
			after, err := dyn(t).Resource(crdGVR).Get(t.Context(), crdName, metav1.GetOptions{})
			must(t, err)
			if after.GetUID() != before.GetUID() || after.GetResourceVersion() != before.GetResourceVersion() {
				t.Errorf("the refused CRD change was written: uid %s -> %s, resourceVersion %s -> %s", before.GetUID(), after.GetUID(), before.GetResourceVersion(), after.GetResourceVersion())
			}
			if _, err := things.Get(t.Context(), "precious", metav1.GetOptions{}); err != nil {
				t.Errorf("Thing precious after the refused apply: %v", err)
			}
		})
	}
}
