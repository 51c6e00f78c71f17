package e2e

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/model"
)

// A validating webhook that does not answer in time (#39 point 5): the
// helm plan says fail with the sentence apply fails with — the webhook's
// name, the chart's ConfigMap — not install and not an error of the
// plan; apply fails the step with it and writes nothing.
func TestHelmPlanFailsOnWebhookTimeout(t *testing.T) {
	ns := namespace(t)
	hook := kc.SilentWebhook(t, ns)
	file := chartSpec(t, ns, "    chart: "+repoRoot+"/test/testdata/charts/immutable\n    values: {denied: true}\n")
	why := `failed calling webhook "` + hook + `"`
	obj := "ConfigMap " + ns + "/app-settings"

	out := khook(t, invocation{Args: []string{"plan", "-f", file, "-o", "json", "--diff"}})
	p := planJSON(t, nil, file)
	if s := p.Steps[0]; out.Code != 1 || s.Action != model.ActionFail || !strings.Contains(s.Reason, why) || !strings.Contains(s.Reason, obj) || strings.Contains(s.Reason, "\n") {
		t.Errorf("plan: exit %d, %s: %s (diff note %q); want exit 1, fail naming %s and %q in one line", out.Code, s.Action, s.Reason, s.DiffNote, obj, why)
	}
	text := khook(t, invocation{Args: []string{"plan", "-f", file}})
	if text.Code != 1 || !strings.Contains(text.Stdout, why) || !strings.Contains(text.Stdout, "Plan: 1 would fail.") {
		t.Errorf("text plan: exit %d\nstdout:\n%s\nstderr:\n%s", text.Code, text.Stdout, text.Stderr)
	}
	applied := khook(t, invocation{Args: []string{"apply", "-f", file, "-o", "json"}})
	expectSteps(t, applied, []want{{Name: "app", Status: model.StatusFailed, Attempts: 1, Error: why}})
	// Helm names the object its own way (ns/app-settings /v1, Kind=ConfigMap).
	if applied.Results != nil && len(applied.Results.Steps) == 1 && !strings.Contains(applied.Results.Steps[0].Error, ns+"/app-settings") {
		t.Errorf("apply's error does not name %s: %s", obj, applied.Results.Steps[0].Error)
	}
	cms, err := kc.Client.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{})
	must(t, err)
	for _, c := range cms.Items {
		if c.Name != "kube-root-ca.crt" {
			t.Errorf("the refused apply wrote ConfigMap %s", c.Name)
		}
	}
}
