package e2e

import (
	"strings"
	"testing"

	"github.com/khook/khook/internal/ci/gha"
	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/test/ci/citest"
)

// A plan that predicts failure fails khook ci's plan (#36): a chart that
// writes into a namespace nothing creates (istio-base's shape, #35) plans
// as fail; the job step exits 1 with status=failed and the step named, and
// the plan is still written.
func TestGitHubActionPlanThatWouldFailFailsTheStep(t *testing.T) {
	ns := kube.Namespace(t)
	srv := githubtest.New()
	defer srv.Close()
	g := newRunner(t, srv.URL, "wouldfail.yaml", map[string]string{"command": "plan", "vars": "NS=" + ns})
	g.Write(t, "base/Chart.yaml", "apiVersion: v2\nname: base\nversion: 0.1.0\n")
	g.Write(t, "base/templates/sa.yaml", "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: istio-reader-service-account\n  namespace: {{ .Values.istioNamespace }}\n")
	res := citest.Run(t, g.Workspace, g.Environ)
	outs, _ := gha.ParseKeyValues(g.Read(t, "output"))
	if res.Code != 1 || outs["status"] != "failed" || outs["failure-reason"] != "step-failed" || outs["failed-steps"] != "base" || outs["plan-json-path"] == "" {
		t.Fatalf("exit %d outputs %v\n%s", res.Code, outs, res.Stdout)
	}
	for _, want := range []string{"namespace " + ns + "-istio not found", "1 step would fail on apply."} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("the log lacks %q:\n%s", want, res.Stdout)
		}
	}
	if cs := srv.Comments(7); len(cs) != 1 || !strings.Contains(cs[0].Body, "failed") {
		t.Errorf("want one comment with status failed, got %+v", cs)
	}
}
