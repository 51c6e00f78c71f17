package e2e

import (
	"strings"
	"testing"

	"github.com/khook/khook/internal/ci/gha"
	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/test/ci/citest"
)

// A converged apply is no change anywhere: apply twice with comment:
// on-change; the first run creates objects (changes=true, a comment), the
// second finds nothing to do (changes=false, no comment write, and the
// summary says so).
func TestGitHubActionConvergedApplyLeavesTheCommentAlone(t *testing.T) {
	ns := kube.Namespace(t)
	srv := githubtest.New()
	defer srv.Close()
	g := newRunner(t, srv.URL, "converge.yaml", map[string]string{"command": "apply", "vars": "NS=" + ns})

	res := citest.Run(t, g.Workspace, g.Environ)
	if res.Code != 0 {
		t.Fatalf("first apply exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	outs, err := gha.ParseKeyValues(g.Read(t, "output"))
	if err != nil {
		t.Fatal(err)
	}
	if outs["changes"] != "true" || outs["status"] != "ok" {
		t.Errorf("first apply outputs: %v", outs)
	}
	if cs := srv.Comments(7); len(cs) != 1 || !strings.Contains(cs[0].Body, "Changes: Apply: 2 created") {
		t.Fatalf("first apply: want one comment counting 2 created, got %+v", cs)
	}
	if sum := g.Read(t, "summary"); !strings.Contains(sum, "Changes: Apply: 2 created; Job: 1 ran.") {
		t.Errorf("first summary lacks the totals:\n%s", sum)
	}

	g.ResetFiles()
	before := len(srv.Requests)
	res = citest.Run(t, g.Workspace, g.Environ)
	if res.Code != 0 {
		t.Fatalf("second apply exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	outs, _ = gha.ParseKeyValues(g.Read(t, "output"))
	if outs["changes"] != "false" || outs["status"] != "ok" || outs["comment-url"] != "" {
		t.Errorf("second apply outputs: %v", outs)
	}
	for _, r := range srv.Requests[before:] {
		if !strings.HasPrefix(r, "GET ") {
			t.Errorf("the converged apply wrote to GitHub: %s", r)
		}
	}
	const none = "No changes (Apply: 2 unchanged; Job: 1 ran)."
	if sum := g.Read(t, "summary"); !strings.Contains(sum, none) {
		t.Errorf("second summary does not say no changes:\n%s", sum)
	}
	if !strings.Contains(res.Stdout, none) {
		t.Errorf("the job log does not say no changes:\n%s", res.Stdout)
	}
}
