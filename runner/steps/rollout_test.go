package steps

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/spec"
)

func TestRolloutRestartThenStatus(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, writes := newTestEnv(t)
	createDeployment(t, ns, "web", 2, nil)
	x := NewRolloutExecutor(env)
	fixed := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	x.Now = func() time.Time { return fixed }

	status := &spec.Step{Name: "s", Rollout: &spec.Rollout{Status: "deployment/web", Namespace: ns}}
	run(t, x, status)
	out := run(t, x, &spec.Step{Name: "r", Rollout: &spec.Rollout{Restart: "deploy/web", Namespace: ns}})
	if out.Detail != "restarted deployment.apps/web in namespace "+ns || out.Writes != 1 || writes.n.Load() != 1 {
		t.Errorf("restart: %q, %d writes, %d counted", out.Detail, out.Writes, writes.n.Load())
	}
	d, _ := testCluster.Client.AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if got := d.Spec.Template.Annotations[RestartedAtAnnotation]; got != "2026-11-22T12:00:00Z" {
		t.Errorf("restartedAt = %q", got)
	}
	// Status right after the restart must follow the new rollout to its end.
	out = run(t, x, status)
	if out.Detail != "rollout of deployment.apps/web in namespace "+ns+" complete" {
		t.Errorf("status: %q", out.Detail)
	}
	d, _ = testCluster.Client.AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if d.Status.UpdatedReplicas != 2 || d.Status.ObservedGeneration < d.Generation {
		t.Errorf("status returned before the rollout finished: %+v", d.Status)
	}
}

func TestRolloutStatusTimesOut(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	createDeployment(t, ns, "stuck", 1, neverReady)
	st := &spec.Step{Name: "s", Timeout: spec.Duration(2 * time.Second), Rollout: &spec.Rollout{Status: "deployment/stuck", Namespace: ns}}
	runErr(t, deadline(t, 2*time.Second), NewRolloutExecutor(env), st,
		"timed out after 2s waiting for rollout to complete on deployment.apps/stuck in "+ns+": ")
}

func TestRolloutErrors(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	x := NewRolloutExecutor(env)
	ctx := deadline(t, time.Minute)
	runErr(t, ctx, x, &spec.Step{Name: "r", Rollout: &spec.Rollout{Restart: "deployment/nope", Namespace: ns}},
		"cannot restart deployment.apps/nope in namespace "+ns+": not found")
	runErr(t, ctx, x, &spec.Step{Name: "s", Rollout: &spec.Rollout{Status: "statefulset/nope", Namespace: ns}},
		"cannot follow the rollout of statefulset.apps/nope in namespace "+ns+": not found")
	runErr(t, ctx, x, &spec.Step{Name: "r", Rollout: &spec.Rollout{Restart: "configmap/x", Namespace: ns}},
		`restart "configmap/x" is a configmap: rollout works on deployment/x, daemonset/x and statefulset/x`)
}
