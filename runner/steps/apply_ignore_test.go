package steps

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/khook/khook/spec"
)

// TestApplyLeavesIgnoredFields: a replica count scaled out of band stays
// through client-side and server-side apply under an ignore rule, the step
// reports no change, and the rule changes nothing on create.
func TestApplyLeavesIgnoredFields(t *testing.T) {
	t.Parallel()
	for _, serverSide := range []bool{false, true} {
		ns := testCluster.Namespace(t)
		env, _ := newTestEnv(t)
		x := NewApplyExecutor(env)
		st := applyStep(ns, deployment("web", 2, nil))
		st.Apply.ServerSide = serverSide
		st.Ignored = []spec.IgnoreRule{{Target: &spec.IgnoreTarget{Kind: "Deployment"}, JSONPointers: []string{"/spec/replicas"}}}
		run(t, x, st)
		ctx := context.Background()
		d, err := testCluster.Client.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil || *d.Spec.Replicas != 2 {
			t.Fatalf("serverSide %v: create must set the ignored field: %v", serverSide, err)
		}
		// The deployment controller annotates a new Deployment with its
		// revision: let it, so the re-apply below compares with an object
		// no controller is about to change.
		run(t, NewWaitExecutor(env), &spec.Step{Name: "w", Wait: &spec.Wait{For: "jsonpath={.status.observedGeneration}=1", On: "deployment/web", Namespace: ns}})
		_, err = testCluster.Client.AppsV1().Deployments(ns).Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{FieldManager: "hpa"})
		if err != nil {
			t.Fatal(err)
		}
		out := run(t, x, st)
		if out.Detail != "unchanged 1 object" {
			t.Errorf("serverSide %v: %q, want unchanged 1 object", serverSide, out.Detail)
		}
		d, err = testCluster.Client.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil || *d.Spec.Replicas != 5 {
			t.Errorf("serverSide %v: apply reverted the ignored replicas to %d (%v)", serverSide, *d.Spec.Replicas, err)
		}
	}
}
