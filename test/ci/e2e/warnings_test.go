package e2e

import (
	"strings"
	"testing"

	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/test/ci/citest"
)

// The API server's warning to a CI apply (v1 Endpoints is deprecated) is in
// the job summary under its step, not only in the log and an annotation.
func TestAPIWarningsInJobSummary(t *testing.T) {
	ns := kube.Namespace(t)
	srv := githubtest.New()
	defer srv.Close()
	g := newRunner(t, srv.URL, "warnings.yaml", map[string]string{"command": "apply", "vars": "NS=" + ns})
	res := citest.Run(t, g.Workspace, g.Environ)
	if res.Code != 0 {
		t.Fatalf("apply exit %d, want 0\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	summary := g.Read(t, "summary")
	_, warnings, ok := strings.Cut(summary, "### Warnings\n\n#### ⚠️ endpoints (khook.yaml:8:5)\n\n")
	block, _, _ := strings.Cut(warnings, "\n\n")
	if want := "- endpoints/legacy in namespace " + ns + ": v1 Endpoints is deprecated"; !ok || !strings.Contains(block, want) {
		t.Errorf("the summary does not show %q under the step:\n%s", want, summary)
	}
}
