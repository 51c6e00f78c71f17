package steps

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilptr "k8s.io/utils/ptr"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/test/cluster"
	"github.com/khook/khook/test/e2e/podenv"
)

func jobStep(name, ns string, vars map[string]string) *spec.Step {
	env := map[string]spec.EnvValue{}
	for k, v := range vars {
		env[k] = spec.EnvValue{Value: v}
	}
	return &spec.Step{Name: name, Timeout: spec.Duration(89500 * time.Millisecond), Job: &spec.Job{
		Image:     "registry.example/tools:1.0",
		Command:   []string{"sh", "-c"},
		Args:      []string{"echo hello"},
		Env:       env,
		Namespace: ns,
	}}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

var podenvOnce sync.Once
var podenvErr error

// usePodEnv installs the policies that let a job's env steer its kwok pod.
func usePodEnv(t *testing.T) {
	t.Helper()
	podenvOnce.Do(func() { podenvErr = podenv.Install(context.Background(), testCluster.Client, "default") })
	if podenvErr != nil {
		t.Fatal(podenvErr)
	}
}

func TestJobRunsToCompletion(t *testing.T) {
	ns := testCluster.Namespace(t)
	env, writes := newTestEnv(t)
	st := jobStep("hello", ns, map[string]string{"ZED": "z", "ALPHA": "a"})
	st.Job.ServiceAccount = "default"
	out, err := NewJobExecutor(env).Execute(testCtx(t), st)
	if err != nil {
		t.Fatalf("job failed: %v", err)
	}
	if !strings.HasPrefix(out.Detail, "job/hello in "+ns+" completed in ") {
		t.Errorf("Detail = %q", out.Detail)
	}
	if out.Writes != 1 || writes.n.Load() != 1 {
		t.Errorf("Writes = %d, counted %d; want 1 (create)", out.Writes, writes.n.Load())
	}
	job, err := testCluster.Client.BatchV1().Jobs(ns).Get(testCtx(t), "hello", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app.kubernetes.io/managed-by": "khook", "khook.io/step": "hello"}
	if d := cmp.Diff(labels, job.Labels); d != "" {
		t.Errorf("Job labels (-want +got):\n%s", d)
	}
	pod := job.Spec.Template.Spec
	got := map[string]any{
		"backoffLimit":          *job.Spec.BackoffLimit,
		"activeDeadlineSeconds": *job.Spec.ActiveDeadlineSeconds,
		"restartPolicy":         pod.RestartPolicy,
		"serviceAccount":        pod.ServiceAccountName,
		"image":                 pod.Containers[0].Image,
		"command":               pod.Containers[0].Command,
		"args":                  pod.Containers[0].Args,
		"env":                   pod.Containers[0].Env,
		"podStepLabel":          job.Spec.Template.Labels["khook.io/step"],
	}
	want := map[string]any{
		"backoffLimit":          int32(0),
		"activeDeadlineSeconds": int64(90), // 89.5s rounded up
		"restartPolicy":         corev1.RestartPolicyNever,
		"serviceAccount":        "default",
		"image":                 "registry.example/tools:1.0",
		"command":               []string{"sh", "-c"},
		"args":                  []string{"echo hello"},
		"env":                   []corev1.EnvVar{{Name: "ALPHA", Value: "a"}, {Name: "ZED", Value: "z"}},
		"podStepLabel":          "hello",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Job spec (-want +got):\n%s", d)
	}
}

func TestJobReplacesThePreviousRun(t *testing.T) {
	ns := testCluster.Namespace(t)
	env, writes := newTestEnv(t)
	x := NewJobExecutor(env)
	st := jobStep("again", ns, nil)
	if _, err := x.Execute(testCtx(t), st); err != nil {
		t.Fatal(err)
	}
	first, err := testCluster.Client.BatchV1().Jobs(ns).Get(testCtx(t), "again", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	writes.n.Store(0)
	out, err := x.Execute(testCtx(t), st)
	if err != nil {
		t.Fatal(err)
	}
	if out.Writes != 2 || writes.n.Load() != 2 {
		t.Errorf("Writes = %d, counted %d; want 2 (delete + create)", out.Writes, writes.n.Load())
	}
	second, err := testCluster.Client.BatchV1().Jobs(ns).Get(testCtx(t), "again", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if first.UID == second.UID {
		t.Errorf("the second run kept the first run's Job %s", first.UID)
	}
}

func TestJobSkipIfSucceeded(t *testing.T) {
	ns := testCluster.Namespace(t)
	env, writes := newTestEnv(t)
	x := NewJobExecutor(env)
	st := jobStep("once", ns, nil)
	st.Job.SkipIf = "succeeded"
	if out, err := x.Execute(testCtx(t), st); err != nil || out.Skipped {
		t.Fatalf("first run: skipped=%v err=%v; want it to run", out.Skipped, err)
	}
	writes.n.Store(0)
	out, err := x.Execute(testCtx(t), st)
	if err != nil {
		t.Fatal(err)
	}
	want := "job/once in " + ns + " already completed successfully (skipIf: succeeded)"
	if !out.Skipped || out.SkipReason != want || out.Writes != 0 || writes.n.Load() != 0 {
		t.Errorf("second run: skipped=%v reason=%q writes=%d counted=%d; want skipped %q with no writes",
			out.Skipped, out.SkipReason, out.Writes, writes.n.Load(), want)
	}
}

func TestJobRefusesAJobKhookDoesNotManage(t *testing.T) {
	ns := testCluster.Namespace(t)
	foreign := buildJob(jobStep("theirs", ns, nil), ns)
	foreign.Labels = map[string]string{"team": "other"}
	if _, err := testCluster.Client.BatchV1().Jobs(ns).Create(testCtx(t), foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	env, writes := newTestEnv(t)
	_, err := NewJobExecutor(env).Execute(testCtx(t), jobStep("theirs", ns, nil))
	want := "job/theirs in " + ns + " exists and is not managed by khook (no label app.kubernetes.io/managed-by=khook); rename the step or delete the Job"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant %s", err, want)
	}
	if writes.n.Load() != 0 {
		t.Errorf("%d writes to a Job khook does not manage", writes.n.Load())
	}
}

func TestJobFailureCarriesThePodsLastLogLines(t *testing.T) {
	usePodEnv(t)
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	out, err := NewJobExecutor(env).Execute(testCtx(t), jobStep("broken", ns, map[string]string{podenv.Fail: "true"}))
	if err == nil {
		t.Fatal("the failing job succeeded")
	}
	if d := cmp.Diff(cluster.PodLogLines, out.LogTail); d != "" {
		t.Errorf("LogTail (-want +got):\n%s", d)
	}
	prefix := "job/broken in " + ns + " failed: "
	tail := "; last log lines:\n  " + strings.Join(cluster.PodLogLines, "\n  ")
	if msg := err.Error(); !strings.HasPrefix(msg, prefix) || !strings.HasSuffix(msg, tail) {
		t.Errorf("error = %q\nwant %q...%q", msg, prefix, tail)
	}
}

func TestJobTimeoutSaysWhatIsStillRunning(t *testing.T) {
	usePodEnv(t)
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	ctx, cancel := context.WithTimeout(testCtx(t), 3*time.Second)
	defer cancel()
	_, err := NewJobExecutor(env).Execute(ctx, jobStep("stuck", ns, map[string]string{podenv.NeverReady: "true"}))
	if err == nil || !strings.HasPrefix(err.Error(), "timed out after ") || !strings.Contains(err.Error(), "job/stuck in "+ns) {
		t.Errorf("error = %v; want a time-out naming job/stuck", err)
	}
}

func TestJobCreatesItsNamespace(t *testing.T) {
	ns := testCluster.Namespace(t) + "-made"
	t.Cleanup(func() {
		_ = testCluster.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	env, _ := newTestEnv(t)
	st := jobStep("fresh", ns, nil)
	if _, err := NewJobExecutor(env).Execute(testCtx(t), st); err == nil || !strings.Contains(err.Error(), "set createNamespace: true") {
		t.Errorf("without createNamespace: error = %v; want a hint to set createNamespace", err)
	}
	st.Job.CreateNamespace = true
	// The plan names the namespace apply creates, as apply's changes do.
	p, err := NewJobExecutor(env).Plan(testCtx(t), st, runner.PlanInput{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Action != model.ActionRun || len(p.Objects) != 1 || p.Objects[0].Action != model.ActionCreate || p.Objects[0].Kind != "Namespace" || p.Objects[0].Name != ns {
		t.Errorf("plan: %s %+v; want run with create Namespace %s", p.Action, p.Objects, ns)
	}
	out, err := NewJobExecutor(env).Execute(testCtx(t), st)
	if err != nil {
		t.Fatal(err)
	}
	if out.Writes != 2 {
		t.Errorf("Writes = %d; want 2 (namespace + job)", out.Writes)
	}
	if len(out.Changes) != 2 || out.Changes[0] != (model.Change{Action: model.DidCreate, Kind: "Namespace", Name: ns}) {
		t.Errorf("changes = %+v; want the namespace created, then the job run", out.Changes)
	}
}

func TestBuildJobWithoutTimeoutHasNoDeadline(t *testing.T) {
	st := jobStep("x", "ns", nil)
	st.Timeout = 0
	if j := buildJob(st, "ns"); j.Spec.ActiveDeadlineSeconds != nil {
		t.Errorf("activeDeadlineSeconds = %d; want unset", *j.Spec.ActiveDeadlineSeconds)
	}
}

// TestJobTakesSecretsAndConfigMaps: env valueFrom, envFrom and volumes
// reach the Job's pod in Kubernetes' shapes, mounts read-only.
func TestJobTakesSecretsAndConfigMaps(t *testing.T) {
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	st := jobStep("sources", ns, map[string]string{"MODE": "fast"})
	j := st.Job
	j.Env["PASSWORD"] = spec.EnvValue{ValueFrom: &spec.EnvSource{SecretKeyRef: &spec.KeyRef{Name: "db", Key: "password", Optional: true}}}
	j.Env["HOST"] = spec.EnvValue{ValueFrom: &spec.EnvSource{ConfigMapKeyRef: &spec.KeyRef{Name: "settings", Key: "host", Optional: true}}}
	j.EnvFrom = []spec.EnvFrom{{SecretRef: &spec.NameRef{Name: "db", Optional: true}}, {Prefix: "CFG_", ConfigMapRef: &spec.NameRef{Name: "settings", Optional: true}}}
	j.Volumes = []spec.JobVolume{{Name: "tls", MountPath: "/etc/tls", Secret: &spec.SecretVolume{SecretName: "db-tls", Optional: true}},
		{Name: "conf", MountPath: "/etc/app", ConfigMap: &spec.ConfigMapVolume{Name: "settings"}}}
	if _, err := NewJobExecutor(env).Execute(testCtx(t), st); err != nil {
		t.Fatalf("job failed: %v", err)
	}
	job, err := testCluster.Client.BatchV1().Jobs(ns).Get(testCtx(t), "sources", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod := job.Spec.Template.Spec
	c := pod.Containers[0]
	yes := utilptr.To(true)
	wantEnv := []corev1.EnvVar{
		{Name: "HOST", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "host", Optional: yes}}},
		{Name: "MODE", Value: "fast"},
		{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password", Optional: yes}}},
	}
	if d := cmp.Diff(wantEnv, c.Env); d != "" {
		t.Errorf("env (-want +got):\n%s", d)
	}
	wantFrom := []corev1.EnvFromSource{
		{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Optional: yes}},
		{Prefix: "CFG_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Optional: yes}},
	}
	if d := cmp.Diff(wantFrom, c.EnvFrom); d != "" {
		t.Errorf("envFrom (-want +got):\n%s", d)
	}
	wantMounts := []corev1.VolumeMount{{Name: "tls", MountPath: "/etc/tls", ReadOnly: true}, {Name: "conf", MountPath: "/etc/app", ReadOnly: true}}
	if d := cmp.Diff(wantMounts, c.VolumeMounts); d != "" {
		t.Errorf("mounts (-want +got):\n%s", d)
	}
	if len(pod.Volumes) != 2 || pod.Volumes[0].Secret == nil || pod.Volumes[0].Secret.SecretName != "db-tls" ||
		pod.Volumes[1].ConfigMap == nil || pod.Volumes[1].ConfigMap.Name != "settings" {
		t.Errorf("volumes %+v", pod.Volumes)
	}
}
