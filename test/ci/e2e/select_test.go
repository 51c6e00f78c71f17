package e2e

import (
	"strings"
	"testing"

	"github.com/khook/khook/internal/ci/gha"
	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/test/ci/citest"
)

// The target input makes a partial run: outputs partial and selected-steps,
// the summary's and comment's partial line; the other steps are not
// selected. A target naming no step fails validation with did-you-mean.
func TestGitHubActionTargetIsAPartialRun(t *testing.T) {
	ns := kube.Namespace(t)
	t.Cleanup(func() { deleteNamespace(ns + "-app") })
	srv := githubtest.New()
	defer srv.Close()
	g := newRunner(t, srv.URL, "khook.yaml", map[string]string{"command": "apply", "target": "tune", "vars": "NS=" + ns + "\nREGION=eu-west-1"})
	res := citest.Run(t, g.Workspace, g.Environ)
	if res.Code != 0 {
		t.Fatalf("apply with target: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	outs, err := gha.ParseKeyValues(g.Read(t, "output"))
	if err != nil {
		t.Fatal(err)
	}
	if outs["partial"] != "true" || outs["selected-steps"] != "app,tune" || outs["status"] != "ok" {
		t.Errorf("outputs: partial=%q selected-steps=%q status=%q", outs["partial"], outs["selected-steps"], outs["status"])
	}
	summary := g.Read(t, "summary")
	if !strings.Contains(summary, "Partial run: 2 of 5 steps (--target tune); the others are not selected") {
		t.Errorf("the summary does not say the run was partial:\n%s", summary)
	}
	if cs := srv.Comments(7); len(cs) != 1 || !strings.Contains(cs[0].Body, "Partial run: 2 of 5 steps") {
		t.Errorf("the comment does not say the run was partial: %+v", cs)
	}
	if rec := stateRecord(t, ns, "ci-demo"); !strings.Contains(rec, `"partial":true`) || strings.Contains(rec, `"settings"`) {
		t.Errorf("state record after a partial apply:\n%s", rec)
	}

	g.ResetFiles()
	g.Set("INPUT_TARGET=tunne", "INPUT_COMMAND=plan")
	res = citest.Run(t, g.Workspace, g.Environ)
	if res.Code != 2 || !strings.Contains(res.Stdout, `--target tunne: no step of the spec has that name (did you mean \"tune\"?)`) &&
		!strings.Contains(res.Stdout, `--target tunne: no step of the spec has that name (did you mean "tune"?)`) {
		t.Errorf("a target naming no step: exit %d\n%s", res.Code, res.Stdout)
	}
}
