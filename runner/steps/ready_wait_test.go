package steps

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/khook/khook/spec"
)

// waitFor: ready on the four kinds issue 7 names: kstatus decides for a
// Deployment (replicas available), a CRD (Established) and a ConfigMap
// (always); a Namespace is a kind kstatus has no rules for, so the fallback
// (status.phase Active) decides.
func TestApplyWaitForReady(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	x := NewApplyExecutor(env)
	g := "ready." + groupFor(ns)
	nsName := ns + "-ready"
	t.Cleanup(func() {
		_ = testCluster.Client.Discovery().RESTClient().Delete().
			AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets." + g).Do(context.Background()).Error()
		_ = testCluster.Client.CoreV1().Namespaces().Delete(context.Background(), nsName, metav1.DeleteOptions{})
	})
	for name, doc := range map[string]string{
		"deployment": deployment("web", 2, nil),
		"crd":        crd(g),
		"namespace":  fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", nsName),
		"configmap":  configMap("settings", "v"),
	} {
		st := applyStep(ns, doc)
		st.Apply.WaitFor = "ready"
		if out := run(t, x, st); out.Detail != "created 1 object; ready met on 1 object" {
			t.Errorf("%s: %q", name, out.Detail)
		}
	}
	// The Deployment really is ready: every replica is available.
	d, err := testCluster.Client.AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil || d.Status.AvailableReplicas != 2 {
		t.Errorf("deployment after waitFor: ready: %d available, %v", d.Status.AvailableReplicas, err)
	}
	// A CR of the CRD can be applied right after: Established held.
	run(t, x, applyStep(ns, widget(g, "w", "s")))
}

func TestApplyWaitForReadyTimesOutWithKstatusReason(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	st := applyStep(ns, deployment("stuck", 1, neverReady))
	st.Apply.WaitFor = "ready"
	st.Timeout = spec.Duration(3 * time.Second)
	runErr(t, deadline(t, 3*time.Second), NewApplyExecutor(env), st,
		"waitFor: timed out after 3s waiting for ready on deployment.apps/stuck in "+ns, "deployment/stuck (InProgress: ")
}

func TestWaitForReadyAndCEL(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	createDeployment(t, ns, "api", 2, nil)
	run(t, NewWaitExecutor(env), waitStep(spec.Wait{For: "ready", On: "deployment/api", Namespace: ns}))
	out := run(t, NewWaitExecutor(env), waitStep(spec.Wait{For: "cel=object.status.readyReplicas == object.spec.replicas", On: "deployments", Namespace: ns}))
	if out.Detail != "cel=object.status.readyReplicas == object.spec.replicas met on deployments.apps in "+ns {
		t.Errorf("detail: %q", out.Detail)
	}
}

// A cel= wait blocks while the expression is false and returns once a
// field change makes it true.
func TestWaitCELSeesTheChange(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	createConfigMap(t, ns, "flag", map[string]string{"state": "off"})
	st := waitStep(spec.Wait{For: `cel=object.data.state == "on" && object.metadata.name == "flag"`, On: "configmap/flag", Namespace: ns})
	// Still false: the step runs out of time and says why.
	short := *st
	short.Timeout = spec.Duration(time.Second)
	runErr(t, deadline(t, time.Second), NewWaitExecutor(env), &short, "configmap/flag (expression is false)")

	done := runAsync(deadline(t, time.Minute), NewWaitExecutor(env), st)
	_, err := testCluster.Client.CoreV1().ConfigMaps(ns).Patch(context.Background(), "flag", types.MergePatchType,
		[]byte(`{"data":{"state":"on"}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
