package cluster_test

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"

	"github.com/khook/khook/test/cluster"
	"github.com/khook/khook/test/clusterbin"
)

var kube *cluster.Cluster

func TestMain(m *testing.M) { os.Exit(cluster.Main(m, &kube)) }

// await watches the named object until cond holds and returns it; t fails at
// the deadline.
func await[T runtime.Object](t *testing.T, client rest.Interface, resource, ns, name string, timeout time.Duration, cond func(T) bool) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	lw := cache.NewListWatchFromClient(client, resource, ns, fields.OneTermEqualSelector("metadata.name", name))
	objType := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
	var last T
	_, err := watchtools.UntilWithSync(ctx, lw, objType, nil, func(ev watch.Event) (bool, error) {
		obj, ok := ev.Object.(T)
		if !ok || ev.Type == watch.Deleted {
			return false, nil
		}
		last = obj
		return cond(obj), nil
	})
	if err != nil {
		t.Fatalf("%s %s/%s did not reach the expected state within %s: %v; last seen: %+v", resource, ns, name, timeout, err, statusOf(last))
	}
	return last
}

func statusOf(obj runtime.Object) any {
	if obj == nil || reflect.ValueOf(obj).IsNil() {
		return "nothing"
	}
	return reflect.ValueOf(obj).Elem().FieldByName("Status").Interface()
}

func podSpec(annotations map[string]string, restart corev1.RestartPolicy) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "t"}, Annotations: annotations},
		Spec: corev1.PodSpec{
			RestartPolicy: restart,
			Containers:    []corev1.Container{{Name: "main", Image: "example.invalid/none:1"}},
		},
	}
}

func createDeployment(t *testing.T, ns, name string, replicas int32, annotations map[string]string) {
	t.Helper()
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "t"}},
			Template: podSpec(annotations, corev1.RestartPolicyAlways),
		},
	}
	if _, err := kube.Client.AppsV1().Deployments(ns).Create(t.Context(), d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment: %v", err)
	}
}

func createJob(t *testing.T, ns, name string, annotations map[string]string) {
	t.Helper()
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template:     podSpec(annotations, corev1.RestartPolicyNever),
		},
	}
	if _, err := kube.Client.BatchV1().Jobs(ns).Create(t.Context(), j, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create job: %v", err)
	}
}

func deploymentAvailable(want int32) func(*appsv1.Deployment) bool {
	return func(d *appsv1.Deployment) bool {
		if d.Status.ObservedGeneration < d.Generation || d.Status.AvailableReplicas != want || d.Status.UpdatedReplicas != want {
			return false
		}
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable {
				return c.Status == corev1.ConditionTrue
			}
		}
		return false
	}
}

func jobCondition(typ batchv1.JobConditionType) func(*batchv1.Job) bool {
	return func(j *batchv1.Job) bool {
		for _, c := range j.Status.Conditions {
			if c.Type == typ && c.Status == corev1.ConditionTrue {
				return true
			}
		}
		return false
	}
}

// TestServerVersionIsStamped holds the build to the release's version stamp:
// Helm's .Capabilities.KubeVersion comes from this, and charts that
// semverCompare it fail to render on an unstamped v0.0.0-master build.
func TestServerVersionIsStamped(t *testing.T) {
	t.Parallel()
	v, err := kube.Client.Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("server version: %v", err)
	}
	want := clusterbin.KubernetesVersion
	if v.GitVersion != want || !strings.HasPrefix(want, "v"+v.Major+"."+v.Minor+".") {
		t.Errorf("server version = %s (major %q, minor %q), want %s", v.GitVersion, v.Major, v.Minor, want)
	}
	t.Logf("Server Version: %s", v.GitVersion)
}

func TestDeploymentBecomesAvailable(t *testing.T) {
	t.Parallel()
	kube.DumpLogsOnFailure(t)
	ns := kube.Namespace(t)
	createDeployment(t, ns, "web", 3, nil)
	await(t, kube.Client.AppsV1().RESTClient(), "deployments", ns, "web", 30*time.Second, deploymentAvailable(3))
}

func TestJobCompletes(t *testing.T) {
	t.Parallel()
	kube.DumpLogsOnFailure(t)
	ns := kube.Namespace(t)
	createJob(t, ns, "ok", nil)
	j := await(t, kube.Client.BatchV1().RESTClient(), "jobs", ns, "ok", 30*time.Second, jobCondition(batchv1.JobComplete))
	if j.Status.Succeeded != 1 {
		t.Errorf("job complete with %d succeeded pods, want 1", j.Status.Succeeded)
	}
}

// A pod marked to fail makes its job fail, and its logs can be read.
func TestFailingJobFailsAndServesLogs(t *testing.T) {
	t.Parallel()
	kube.DumpLogsOnFailure(t)
	ns := kube.Namespace(t)
	createJob(t, ns, "bad", map[string]string{cluster.FailAnnotation: "true"})
	j := await(t, kube.Client.BatchV1().RESTClient(), "jobs", ns, "bad", 30*time.Second, jobCondition(batchv1.JobFailed))
	if j.Status.Succeeded != 0 || j.Status.Failed != 1 {
		t.Errorf("failed job has %d succeeded and %d failed pods, want 0 and 1", j.Status.Succeeded, j.Status.Failed)
	}

	pods, err := kube.Client.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "job-name=bad"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("list the job's pods: %v (%d pods)", err, len(pods.Items))
	}
	pod := pods.Items[0]
	if pod.Status.Phase != corev1.PodFailed {
		t.Errorf("pod phase %s, want Failed", pod.Status.Phase)
	}
	if cs := pod.Status.ContainerStatuses; len(cs) != 1 || cs[0].State.Terminated == nil || cs[0].State.Terminated.ExitCode != 1 {
		t.Errorf("container statuses %+v, want one terminated with exit code 1", cs)
	}
	logs, err := kube.Client.CoreV1().Pods(ns).GetLogs(pod.Name, &corev1.PodLogOptions{Container: "main", TailLines: ptr.To[int64](2)}).DoRaw(t.Context())
	if err != nil {
		t.Fatalf("read the failed pod's logs: %v", err)
	}
	want := strings.Join(cluster.PodLogLines[len(cluster.PodLogLines)-2:], "\n") + "\n"
	if string(logs) != want {
		t.Errorf("log tail = %q, want %q", logs, want)
	}
}

// The fail switch works as a label too (as on a chart's hook job template).
func TestFailLabel(t *testing.T) {
	t.Parallel()
	kube.DumpLogsOnFailure(t)
	ns := kube.Namespace(t)
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "labelled"},
		Spec:       batchv1.JobSpec{BackoffLimit: ptr.To[int32](0), Template: podSpec(nil, corev1.RestartPolicyNever)},
	}
	j.Spec.Template.Labels[cluster.FailAnnotation] = "true"
	if _, err := kube.Client.BatchV1().Jobs(ns).Create(t.Context(), j, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	await(t, kube.Client.BatchV1().RESTClient(), "jobs", ns, "labelled", 30*time.Second, jobCondition(batchv1.JobFailed))
}

// A ready-after pod runs unready first and becomes ready after the delay; a
// never-ready pod is still unready by then.
func TestReadyAfterAndNeverReady(t *testing.T) {
	t.Parallel()
	kube.DumpLogsOnFailure(t)
	ns := kube.Namespace(t)
	created := time.Now()
	createDeployment(t, ns, "slow", 1, map[string]string{cluster.ReadyAfterAnnotation: "2s"})
	never := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "never"}, Spec: podSpec(nil, corev1.RestartPolicyAlways).Spec}
	never.Annotations = map[string]string{cluster.NeverReadyAnnotation: "true"}
	if _, err := kube.Client.CoreV1().Pods(ns).Create(t.Context(), never, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	running := func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning }
	p := await(t, kube.Client.CoreV1().RESTClient(), "pods", ns, "never", 30*time.Second, running)
	if ready(p) {
		t.Fatalf("never-ready pod is ready")
	}
	await(t, kube.Client.AppsV1().RESTClient(), "deployments", ns, "slow", 30*time.Second, deploymentAvailable(1))
	if took := time.Since(created); took < 2*time.Second {
		t.Errorf("ready-after 2s deployment was available after %s", took)
	}
	p, err := kube.Client.CoreV1().Pods(ns).Get(t.Context(), "never", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Status.Phase != corev1.PodRunning || ready(p) {
		t.Errorf("never-ready pod: phase %s, ready %v; want Running and not ready", p.Status.Phase, ready(p))
	}
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
