package cluster

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var nonDNS = regexp.MustCompile(`[^a-z0-9]+`)

// Namespace creates a namespace for t, named after the test with a random
// suffix, and deletes it when t ends. When t has failed, it first logs the
// namespace's pods and events. It returns once the namespace's default
// ServiceAccount exists: until then the API server rejects every pod there.
func (c *Cluster) Namespace(t testing.TB) string {
	t.Helper()
	prefix := strings.Trim(nonDNS.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(prefix) > 40 {
		prefix = strings.TrimRight(prefix[:40], "-")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "t-" + prefix + "-", Labels: map[string]string{"khook.test/namespace": "true"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("khook test cluster: cannot create a namespace for %s: %v", t.Name(), err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if t.Failed() {
			t.Logf("namespace %s at failure:\n%s", ns.Name, c.describeNamespace(ctx, ns.Name))
		}
		// Deletion completes in the background; nothing waits for it.
		if err := c.Client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
			t.Logf("khook test cluster: cannot delete namespace %s: %v", ns.Name, err)
		}
	})
	sctx, scancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer scancel()
	if err := c.awaitServiceAccount(sctx, ns.Name); err != nil {
		t.Fatalf("khook test cluster: namespace %s has no default ServiceAccount: %v", ns.Name, err)
	}
	return ns.Name
}

// describeNamespace summarizes the pods and events of a namespace.
func (c *Cluster) describeNamespace(ctx context.Context, ns string) string {
	var b strings.Builder
	pods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Fprintf(&b, "  (cannot list pods: %v)\n", err)
	} else {
		for _, p := range pods.Items {
			ready := "not ready"
			for _, cond := range p.Status.Conditions {
				if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
					ready = "ready"
				}
			}
			fmt.Fprintf(&b, "  pod %s: %s, %s, node %q\n", p.Name, p.Status.Phase, ready, p.Spec.NodeName)
		}
	}
	events, err := c.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Fprintf(&b, "  (cannot list events: %v)\n", err)
	} else {
		for _, e := range events.Items {
			fmt.Fprintf(&b, "  event %s %s/%s: %s: %s\n", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
		}
	}
	return b.String()
}
