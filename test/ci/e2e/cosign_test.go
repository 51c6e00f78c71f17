package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/khook/khook/internal/ci/gha"
	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/test/chartsrc"
	"github.com/khook/khook/test/ci/citest"
)

// An OCI chart whose cosign signature is by another key (#47), through
// khook ci: the plan fails (exit 1, the step in failed-steps), and an
// annotation and the job summary name the step and the reason.
func TestGitHubActionCosignRefused(t *testing.T) {
	ns := kube.Namespace(t)
	srv := githubtest.New()
	defer srv.Close()
	trusted, other := chartsrc.NewCosignKey(t), chartsrc.NewCosignKey(t)
	c := chartsrc.PushCosign(t, chartsrc.Auth{})
	chartsrc.AttachBundle(t, c, chartsrc.KeyBundle(t, c, other, c.Digest()))
	spec := fmt.Sprintf("apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: cosign}\nsteps:\n  - name: app\n    helm:\n      chart: %s:%s\n      namespace: %s\n      verify:\n        cosign: {key: ./keys/cosign.pub}\n",
		c.Ref(), chartsrc.Version, ns)

	g := newRunner(t, srv.URL, "wouldfail.yaml", map[string]string{"command": "plan", "comment": "never"})
	g.Write(t, "khook.yaml", spec)
	g.Write(t, "keys/cosign.pub", string(trusted.PEM))
	res := citest.Run(t, g.Workspace, g.Environ)
	outs, _ := gha.ParseKeyValues(g.Read(t, "output"))
	if res.Code != 1 || outs["status"] != "failed" || outs["failed-steps"] != "app" {
		t.Fatalf("exit %d outputs %v\n%s", res.Code, outs, res.Stdout)
	}
	reason := "is not verified: required a signature by key " + trusted.Fingerprint() + ", found a signature that none of the required keys verifies"
	annotated := false
	for _, line := range annotationLine.FindAllString(res.Stdout, -1) {
		annotated = annotated || (strings.Contains(line, "app") && strings.Contains(line, reason))
	}
	if !annotated {
		t.Errorf("no annotation names step app and %q:\n%s", reason, res.Stdout)
	}
	if summary := g.Read(t, "summary"); !strings.Contains(summary, "app") || !strings.Contains(summary, reason) {
		t.Errorf("the job summary lacks the step or the reason:\n%s", summary)
	}
}

// The same chart version re-published with other bytes after apply (the
// same files compressed again: the release plans unchanged): the drift
// run finds drift (exit 1, drift=true, failure-reason drift) and its
// summary and annotation name both digests.
func TestGitHubActionChartRepublishedDrift(t *testing.T) {
	ns := kube.Namespace(t)
	srv := githubtest.New()
	defer srv.Close()
	dir := t.TempDir()
	tgz := chartsrc.Package(t, "demo", dir)
	repo := chartsrc.ServeDir(t, chartsrc.Auth{}, dir)
	spec := fmt.Sprintf("apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: moved}\nstate: {namespace: %[1]s}\nsteps:\n  - name: app\n    helm:\n      chart: demo\n      repo: %[2]s\n      version: %[3]s\n      namespace: %[1]s\n",
		ns, repo.URL, chartsrc.Version)
	g := newRunner(t, srv.URL, "wouldfail.yaml", map[string]string{"command": "apply", "comment": "never"})
	g.Write(t, "khook.yaml", spec)
	run := commandRunner(t, g)
	if res, _ := run("apply"); res.Code != 0 {
		t.Fatalf("apply exit %d\n%s", res.Code, res.Stdout)
	}
	if res, outs := run("drift"); res.Code != 0 || outs["drift"] != "false" {
		t.Fatalf("converged drift run: exit %d outputs %v\n%s", res.Code, outs, res.Stdout)
	}
	applied := chartsrc.FileDigest(t, tgz)
	chartsrc.Recompress(t, tgz)
	repo.Reindex(t)
	served := chartsrc.FileDigest(t, tgz)

	res, outs := run("drift")
	if res.Code != 1 || outs["drift"] != "true" || outs["failure-reason"] != "drift" {
		t.Fatalf("re-published chart: exit %d outputs %v\n%s", res.Code, outs, res.Stdout)
	}
	both := applied + " in the state record, " + served + " now"
	annotated := false
	for _, line := range annotationLine.FindAllString(res.Stdout, -1) {
		annotated = annotated || (strings.Contains(line, "app") && strings.Contains(line, both))
	}
	if !annotated {
		t.Errorf("no annotation names step app and %q:\n%s", both, res.Stdout)
	}
	if summary := g.Read(t, "summary"); !strings.Contains(summary, both) {
		t.Errorf("the job summary does not name both digests:\n%s", summary)
	}
}

// commandRunner runs khook ci in g's workspace as the given command, with
// fresh output files each time, and returns its result and outputs.
func commandRunner(t *testing.T, g *citest.GitHub) func(command string) (citest.Result, map[string]string) {
	return func(command string) (citest.Result, map[string]string) {
		t.Helper()
		g.ResetFiles()
		g.Set("INPUT_COMMAND=" + command)
		res := citest.Run(t, g.Workspace, g.Environ)
		outs, _ := gha.ParseKeyValues(g.Read(t, "output"))
		return res, outs
	}
}
