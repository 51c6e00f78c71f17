package steps

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/khook/khook/spec"
)

func TestPatchStrategicThenNoWriteWhenApplied(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, writes := newTestEnv(t)
	createDeployment(t, ns, "aws-node", 1, nil)
	st := &spec.Step{Name: "p", Patch: &spec.Patch{Target: "daemonset/nope", Namespace: ns}}
	st.Patch.Target = "deployment/aws-node"
	st.Patch.Patch = map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"nodeSelector": map[string]any{"khook.io/non-existing": "true"}}}}}
	x := NewPatchExecutor(env)
	out := run(t, x, st)
	if out.Detail != "patched deployment.apps/aws-node in namespace "+ns+" (strategic)" || out.Writes != 1 {
		t.Errorf("first: %q, %d writes", out.Detail, out.Writes)
	}
	d, _ := testCluster.Client.AppsV1().Deployments(ns).Get(context.Background(), "aws-node", metav1.GetOptions{})
	if d.Spec.Template.Spec.NodeSelector["khook.io/non-existing"] != "true" {
		t.Errorf("nodeSelector = %v", d.Spec.Template.Spec.NodeSelector)
	}
	writes.n.Store(0)
	out = run(t, x, st)
	// The patch changes nothing: no request at all.
	if out.Detail != "deployment.apps/aws-node in namespace "+ns+" unchanged (the patch is already applied)" || out.Writes != 0 || writes.n.Load() != 0 {
		t.Errorf("re-run: %q, %d writes, %d requests", out.Detail, out.Writes, writes.n.Load())
	}
}

func TestPatchMergeAndJSON(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	createConfigMap(t, ns, "cm", map[string]string{"a": "1", "b": "2"})
	x := NewPatchExecutor(env)
	merge := &spec.Step{Name: "m", Patch: &spec.Patch{Target: "cm/cm", Namespace: ns, Type: spec.PatchMerge,
		Patch: map[string]any{"metadata": map[string]any{"annotations": map[string]any{"x": "y"}}}}}
	run(t, x, merge)
	jsonP := &spec.Step{Name: "j", Patch: &spec.Patch{Target: "configmap/cm", Namespace: ns, Type: spec.PatchJSON,
		Patch: []any{map[string]any{"op": "remove", "path": "/data/b"}}}}
	if out := run(t, x, jsonP); out.Writes != 1 {
		t.Errorf("json: %q", out.Detail)
	}
	if out := run(t, x, merge); out.Writes != 0 {
		t.Errorf("merge re-run: %q", out.Detail)
	}
	// The decision plan shares: the patch applied locally, nothing written.
	live, err := env.Clients.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns).
		Get(context.Background(), "cm", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	after, changed := PatchOutcome(live, types.MergePatchType, []byte(`{"data":{"a":"9"}}`))
	if !changed || after.Object["data"].(map[string]any)["a"] != "9" {
		t.Errorf("outcome: %v, %v", changed, after)
	}
	if _, changed := PatchOutcome(live, types.MergePatchType, []byte(`{"metadata":{"annotations":{"x":"y"}}}`)); changed {
		t.Error("an applied patch predicts a change")
	}
	cm, _ := testCluster.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), "cm", metav1.GetOptions{})
	if cm.Annotations["x"] != "y" || cm.Data["b"] != "" || cm.Data["a"] != "1" {
		t.Errorf("configmap = %v %v", cm.Annotations, cm.Data)
	}
	// Removing b again fails on the server: the error says which patch and object.
	runErr(t, deadline(t, time.Minute), x, jsonP, "the API server rejected the json patch of configmap/cm in namespace "+ns)
}

func TestPatchErrors(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	x := NewPatchExecutor(env)
	st := &spec.Step{Name: "p", Patch: &spec.Patch{Target: "configmap/nope", Namespace: ns, Patch: map[string]any{"data": map[string]any{"a": "b"}}}}
	runErr(t, deadline(t, time.Minute), x, st, "patch target configmap/nope in namespace "+ns+" not found")
	st.Patch.Target = "configmaps"
	runErr(t, deadline(t, time.Minute), x, st, `target "configmaps" names no object`)

	// Custom resources take no strategic merge patch.
	g := groupFor(ns)
	t.Cleanup(func() {
		_ = testCluster.Client.Discovery().RESTClient().Delete().
			AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets." + g).Do(context.Background()).Error()
	})
	run(t, NewApplyExecutor(env), applyStep(ns, crd(g), widget(g, "w", "s")))
	st.Patch.Target = "widget." + g + "/w"
	runErr(t, deadline(t, time.Minute), x, st, "patch type strategic is not supported for custom resource widget."+g+"/w: use type: merge")
	st.Patch.Type = spec.PatchMerge
	st.Patch.Patch = map[string]any{"spec": map[string]any{"size": "xl"}}
	run(t, x, st)
	w, err := env.Clients.Dynamic.Resource(schema.GroupVersionResource{Group: g, Version: "v1", Resource: "widgets"}).Namespace(ns).
		Get(context.Background(), "w", metav1.GetOptions{})
	if size, _, _ := unstructured.NestedString(w.Object, "spec", "size"); err != nil || size != "xl" {
		t.Errorf("size = %q, %v", size, err)
	}
}

func TestPatchOutOfTimeNamesTheTarget(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	createConfigMap(t, ns, "cm", nil)
	ctx, cancel := context.WithDeadline(context.Background(), time.Now())
	defer cancel()
	st := &spec.Step{Name: "p", Patch: &spec.Patch{Target: "configmap/cm", Namespace: ns, Type: spec.PatchMerge,
		Patch: map[string]any{"data": map[string]any{"a": "b"}}}}
	runErr(t, ctx, NewPatchExecutor(env), st, "configmap/cm in namespace "+ns, "context deadline exceeded")
}
