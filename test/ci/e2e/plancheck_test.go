package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/internal/ci/gha"
	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/model"
	"github.com/khook/khook/report"
	"github.com/khook/khook/test/ci/citest"
)

// mergeAndPush makes the runner's next run the push of merge commit sha,
// which GitHub answers came from pull request number.
func mergeAndPush(t *testing.T, srv *githubtest.Server, g *citest.GitHub, number int, sha string) {
	t.Helper()
	if srv.Pulls == nil {
		srv.Pulls = map[string]int{}
	}
	srv.Pulls[sha] = number
	push := filepath.Join(g.Dir, "push.json")
	if err := os.WriteFile(push, []byte(fmt.Sprintf(`{"ref":"refs/heads/main","after":%q}`, sha)), 0o644); err != nil {
		t.Fatal(err)
	}
	g.ResetFiles()
	g.Set("INPUT_COMMAND=apply", "GITHUB_EVENT_NAME=push", "GITHUB_EVENT_PATH="+push, "GITHUB_SHA="+sha)
}

// planOnPR runs the plan job on pull request number and returns its
// comment's fingerprint.
func planOnPR(t *testing.T, srv *githubtest.Server, g *citest.GitHub, number int) string {
	t.Helper()
	g.ResetFiles()
	g.Event(t, number, fmt.Sprintf("%040x", number))
	g.Set("INPUT_COMMAND=plan", "GITHUB_EVENT_NAME=pull_request", "GITHUB_EVENT_PATH="+filepath.Join(g.Dir, "event.json"))
	res := citest.Run(t, g.Workspace, g.Environ)
	if res.Code != 0 {
		t.Fatalf("plan on #%d: exit %d\n%s\n%s", number, res.Code, res.Stdout, res.Stderr)
	}
	cs := srv.Comments(number)
	if len(cs) != 1 {
		t.Fatalf("want one comment on #%d, got %d", number, len(cs))
	}
	fp, _ := report.CommentFingerprint(cs[0].Body)
	if fp == "" || !strings.Contains(cs[0].Body, "Plan fingerprint `"+model.ShortFingerprint(fp)+"`") ||
		!strings.Contains(g.Read(t, "summary"), "Plan fingerprint `"+model.ShortFingerprint(fp)+"`") {
		t.Fatalf("the plan comment and summary must carry the fingerprint:\n%s", cs[0].Body)
	}
	return fp
}

// PR plan comment -> merge -> apply with the same world applies and says
// so; with the world changed between review and merge, the apply refuses
// with plan-changed, writes nothing and marks the comment.
func TestGitHubActionApplyAfterMergeIsHeldToTheReviewedPlan(t *testing.T) {
	ns := kube.Namespace(t)
	srv := githubtest.New()
	defer srv.Close()
	g := newRunner(t, srv.URL, "plancheck.yaml", map[string]string{"vars": "NS=" + ns + "\nREGION=eu-west-1", "plan-key": "pl4n-k3y.*"})

	fp := planOnPR(t, srv, g, 7)
	mergeAndPush(t, srv, g, 7, "aaaa000000000000000000000000000000000007")
	res := citest.Run(t, g.Workspace, g.Environ)
	outs, _ := gha.ParseKeyValues(g.Read(t, "output"))
	if res.Code != 0 || outs["status"] != "ok" || outs["changes"] != "true" {
		t.Fatalf("apply of the reviewed plan: exit %d outputs %v\n%s\n%s", res.Code, outs, res.Stdout, res.Stderr)
	}
	body := srv.Comments(7)[0].Body
	if !strings.Contains(body, "**Status:** ✅ applied at `aaaa000`") || !strings.Contains(body, "The plan matches the one reviewed on") ||
		!strings.Contains(body, "(fingerprint `"+model.ShortFingerprint(fp)+"`)") {
		t.Errorf("the comment must say applied, with the fingerprint:\n%s", body)
	}

	// The next pull request changes the region; before it merges, someone
	// edits the flags ConfigMap in the cluster.
	g.Set("INPUT_VARS=NS=" + ns + "\nREGION=us-east-1")
	fp8 := planOnPR(t, srv, g, 8)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cm, err := kube.Client.CoreV1().ConfigMaps(ns).Get(ctx, "flags", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["beta"] = "false"
	if cm, err = kube.Client.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	settings, err := kube.Client.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mergeAndPush(t, srv, g, 8, "bbbb000000000000000000000000000000000008")
	res = citest.Run(t, g.Workspace, g.Environ)
	outs, _ = gha.ParseKeyValues(g.Read(t, "output"))
	if res.Code != 1 || outs["failure-reason"] != "plan-changed" || outs["status"] != "failed" {
		t.Fatalf("a changed world: exit %d outputs %v\n%s\n%s", res.Code, outs, res.Stdout, res.Stderr)
	}
	// Nothing written: neither the reviewed change nor a repair of the edit.
	for name, rv := range map[string]string{"flags": cm.ResourceVersion, "settings": settings.ResourceVersion} {
		got, err := kube.Client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil || got.ResourceVersion != rv {
			t.Errorf("ConfigMap %s was written by the refused apply (resourceVersion %s -> %s, %v)", name, rv, got.ResourceVersion, err)
		}
	}
	body = srv.Comments(8)[0].Body
	if !strings.Contains(body, "**Status:** ❌ apply refused at `bbbb000`: the plan changed since review (reviewed "+model.ShortFingerprint(fp8)) ||
		!strings.Contains(body, "([run](https://github.com/acme/infra/actions/runs/4242))") {
		t.Errorf("the comment must say the apply was refused:\n%s", body)
	}
	sum := g.Read(t, "summary")
	if !strings.Contains(sum, "Apply refused (plan-changed): nothing was applied.") || !strings.Contains(sum, "reviewed fingerprint `"+model.ShortFingerprint(fp8)+"`") {
		t.Errorf("the summary must explain the refusal:\n%s", sum)
	}
	for _, text := range []string{body, sum, g.Read(t, "output")} {
		if strings.Contains(text, "pl4n-k3y") || strings.Contains(text, "ghs_acceptance_t0ken") {
			t.Errorf("a secret leaked:\n%s", text)
		}
	}
}
