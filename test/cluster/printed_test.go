package cluster_test

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/test/cluster"
)

// TestPrintLog: a pod in the printed log's namespace printed the lines the
// test chose; a pod elsewhere still printed PodLogLines.
func TestPrintLog(t *testing.T) {
	t.Parallel()
	kube.DumpLogsOnFailure(t)
	lines := []string{"connecting as app", "password=pr1nted-by-the-test"}
	ns := kube.PrintLog(t, lines...)
	if ns != cluster.PrintedLogNamespace {
		t.Fatalf("PrintLog returned %q", ns)
	}
	createJob(t, ns, "printer", map[string]string{cluster.FailAnnotation: "true"})
	t.Cleanup(func() {
		bg := metav1.DeletePropagationBackground
		_ = kube.Client.BatchV1().Jobs(ns).Delete(context.Background(), "printer", metav1.DeleteOptions{PropagationPolicy: &bg})
	})
	await(t, kube.Client.BatchV1().RESTClient(), "jobs", ns, "printer", 30*time.Second, jobCondition(batchv1.JobFailed))
	pods, err := kube.Client.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "job-name=printer"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("list the job's pods: %v", err)
	}
	logs, err := kube.Client.CoreV1().Pods(ns).GetLogs(pods.Items[0].Name, &corev1.PodLogOptions{Container: "main"}).DoRaw(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(lines, "\n") + "\n"; string(logs) != want {
		t.Errorf("the printed log is %q, want %q", logs, want)
	}
}
