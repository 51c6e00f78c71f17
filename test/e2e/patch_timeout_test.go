package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/test/e2e/apiproxy"
)

// TestPatchStepTimeout: nothing in the cluster holds up a single patch, so
// a proxy does: it keeps PATCHes of configmap/slow-target open until khook
// gives up (the step's 1s time-out), and only the first PATCH of
// configmap/slow-once, which the retry then sends through.
func TestPatchStepTimeout(t *testing.T) {
	ns := namespace(t)
	proxy := apiproxy.Start(t, kc.RESTConfig)
	proxy.Hold("PATCH", "/namespaces/"+ns+"/configmaps/slow-target", 0)
	proxy.Hold("PATCH", "/namespaces/"+ns+"/configmaps/slow-once", 1)

	args := []string{"apply", "-f", testdata("steps", "patch-timeout.yaml"), "-o", "json", "--set", "NS=" + ns}
	out := khook(t, invocation{Args: args, Kubeconfig: proxy.Kubeconfig})
	if out.Code != 1 {
		t.Errorf("exit code %d; want 1 (a step failed)\nstderr:\n%s", out.Code, out.Stderr)
	}
	expectSteps(t, out, []want{
		{Name: "seed", Status: ok, Attempts: 1},
		{Name: "stuck", Status: failed, Attempts: 1, Error: "timed out after 1s"},
		{Name: "flaky", Status: ok, Attempts: 2},
	})
	if out.Results != nil && len(out.Results.Steps) == 3 {
		stuck := out.Results.Steps[1].Error
		t.Logf("stuck: %s", stuck)
		if !strings.HasPrefix(stuck, "timed out after 1s") || !strings.Contains(stuck, "configmap/slow-target in namespace "+ns) {
			t.Errorf("the patch time-out does not say it timed out on its target: %q", stuck)
		}
		if strings.Contains(stuck, "context deadline exceeded") {
			t.Errorf("the patch time-out speaks Go, not the user's language: %q", stuck)
		}
	}

	held := proxy.Held()
	slices.Sort(held)
	if want := []string{
		"PATCH /api/v1/namespaces/" + ns + "/configmaps/slow-once",
		"PATCH /api/v1/namespaces/" + ns + "/configmaps/slow-target",
	}; !cmp.Equal(want, held) {
		t.Errorf("held requests %v; want %v", held, want)
	}
	for name, want := range map[string]string{"slow-target": "", "slow-once": "2"} {
		cm, err := kc.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
		must(t, err)
		if got := cm.Data["b"]; got != want {
			t.Errorf("configmap/%s data.b = %q; want %q", name, got, want)
		}
	}
}
