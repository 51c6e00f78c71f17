package cluster_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/khook/khook/test/cluster"
)

func createPod(t *testing.T, ns, name, container string, annotations, nodeSelector map[string]string) {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}, Spec: podSpec(nil, corev1.RestartPolicyAlways).Spec}
	p.Spec.Containers[0].Name = container
	p.Spec.NodeSelector = nodeSelector
	if _, err := kube.Client.CoreV1().Pods(ns).Create(t.Context(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A crash-loop pod runs unready in CrashLoopBackOff after an OOM kill, and
// its leaky container's previous instance printed the secret.
func TestCrashLoopStage(t *testing.T) {
	t.Parallel()
	kube.DumpLogsOnFailure(t)
	ns := kube.Namespace(t)
	createPod(t, ns, "crashy", cluster.LeakyContainer, map[string]string{cluster.CrashLoopAnnotation: "true"}, nil)
	p := await(t, kube.Client.CoreV1().RESTClient(), "pods", ns, "crashy", 30*time.Second, func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1
	})
	cs := p.Status.ContainerStatuses[0]
	if p.Status.Phase != corev1.PodRunning || ready(p) || cs.RestartCount != 5 ||
		cs.State.Waiting == nil || cs.State.Waiting.Reason != "CrashLoopBackOff" ||
		cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.Reason != "OOMKilled" ||
		cs.LastTerminationState.Terminated.ExitCode != 137 {
		t.Fatalf("crash-loop pod: phase %s, ready %v, container status %+v", p.Status.Phase, ready(p), cs)
	}
	for _, previous := range []bool{false, true} {
		raw, err := kube.Client.CoreV1().Pods(ns).GetLogs("crashy", &corev1.PodLogOptions{Container: cluster.LeakyContainer,
			Previous: previous, TailLines: ptr.To[int64](10)}).DoRaw(t.Context())
		if err != nil {
			t.Fatalf("logs (previous %v): %v", previous, err)
		}
		want := cluster.LeakyLogLines[:1]
		if previous {
			want = cluster.LeakyLogLines
		}
		if got := strings.TrimRight(string(raw), "\n"); got != strings.Join(want, "\n") {
			t.Errorf("logs (previous %v) = %q, want %q", previous, got, want)
		}
	}
}

// An image-pull-error pod stays Pending with ImagePullBackOff naming its image.
func TestImagePullStage(t *testing.T) {
	t.Parallel()
	kube.DumpLogsOnFailure(t)
	ns := kube.Namespace(t)
	createPod(t, ns, "nopull", "main", map[string]string{cluster.ImagePullErrorAnnotation: "true"}, nil)
	p := await(t, kube.Client.CoreV1().RESTClient(), "pods", ns, "nopull", 30*time.Second, func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1
	})
	w := p.Status.ContainerStatuses[0].State.Waiting
	if p.Status.Phase != corev1.PodPending || w == nil || w.Reason != "ImagePullBackOff" || !strings.Contains(w.Message, `"example.invalid/none:1"`) {
		t.Fatalf("image-pull pod: phase %s, status %+v", p.Status.Phase, p.Status.ContainerStatuses[0])
	}
}

// A pod whose nodeSelector no node has is reported Unschedulable by the
// real scheduler.
func TestUnschedulablePod(t *testing.T) {
	t.Parallel()
	kube.DumpLogsOnFailure(t)
	ns := kube.Namespace(t)
	createPod(t, ns, "nowhere", "main", nil, cluster.UnschedulableNodeSelector)
	p := await(t, kube.Client.CoreV1().RESTClient(), "pods", ns, "nowhere", 30*time.Second, func(p *corev1.Pod) bool {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonUnschedulable {
				return true
			}
		}
		return false
	})
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && !strings.Contains(c.Message, "didn't match Pod's node affinity/selector") {
			t.Errorf("PodScheduled message %q does not name the node selector", c.Message)
		}
	}
}
