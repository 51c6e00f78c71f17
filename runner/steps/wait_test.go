package steps

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/khook/khook/runner"
	"github.com/khook/khook/spec"
)

func waitStep(w spec.Wait) *spec.Step { return &spec.Step{Name: "wait", Wait: &w} }

// runAsync starts a step and returns a channel with its result.
func runAsync(ctx context.Context, x runner.Executor, st *spec.Step) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := x.Execute(ctx, st)
		done <- err
	}()
	return done
}

func TestWaitConditionOnSelectedPods(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, writes := newTestEnv(t)
	x := NewWaitExecutor(env)
	st := waitStep(spec.Wait{For: "condition=Ready", On: "pods", Namespace: ns, Selector: "app=web"})
	// Started before anything matches: "nothing yet" is not success.
	done := runAsync(deadline(t, time.Minute), x, st)
	createDeployment(t, ns, "web", 2, nil)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	out := run(t, x, st)
	if out.Detail != "condition=Ready met on pods -l app=web in "+ns || writes.n.Load() != 0 {
		t.Errorf("%q, %d writes", out.Detail, writes.n.Load())
	}
	// Named, kind-qualified forms and all namespaces.
	run(t, x, waitStep(spec.Wait{For: "condition=Available", On: "Deployment/web", Namespace: ns}))
	run(t, x, waitStep(spec.Wait{For: "jsonpath={.status.readyReplicas}=2", On: "deployments.apps/web", Namespace: ns}))
	run(t, x, waitStep(spec.Wait{For: "condition=Ready", On: "po", AllNamespaces: true, Selector: "app=web", FieldSelector: "metadata.namespace=" + ns}))
}

func TestWaitJSONPathSeesTheChange(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	createConfigMap(t, ns, "flag", map[string]string{"state": "off"})
	done := runAsync(deadline(t, time.Minute), NewWaitExecutor(env), waitStep(spec.Wait{For: "jsonpath=data.state=on", On: "configmap/flag", Namespace: ns}))
	_, err := testCluster.Client.CoreV1().ConfigMaps(ns).Patch(context.Background(), "flag", types.MergePatchType,
		[]byte(`{"data":{"state":"on"}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestWaitDelete(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	createConfigMap(t, ns, "doomed", nil)
	done := runAsync(deadline(t, time.Minute), NewWaitExecutor(env), waitStep(spec.Wait{For: "delete", On: "configmap/doomed", Namespace: ns}))
	if err := testCluster.Client.CoreV1().ConfigMaps(ns).Delete(context.Background(), "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Already gone: immediate success.
	run(t, NewWaitExecutor(env), waitStep(spec.Wait{For: "delete", On: "configmap/doomed", Namespace: ns}))
}

func TestWaitTimesOutSayingWhatIsNotReady(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	createDeployment(t, ns, "stuck", 2, neverReady)
	// Wait until both pods exist, so the timeout message is deterministic.
	run(t, NewWaitExecutor(env), waitStep(spec.Wait{For: "jsonpath={.status.replicas}=2", On: "deploy/stuck", Namespace: ns}))
	st := waitStep(spec.Wait{For: "condition=Ready", On: "pods", Namespace: ns, Selector: "app=stuck"})
	st.Timeout = spec.Duration(2 * time.Second)
	runErr(t, deadline(t, 2*time.Second), NewWaitExecutor(env), st,
		"timed out after 2s waiting for condition=Ready on pods -l app=stuck in "+ns+": 2 of 2 not ready: pod/stuck-")

	st = waitStep(spec.Wait{For: "condition=Ready", On: "pods", Namespace: ns, Selector: "app=none"})
	st.Timeout = spec.Duration(time.Second)
	runErr(t, deadline(t, time.Second), NewWaitExecutor(env), st, "timed out after 1s waiting for condition=Ready on pods -l app=none in "+ns+": nothing matches yet")
}

func TestWaitBadArguments(t *testing.T) {
	t.Parallel()
	env, _ := newTestEnv(t)
	x := NewWaitExecutor(env)
	ctx := deadline(t, time.Minute)
	runErr(t, ctx, x, waitStep(spec.Wait{For: "condition=Ready", On: "gizmos"}), `on "gizmos": the server has no resource type "gizmos"`)
	runErr(t, ctx, x, waitStep(spec.Wait{For: "readyish", On: "pods"}), `for "readyish" is not a wait condition`)
	runErr(t, ctx, x, waitStep(spec.Wait{For: "delete", On: "pods", Selector: "a in (b"}), "invalid label selector")
}
