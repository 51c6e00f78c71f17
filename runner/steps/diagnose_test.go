package steps

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/wait"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/test/cluster"
)

var crashLoop = map[string]string{cluster.CrashLoopAnnotation: "true"}

// awaitPods waits, with the product's own watch, until n pods of the
// namespace report container statuses.
func awaitPods(t *testing.T, env Env, ns string, n int) {
	t.Helper()
	err := wait.For(deadline(t, 2*time.Minute), env.Clients, wait.Target{Mapping: podMapping, Namespace: ns}, "pods to start",
		func(objs []*unstructured.Unstructured) (bool, string, error) {
			started := 0
			for _, o := range objs {
				if cs, _, _ := unstructured.NestedSlice(o.Object, "status", "containerStatuses"); len(cs) > 0 {
					started++
				}
			}
			return started >= n, "", nil
		})
	if err != nil {
		t.Fatal(err)
	}
}

func rolloutStatus(ns, name string) *spec.Step {
	return &spec.Step{Name: "s", Timeout: spec.Duration(2 * time.Second), Rollout: &spec.Rollout{Status: "deployment/" + name, Namespace: ns}}
}

// A rollout stuck on a crash-looping pod names the pod, CrashLoopBackOff,
// the OOM kill with exit 137, the restarts and the previous instance's
// last log lines.
func TestRolloutDiagnosisCrashLoop(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	createDeployment(t, ns, "oom", 1, crashLoop)
	awaitPods(t, env, ns, 1)
	st := rolloutStatus(ns, "oom")
	out, err := NewRolloutExecutor(env).Execute(stepContext(t, st), st)
	if err == nil || !strings.Contains(err.Error(), "timed out after 2s waiting for rollout to complete") {
		t.Fatalf("err = %v, want the rollout's time-out", err)
	}
	d := out.Diagnosis
	if d == nil || len(d.Pods) != 1 || len(d.Objects) != 1 {
		t.Fatalf("diagnosis = %+v, want the Deployment and its pod", d)
	}
	p := d.Pods[0]
	if !strings.HasPrefix(p.Name, "oom-") || d.Reason != "pod "+p.Name+" CrashLoopBackOff: OOMKilled (exit 137), 5 restarts" {
		t.Errorf("reason = %q", d.Reason)
	}
	c := p.Containers[0]
	if c.Restarts != 5 || c.LastTermination == nil || c.LastTermination.ExitCode != 137 || !c.LogsPrevious ||
		strings.Join(c.Logs, "\n") != strings.Join(cluster.PodLogLines, "\n") {
		t.Errorf("container = %+v", c)
	}
	if o := d.Objects[0]; o.Kind != "Deployment" || o.Name != "oom" || o.Status != "InProgress" || o.Message == "" {
		t.Errorf("object = %+v", o)
	}
	if len(d.Unreadable) > 0 {
		t.Errorf("unreadable: %q", d.Unreadable)
	}
}

// counter counts the requests whose path ends in suffix.
func countRequests(cfg *rest.Config, match func(*http.Request) bool, n *atomic.Int64) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if match(req) {
				n.Add(1)
			}
			return rt.RoundTrip(req)
		})
	})
	return cfg
}

// A Deployment with 50 crashing pods: the diagnosis describes the
// configured number of pods and reads the configured number of log tails.
func TestDiagnosisIsBounded(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	var logs atomic.Int64
	cfg := countRequests(testCluster.RESTConfig, func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/log") }, &logs)
	c, err := kube.NewClientsForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	env := NewEnv(c, t.TempDir(), redact.New())
	env.DiagnoseLimits = &wait.DiagnoseLimits{Objects: 5, Pods: 3, Events: 5, LogTails: 2, LogLines: 2, ReadTimeout: 5 * time.Second, Total: 20 * time.Second}
	createDeployment(t, ns, "many", 50, crashLoop)
	awaitPods(t, env, ns, 50)
	out, err := NewRolloutExecutor(env).Execute(deadline(t, time.Second), rolloutStatus(ns, "many"))
	if err == nil {
		t.Fatal("the rollout of 50 crashing pods succeeded")
	}
	d := out.Diagnosis
	if d == nil || len(d.Pods) != 3 || d.PodsNotReady != 50 {
		t.Fatalf("diagnosis = %+v, want 3 of 50 pods", d)
	}
	tails := 0
	for _, p := range d.Pods {
		for _, c := range p.Containers {
			if len(c.Logs) > 0 {
				tails++
				if len(c.Logs) != 2 {
					t.Errorf("pod %s: %d log lines, want 2", p.Name, len(c.Logs))
				}
			}
		}
	}
	if n := logs.Load(); tails != 2 || n != 2 {
		t.Errorf("%d log tails shown, %d log requests; want 2 and 2", tails, n)
	}
	if !strings.Contains(strings.Join(d.Lines(), "\n"), "50 pods not ready; the worst 3:") {
		t.Errorf("lines do not say the diagnosis was cut:\n%s", strings.Join(d.Lines(), "\n"))
	}
}

// When RBAC refuses pods/log and events, the step still fails with its own
// error, and the diagnosis shows what it could read and says what not.
func TestDiagnosisRefusedReads(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	ctx := context.Background()
	user := "diagnose-limited-" + ns
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "read-workloads", Namespace: ns}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"apps"}, Resources: []string{"deployments", "replicasets"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}},
	}}
	if _, err := testCluster.Client.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "read-workloads", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "read-workloads"},
		Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: user}}}
	if _, err := testCluster.Client.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	admin, _ := newTestEnv(t)
	createDeployment(t, ns, "oom", 1, crashLoop)
	awaitPods(t, admin, ns, 1)

	cfg := rest.CopyConfig(testCluster.RESTConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := kube.NewClientsForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	env := NewEnv(c, t.TempDir(), redact.New())
	// The role's grant may take a moment to reach the authorizer's cache.
	st := rolloutStatus(ns, "oom")
	st.Timeout = spec.Duration(3 * time.Second)
	out, err := NewRolloutExecutor(env).Execute(stepContext(t, st), st)
	if err == nil || !strings.Contains(err.Error(), "timed out after 3s waiting for rollout to complete on deployment.apps/oom") {
		t.Fatalf("err = %v, want the rollout's own time-out", err)
	}
	d := out.Diagnosis
	if d == nil || len(d.Pods) != 1 {
		t.Fatalf("diagnosis = %+v, want the pod it could read", d)
	}
	text := strings.Join(d.Unreadable, "\n")
	for _, want := range []string{"the events in namespace " + ns + ": ", "the logs of container app of pod " + ns + "/" + d.Pods[0].Name + ": ", "forbidden"} {
		if !strings.Contains(text, want) {
			t.Errorf("unreadable = %q, want %q", d.Unreadable, want)
		}
	}
	if !strings.Contains(strings.Join(d.Lines(), "\n"), "could not read the events in namespace "+ns) {
		t.Errorf("lines do not say what could not be read:\n%s", strings.Join(d.Lines(), "\n"))
	}
}

// While a rollout waits, its progress names the pod that blocks it, as the
// watch sees it.
func TestRolloutProgressNamesTheBlocker(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	replicas := int32(1)
	labels := map[string]string{"app": "nowhere"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "nowhere", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{NodeSelector: cluster.UnschedulableNodeSelector,
					Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1.0"}}},
			},
		},
	}
	if _, err := testCluster.Client.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	msgs := make(chan string, 100)
	ctx, cancel := context.WithCancel(model.WithStepProgress(deadline(t, time.Minute), func(m string) {
		select {
		case msgs <- m:
		default:
		}
	}))
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := NewRolloutExecutor(env).Execute(ctx, rolloutStatus(ns, "nowhere"))
		done <- err
	}()
	var seen []string
	for {
		select {
		case m := <-msgs:
			seen = append(seen, m)
			if strings.Contains(m, "; pod nowhere-") && strings.Contains(m, " Pending: PodScheduled=False Unschedulable: 0/3 nodes are available") {
				cancel()
				<-done
				return
			}
		case err := <-done:
			t.Fatalf("the rollout ended (%v) before its progress named the unschedulable pod; progress: %q", err, seen)
		}
	}
}
