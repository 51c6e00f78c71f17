package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/khook/khook/model"
)

// uncounted is what every output says of a CRD whose objects cannot be
// listed: runner/kube's UncountedError reason.
const uncounted = "it serves no version, and objects were stored as v1 (status.storedVersions): they cannot be listed to count them"

// Where khook cannot tell whether a CRD holds data, it keeps it and says
// why (#39 points 5 and 6), for real: a Widget is stored, then the CRD
// stops serving v1 out of band, so its objects cannot be listed. A prune
// (the CRD left the spec) and a delete step both plan keep with that
// reason and the word that deletes it; apply keeps it (same UID) and says
// why, in text and JSON.
func TestUncountableCRDIsKeptSayingWhy(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	dyn, err := dynamic.NewForConfig(kc.RESTConfig)
	must(t, err)
	group := ns + ".khook.test"
	crdName := "widgets." + group
	t.Cleanup(func() { _ = dyn.Resource(crdResource).Delete(context.Background(), crdName, metav1.DeleteOptions{}) })
	spec := func(withCRD, deleteStep bool) string {
		var b strings.Builder
		fmt.Fprintf(&b, "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: uncounted}\nstate: {namespace: %s}\nsteps:\n  - name: crds\n    apply:\n      namespace: %s\n      manifests:\n", ns, ns)
		fmt.Fprintf(&b, "      - inline: |\n          {apiVersion: v1, kind: ConfigMap, metadata: {name: anchor}, data: {k: v}}\n")
		if withCRD {
			fmt.Fprintf(&b, "      - inline: |\n          {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: %s}, spec: {group: %s, scope: Namespaced, names: {plural: widgets, singular: widget, kind: Widget}, versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]}}\n", crdName, group)
		}
		if deleteStep {
			fmt.Fprintf(&b, "  - name: drop\n    needs: [crds]\n    delete: {resource: customresourcedefinition/%s}\n", crdName)
		}
		return writeSpec(t, b.String())
	}
	if out := applySpec(t, spec(true, false)); out.Code != 0 {
		t.Fatalf("apply v1: exit %d\n%s%s", out.Code, out.Stdout, out.Stderr)
	}
	widgets := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}).Namespace(ns)
	w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": "Widget", "metadata": map[string]any{"name": "precious"}}}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := widgets.Create(ctx, w, metav1.CreateOptions{})
		return err == nil, nil
	})
	must(t, err)
	// Out of band: v1 is no longer served; status.storedVersions keeps it.
	_, err = dyn.Resource(crdResource).Patch(ctx, crdName, types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/versions/0/served","value":false}]`), metav1.PatchOptions{})
	must(t, err)
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := widgets.List(ctx, metav1.ListOptions{})
		return apierrors.IsNotFound(err), nil
	})
	must(t, err)
	crdUID := func() types.UID {
		t.Helper()
		crd, err := dyn.Resource(crdResource).Get(ctx, crdName, metav1.GetOptions{})
		must(t, err)
		return crd.GetUID()
	}
	uid := crdUID()

	for _, c := range []struct {
		name       string
		file       string
		step, word string
	}{
		{"prune", spec(false, false), "prune/crds", "set prune: {crds: true}"},
		{"delete step", spec(false, true), "drop", "set deleteCRDs: true on the step"},
	} {
		p := planJSON2(t, c.file)
		var kept model.ObjectPlan
		for _, o := range step(p, c.step).Objects {
			if o.Kind == "CustomResourceDefinition" && o.Name == crdName {
				kept = o
			}
		}
		if kept.Action != model.ActionKeep || !strings.Contains(kept.Reason, uncounted) || !strings.Contains(kept.Reason, c.word) || kept.With != "" {
			t.Errorf("%s: plan of the uncountable CRD: %+v\nwant keep saying %q and %q", c.name, kept, uncounted, c.word)
		}
		text := khook(t, invocation{Args: []string{"plan", "-f", c.file}})
		if text.Code != 0 || !strings.Contains(text.Stdout, uncounted) || strings.Contains(text.Stdout, "delete CustomResourceDefinition") {
			t.Errorf("%s: text plan: exit %d, want 0 and the CRD kept saying why\n%s%s", c.name, text.Code, text.Stdout, text.Stderr)
		}
		out := khook(t, invocation{Args: []string{"apply", "-f", c.file, "-o", "json"}})
		if out.Code != 0 || out.Results == nil {
			t.Fatalf("%s: apply: exit %d\n%s%s", c.name, out.Code, out.Stdout, out.Stderr)
		}
		for _, st := range out.Results.Steps {
			for _, ch := range st.Changes {
				if ch.Kind == "CustomResourceDefinition" && ch.Action == model.DidDelete {
					t.Errorf("%s: apply deleted the uncountable CRD: %+v", c.name, ch)
				}
			}
		}
		if !strings.Contains(out.Stdout+out.Stderr, uncounted) {
			t.Errorf("%s: apply's JSON does not say why the CRD was kept:\n%s\n%s", c.name, out.Stdout, out.Stderr)
		}
		if got := crdUID(); got != uid {
			t.Fatalf("%s: the CRD was replaced or deleted: uid %s, was %s", c.name, got, uid)
		}
	}
}

// planJSON2 is planJSON for a spec of any number of steps.
func planJSON2(t *testing.T, file string) model.Plan {
	t.Helper()
	out := khook(t, invocation{Args: []string{"plan", "-f", file, "-o", "json"}})
	var p model.Plan
	if err := json.Unmarshal([]byte(out.Stdout), &p); err != nil {
		t.Fatalf("plan: %v (exit %d)\nstdout:\n%s\nstderr:\n%s", err, out.Code, out.Stdout, out.Stderr)
	}
	return p
}
