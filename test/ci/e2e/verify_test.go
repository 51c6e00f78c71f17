package e2e

import (
	"os"
	"strings"
	"testing"

	"github.com/khook/khook/internal/ci/gha"
	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/test/chartsrc"
	"github.com/khook/khook/test/ci/citest"
)

// A chart signed by a key the step does not trust (#47), through khook ci:
// the plan fails (exit 1, the step named in failed-steps), and the job
// summary, the comment and an annotation name the step and the reason.
// With require-verified-charts, a step without verify: is refused at
// validation.
func TestGitHubActionUnverifiedChart(t *testing.T) {
	ns := kube.Namespace(t)
	srv := githubtest.New()
	defer srv.Close()
	trusted, other := chartsrc.NewSigner(t, "Chart Signer"), chartsrc.NewSigner(t, "Someone Else")
	dir := t.TempDir()
	other.Sign(t, chartsrc.Package(t, "demo", dir))
	repo := chartsrc.ServeDir(t, chartsrc.Auth{}, dir)
	ring, err := os.ReadFile(trusted.PublicRing)
	if err != nil {
		t.Fatal(err)
	}
	spec := "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: verified}\nsteps:\n  - name: app\n    helm:\n      chart: demo\n      repo: " + repo.URL +
		"\n      version: 0.1.0\n      namespace: " + ns + "\n      verify:\n        provenance: {keyring: ./keys/pubring.gpg}\n"

	g := newRunner(t, srv.URL, "wouldfail.yaml", map[string]string{"command": "plan"})
	g.Write(t, "khook.yaml", spec)
	g.Write(t, "keys/pubring.gpg", string(ring))
	res := citest.Run(t, g.Workspace, g.Environ)
	outs, _ := gha.ParseKeyValues(g.Read(t, "output"))
	if res.Code != 1 || outs["status"] != "failed" || outs["failed-steps"] != "app" {
		t.Fatalf("exit %d outputs %v\n%s", res.Code, outs, res.Stdout)
	}
	reason := "is signed by key " + other.Fingerprint + ", which is not in the keyring"
	annotated := false
	for _, line := range annotationLine.FindAllString(res.Stdout, -1) {
		annotated = annotated || (strings.Contains(line, "app") && strings.Contains(line, reason))
	}
	if !annotated {
		t.Errorf("no annotation names step app and %q:\n%s", reason, res.Stdout)
	}
	summary := g.Read(t, "summary")
	if !strings.Contains(summary, "app") || !strings.Contains(summary, reason) {
		t.Errorf("the job summary lacks the step or the reason:\n%s", summary)
	}
	if cs := srv.Comments(7); len(cs) != 1 || !strings.Contains(cs[0].Body, reason) {
		t.Errorf("want one comment naming the reason, got %+v", cs)
	}

	// require-verified-charts: a step without verify: is refused at load.
	g = newRunner(t, srv.URL, "wouldfail.yaml", map[string]string{"command": "plan", "require-verified-charts": "true"})
	g.Write(t, "khook.yaml", strings.Split(spec, "      verify:")[0])
	res = citest.Run(t, g.Workspace, g.Environ)
	outs, _ = gha.ParseKeyValues(g.Read(t, "output"))
	if res.Code != 2 || outs["failure-reason"] != "validation" || !strings.Contains(res.Stdout, "step app installs demo unverified") {
		t.Errorf("require-verified-charts: exit %d outputs %v\n%s", res.Code, outs, res.Stdout)
	}
}
