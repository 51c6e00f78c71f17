package e2e

import (
	"context"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/model"
)

// A webhook the API server cannot call (failurePolicy: Fail) refuses the
// chart's ConfigMap with a 500, not one of the three statuses a refusal
// used to be: the helm plan says fail with the sentence apply fails with,
// not install with a diff note (#39), and apply writes nothing.
func TestHelmPlanFailsOnWebhookFailure(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	name := "khook-e2e-broken-" + ns
	fail, none := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone
	url := "https://127.0.0.1:1/validate" // nothing listens: the call fails at once
	hook := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "broken.e2e.khook.io",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{"khook.test/deny": "true"}},
		}},
	}
	api := kc.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	_, err := api.Create(ctx, hook, metav1.CreateOptions{})
	must(t, err)
	t.Cleanup(func() { _ = api.Delete(context.Background(), name, metav1.DeleteOptions{}) })

	file := chartSpec(t, ns, "    chart: "+repoRoot+"/test/testdata/charts/immutable\n    values: {denied: true}\n")
	const why = "failed calling webhook"
	p := planJSON(t, nil, file)
	if s := p.Steps[0]; s.Action != model.ActionFail || !strings.Contains(s.Reason, why) || !strings.Contains(s.Reason, "ConfigMap "+ns+"/app-settings") {
		t.Errorf("plan: %s: %s (diff note %q); want fail naming ConfigMap %s/app-settings and %q", s.Action, s.Reason, s.DiffNote, ns, why)
	}
	out := khook(t, invocation{Args: []string{"apply", "-f", file, "-o", "json"}})
	expectSteps(t, out, []want{{Name: "app", Status: model.StatusFailed, Attempts: 1, Error: why}})
	text := khook(t, invocation{Args: []string{"apply", "-f", file}})
	if text.Code == 0 || !strings.Contains(text.Stdout+text.Stderr, why) {
		t.Errorf("text apply: exit %d\nstdout:\n%s\nstderr:\n%s", text.Code, text.Stdout, text.Stderr)
	}
	if cms, err := kc.Client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); err != nil || len(cms.Items) > 1 {
		names := []string{}
		if err == nil {
			for _, c := range cms.Items {
				names = append(names, c.Name)
			}
		}
		t.Errorf("ConfigMaps after the refused apply: %v %v; want only kube-root-ca.crt", names, err)
	}
}
