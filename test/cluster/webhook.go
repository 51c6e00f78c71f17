package cluster

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// SilentWebhook registers a validating webhook (failurePolicy: Fail,
// timeoutSeconds: 1) for ConfigMaps labelled khook.test/deny in ns, served
// by a real HTTPS server that never answers: every call the API server
// makes times out. It returns the webhook's name.
func (c *Cluster) SilentWebhook(t testing.TB, ns string) string {
	t.Helper()
	stop := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(func() { close(stop); srv.Close() })
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	name := "silent.e2e.khook.io"
	url := srv.URL + "/validate"
	fail, none := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone
	timeout := int32(1)
	hook := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "khook-e2e-silent-" + ns},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    name,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: ca},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{"khook.test/deny": "true"}},
		}},
	}
	api := c.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	_, err := api.Create(context.Background(), hook, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("khook test cluster: cannot register the silent webhook: %v", err)
	}
	t.Cleanup(func() { _ = api.Delete(context.Background(), hook.Name, metav1.DeleteOptions{}) })
	// The API server reads webhook configurations asynchronously: await a
	// dry run the webhook times out.
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe", Labels: map[string]string{"khook.test/deny": "true"}}}
	err = wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := c.Client.CoreV1().ConfigMaps(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && strings.Contains(err.Error(), name), nil
	})
	if err != nil {
		t.Fatalf("khook test cluster: the silent webhook did not take effect: %v", err)
	}
	return name
}
