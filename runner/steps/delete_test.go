package steps

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/spec"
)

func deleteManifests(ns string, docs ...string) *spec.Step {
	st := applyStep(ns, docs...)
	return &spec.Step{Name: "delete", Delete: &spec.Delete{Namespace: ns, Manifests: st.Apply.Manifests}}
}

func TestDeleteManifests(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, writes := newTestEnv(t)
	docs := []string{configMap("a", "1"), deployment("web", 1, nil)}
	run(t, NewApplyExecutor(env), applyStep(ns, docs...))

	writes.n.Store(0)
	x := NewDeleteExecutor(env, nil)
	out := run(t, x, deleteManifests(ns, docs...))
	if out.Detail != "deleted 2 objects" || out.Writes != 2 || writes.n.Load() != 2 {
		t.Errorf("delete: %q, %d writes, %d counted", out.Detail, out.Writes, writes.n.Load())
	}
	// The step returned only once the objects were gone.
	if _, err := testCluster.Client.AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("deployment still there: %v", err)
	}
	writes.n.Store(0)
	if out := run(t, x, deleteManifests(ns, docs...)); out.Detail != "deleted 0 objects, 2 already absent" || writes.n.Load() != 0 {
		t.Errorf("re-run: %q, %d counted", out.Detail, writes.n.Load())
	}
	st := deleteManifests(ns, docs...)
	st.Delete.IgnoreNotFound = ptrTo(false)
	runErr(t, deadline(t, time.Minute), x, st, "cannot delete deployment.apps/web in namespace "+ns+": not found")
}

func TestDeleteResourceBySelectorOutlastsReplacements(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	for _, n := range []string{"a", "b", "c"} {
		createConfigMap(t, ns, n, nil)
	}
	x := NewDeleteExecutor(env, nil)
	st := &spec.Step{Name: "d", Delete: &spec.Delete{Resource: "configmaps", Namespace: ns, Selector: "app=demo"}}
	if out := run(t, x, st); out.Detail != "deleted 3 objects" || out.Writes != 3 {
		t.Errorf("selector: %q, %d writes", out.Detail, out.Writes)
	}
	// Pods a ReplicaSet replaces at once: the step waits for the deleted
	// ones only, not for the selector to match nothing.
	createDeployment(t, ns, "web", 2, nil)
	// Both replicas ready first: a wait on the pods alone can be met while
	// the ReplicaSet has created only one of them.
	run(t, NewWaitExecutor(env), &spec.Step{Name: "w", Wait: &spec.Wait{For: "jsonpath={.status.readyReplicas}=2", On: "deployment/web", Namespace: ns}})
	waitStep := &spec.Step{Name: "w", Wait: &spec.Wait{For: "condition=Ready", On: "pods", Namespace: ns, Selector: "app=web"}}
	run(t, NewWaitExecutor(env), waitStep)
	st = &spec.Step{Name: "d", Delete: &spec.Delete{Resource: "pods", Namespace: ns, Selector: "app=web"}}
	if out := run(t, x, st); out.Writes != 2 {
		t.Errorf("pods: %q, %d writes", out.Detail, out.Writes)
	}
	st.Delete.IgnoreNotFound = ptrTo(false)
	st.Delete.Selector = "app=nothing"
	runErr(t, deadline(t, time.Minute), x, st, "cannot delete pods -l app=nothing in "+ns+": nothing matched")
}

func TestDeleteResourceByName(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	createDeployment(t, ns, "aws-node", 1, nil)
	x := NewDeleteExecutor(env, nil)
	st := &spec.Step{Name: "d", Delete: &spec.Delete{Resource: "deploy/aws-node", Namespace: ns}}
	if out := run(t, x, st); out.Detail != "deleted 1 object" {
		t.Errorf("%q", out.Detail)
	}
	if out := run(t, x, st); out.Detail != "deployment.apps/aws-node in "+ns+" already absent" || out.Writes != 0 {
		t.Errorf("absent: %q", out.Detail)
	}
	st.Delete.IgnoreNotFound = ptrTo(false)
	runErr(t, deadline(t, time.Minute), x, st, "cannot delete deployment.apps/aws-node in "+ns+": not found")
	// A name across all namespaces.
	createConfigMap(t, ns, "everywhere-"+ns, nil)
	all := &spec.Step{Name: "d", Delete: &spec.Delete{Resource: "configmap/everywhere-" + ns, AllNamespaces: true}}
	if out := run(t, x, all); out.Detail != "deleted 1 object" {
		t.Errorf("all namespaces: %q", out.Detail)
	}
	st.Delete.Resource = "nosuchkind/x"
	runErr(t, deadline(t, time.Minute), x, st, `resource "nosuchkind/x": the server has no resource type "nosuchkind"`)
}

func TestDeleteTimesOutOnFinalizer(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	cm := createConfigMap(t, ns, "held", nil)
	_, err := testCluster.Client.CoreV1().ConfigMaps(ns).Patch(context.Background(), cm.Name, types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":["khook.test/hold"]}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = testCluster.Client.CoreV1().ConfigMaps(ns).Patch(context.Background(), cm.Name, types.MergePatchType,
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	st := &spec.Step{Name: "d", Timeout: spec.Duration(2 * time.Second), Delete: &spec.Delete{Resource: "configmap/held", Namespace: ns}}
	runErr(t, deadline(t, 2*time.Second), NewDeleteExecutor(env, nil), st,
		"timed out after 2s waiting for deletion on configmap/held in "+ns+": still terminating, finalizers [khook.test/hold]")
}

func TestDeleteReleaseIsDelegated(t *testing.T) {
	t.Parallel()
	env, _ := newTestEnv(t)
	var got string
	x := NewDeleteExecutor(env, ReleaseDeleterFunc(func(ctx context.Context, st *spec.Step) (runner.Outcome, error) {
		got = st.Delete.Release + "@" + st.Delete.Namespace
		return runner.Outcome{Detail: "uninstalled"}, nil
	}))
	st := &spec.Step{Name: "d", Delete: &spec.Delete{Release: "nginx", Namespace: "ingress"}}
	if out := run(t, x, st); out.Detail != "uninstalled" || got != "nginx@ingress" {
		t.Errorf("got %q, %q", out.Detail, got)
	}
	runErr(t, deadline(t, time.Second), NewDeleteExecutor(env, nil), st, "delete.release is not available")
}

// A delete step keeps a CRD custom resources of which exist, and says so;
// with deleteCRDs: true it deletes both.
func TestDeleteKeepsCRDWithData(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	group := groupFor(ns)
	env, _ := newTestEnv(t)
	run(t, NewApplyExecutor(env), applyStep(ns, crd(group), widget(group, "w", "s")))
	x := NewDeleteExecutor(env, nil)
	st := deleteManifests(ns, crd(group))
	out := run(t, x, st)
	want := "deleted 0 objects; kept CRD widgets." + group + " (1 Widget object in 1 namespace exist: deleting the CRD deletes them; set deleteCRDs: true on the step to delete both)"
	if out.Detail != want || out.Writes != 0 {
		t.Errorf("delete without deleteCRDs: %q, %d writes; want %q", out.Detail, out.Writes, want)
	}
	st.Delete.DeleteCRDs = true
	if out, want := run(t, x, st), "deleted 1 object; deleted CRD widgets."+group+" and its 1 Widget object in 1 namespace"; out.Detail != want {
		t.Errorf("delete with deleteCRDs: %q, want %q (the data that went)", out.Detail, want)
	}
	crds := env.Clients.Dynamic.Resource(kube.CRDMapping.Resource)
	if _, err := crds.Get(context.Background(), "widgets."+group, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("CRD after deleteCRDs: %v, want it gone", err)
	}
}
