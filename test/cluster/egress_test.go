package cluster_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// A webhook that points at a Service makes kube-apiserver dial the Service's
// ClusterIP. The harness's egress proxy refuses that at once (nothing may
// leave this machine), so a webhook with failurePolicy Ignore is skipped and
// the object is created well within the webhook's time-out; the proxy names
// the refused 10.96.x.x destination.
func TestWebhookCallIsRefusedLocally(t *testing.T) {
	t.Parallel()
	kube.DumpLogsOnFailure(t)
	if _, _, ok := kube.RefusedEgress(); !ok {
		t.Skip("a connected cluster has no egress proxy of this test's")
	}
	ns := kube.Namespace(t)
	ctx := t.Context()
	svc, err := kube.Client.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "hook"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 443}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := net.JoinHostPort(svc.Spec.ClusterIP, "443")
	if !strings.HasPrefix(svc.Spec.ClusterIP, "10.96.") {
		t.Fatalf("service ClusterIP %s is not in 10.96.0.0/16", svc.Spec.ClusterIP)
	}
	name := "khook-egress-" + ns
	_, err = kube.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "check.khook.test",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: ns, Name: "hook", Port: ptr.To[int32](443)}},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](10),
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kube.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), name, metav1.DeleteOptions{})
	})

	// The API server picks the configuration up from its informer shortly
	// after it is created: create ConfigMaps until one was sent to the
	// webhook. Each create must succeed before the webhook's time-out would
	// end it: a refused dial fails at once.
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		cctx, cancel := context.WithTimeout(ctx, 8*time.Second)
		_, err := kube.Client.CoreV1().ConfigMaps(ns).Create(cctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}, metav1.CreateOptions{})
		cancel()
		if err != nil {
			t.Fatalf("create ConfigMap with an unreachable Ignore webhook: %v", err)
		}
		n, dests, _ := kube.RefusedEgress()
		if slices.Contains(dests, want) {
			t.Logf("egress proxy refused %s (%d refusals so far) after %d creates", want, n, i+1)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the egress proxy never refused %s; refused: %v", want, dests)
		}
		<-tick.C
	}
}
