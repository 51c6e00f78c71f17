package ci

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/khook/khook/internal/ci/gha"
	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/report"
	"github.com/khook/khook/spec"
)

// hostile is a secret that is multi-line, full of regex metacharacters and
// a substring-prone value; it must appear in no comment, summary or output.
const hostile = "p4ss.*[x]+(y)?\n$ecret|line^2"

// mergeFlow plans on pull request 7 with b, then lays out the push of the
// merge commit abc123 to main with command apply (and extra env).
func mergeFlow(t *testing.T, srv *githubtest.Server, b *fakeBackend, extra ...string) *ghEnv {
	t.Helper()
	e := newGHEnv(t, srv.URL, map[string]string{"INPUT_COMMAND": "plan", "KHOOK_SECRET_HOSTILE": hostile})
	if code, out, _ := run(t, e.environ, b); code != 0 {
		t.Fatalf("plan exit %d\n%s", code, out)
	}
	srv.Pulls = map[string]int{"abc123": 7}
	push := filepath.Join(e.dir, "push.json")
	os.WriteFile(push, []byte(`{"ref":"refs/heads/main","after":"abc123"}`), 0o644)
	e.reset()
	e.environ = append(e.environ, "INPUT_COMMAND=apply", "GITHUB_EVENT_NAME=push", "GITHUB_EVENT_PATH="+push, "GITHUB_SHA=abc123")
	e.environ = append(e.environ, extra...)
	return e
}

func assertNoSecrets(t *testing.T, where, text string) {
	t.Helper()
	for _, s := range []string{"s3cr3t-db-token", hostile, "p4ss.*[x]+(y)?", "$ecret|line^2"} {
		if strings.Contains(text, s) {
			t.Errorf("%s contains the secret %q", where, s)
		}
	}
}

func TestGitHubPlanCommentAndSummaryCarryTheFingerprint(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	b := &fakeBackend{planChanges: true, leak: " " + hostile}
	e := newGHEnv(t, srv.URL, map[string]string{"INPUT_COMMAND": "plan", "KHOOK_SECRET_HOSTILE": hostile})
	if code, out, _ := run(t, e.environ, b); code != 0 {
		t.Fatalf("plan exit %d\n%s", code, out)
	}
	p, _ := b.Plan(context.Background(), Request{Spec: loadSpec(t, e)})
	cs := srv.Comments(7)
	if len(cs) != 1 {
		t.Fatalf("want one comment, got %d", len(cs))
	}
	short := model.ShortFingerprint(p.Fingerprint)
	if !strings.Contains(cs[0].Body, "\n<!-- khook:fingerprint="+p.Fingerprint+" -->\n") || !strings.Contains(cs[0].Body, "Plan fingerprint `"+short+"`") {
		t.Errorf("the comment lacks the fingerprint %s:\n%s", p.Fingerprint, cs[0].Body)
	}
	if fp, _ := report.CommentFingerprint(cs[0].Body); fp != p.Fingerprint {
		t.Errorf("the comment's fingerprint reads back as %q", fp)
	}
	sum := e.read(t, "summary")
	if !strings.Contains(sum, "Plan fingerprint `"+short+"`") {
		t.Errorf("the summary lacks the fingerprint:\n%s", sum)
	}
	assertNoSecrets(t, "the comment", cs[0].Body)
	assertNoSecrets(t, "the summary", sum)
}

// loadSpec loads the test workspace's spec as khook ci does.
func loadSpec(t *testing.T, e *ghEnv) *spec.Spec {
	t.Helper()
	r := &runState{opts: Options{Environ: e.environ}, getenv: lookup(e.environ)}
	r.red = redact.New()
	in, err := ReadInputs(r.getenv)
	if err != nil {
		t.Fatal(err)
	}
	r.in = in
	r.resolveDirs()
	if oc := r.load(); oc != nil {
		t.Fatalf("load: %+v", oc)
	}
	return r.spec
}

func TestGitHubApplyAfterMergeWithTheReviewedPlanApplies(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	b := &fakeBackend{planChanges: true, world: "reviewed"}
	e := mergeFlow(t, srv, b)
	code, out, _ := run(t, e.environ, b)
	if code != 0 || b.applies != 1 || b.expected != 1 {
		t.Fatalf("exit %d, %d applies (%d held to the checked plan)\n%s", code, b.applies, b.expected, out)
	}
	cs := srv.Comments(7)
	fp, _ := report.CommentFingerprint(cs[0].Body)
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "**Status:** ✅ applied at `abc123`") || fp == "" {
		t.Fatalf("the comment must say applied and keep the fingerprint:\n%s", cs[0].Body)
	}
	short := model.ShortFingerprint(fp)
	want := "The plan matches the one reviewed on [pull request #7](https://github.com/acme/infra/pull/7#issuecomment-1001) (fingerprint `" + short + "`)."
	if !strings.Contains(cs[0].Body, want) || !strings.Contains(e.read(t, "summary"), want) {
		t.Errorf("comment and summary must say the plan matched (%s):\n%s", want, cs[0].Body)
	}
	if !strings.Contains(out, "The plan matches the one reviewed on pull request #7 (fingerprint "+short+").") {
		t.Errorf("the log does not say the plan matched:\n%s", out)
	}
}

func TestGitHubApplyAfterMergeRefusesAChangedPlan(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	b := &fakeBackend{planChanges: true, world: "reviewed", leak: " " + hostile}
	e := mergeFlow(t, srv, b)
	reviewedBody := srv.Comments(7)[0].Body
	reviewedFP, _ := report.CommentFingerprint(reviewedBody)

	// Between the review and the merge, someone edits an object: the plan
	// now predicts the same actions on different content.
	b.world = "edited out of band"
	before := len(srv.Requests)
	code, out, _ := run(t, e.environ, b)
	outs, _ := gha.ParseKeyValues(e.read(t, "output"))
	if code != 1 || outs["failure-reason"] != "plan-changed" || outs["status"] != "failed" || outs["changes"] != "false" {
		t.Fatalf("exit %d outputs %v\n%s", code, outs, out)
	}
	if b.applies != 0 {
		t.Fatalf("a refused apply ran Apply %d times", b.applies)
	}
	now, _ := b.Plan(context.Background(), Request{Spec: loadSpec(t, e)})
	// The comment keeps the reviewed plan; only its status line changes.
	cs := srv.Comments(7)
	line := "**Status:** ❌ apply refused at `abc123`: the plan changed since review (reviewed " +
		model.ShortFingerprint(reviewedFP) + ", now " + model.ShortFingerprint(now.Fingerprint) + ") ([run](https://github.com/acme/infra/actions/runs/42))"
	want := regexp.MustCompile(`(?m)^\*\*Status:\*\* .*$`).ReplaceAllLiteralString(reviewedBody, line)
	if len(cs) != 1 || cs[0].Body != want {
		t.Errorf("the comment must keep the reviewed plan under a refused status line; got:\n%s", cs[0].Body)
	}
	var writes []string
	for _, r := range srv.Requests[before:] {
		if !strings.HasPrefix(r, "GET ") {
			writes = append(writes, r)
		}
	}
	if len(writes) != 1 || !strings.HasPrefix(writes[0], "PATCH /repos/acme/infra/issues/comments/") {
		t.Errorf("GitHub writes: %v, want the one status edit", writes)
	}
	sum := e.read(t, "summary")
	for _, s := range []string{
		"**❌ Apply refused (plan-changed): nothing was applied.**",
		"reviewed fingerprint `" + model.ShortFingerprint(reviewedFP) + "`, now `" + model.ShortFingerprint(now.Fingerprint) + "`",
		"Every step's action is as reviewed",
		"### The plan now",
	} {
		if !strings.Contains(sum, s) {
			t.Errorf("the summary lacks %q:\n%s", s, sum)
		}
	}
	if !regexp.MustCompile(`(?m)^::error file=khook.yaml,title=khook apply failed \(plan-changed\)::The plan changed since it was reviewed on pull request #7`).MatchString(out) {
		t.Errorf("no error annotation:\n%s", out)
	}
	assertNoSecrets(t, "the comment", cs[0].Body)
	assertNoSecrets(t, "the summary", sum)
	// ::add-mask:: lines carry the raw secret to the runner's masker.
	assertNoSecrets(t, "the log", regexp.MustCompile(`(?m)^::add-mask::.*$`).ReplaceAllString(out, ""))
	assertNoSecrets(t, "the outputs", e.read(t, "output"))

	// A changed input changes what a step would do: the summary names it.
	e.reset()
	b.world, b.configure = "reviewed", true
	if code, _, _ := run(t, e.environ, b); code != 1 || b.applies != 0 {
		t.Fatalf("exit %d applies %d", code, b.applies)
	}
	if sum := e.read(t, "summary"); !strings.Contains(sum, "Steps whose action changed: settings (reviewed: create, now: configure).") {
		t.Errorf("the summary does not name the steps that changed:\n%s", sum)
	}
}

func TestGitHubApplyAfterMergeWarnProceeds(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	b := &fakeBackend{planChanges: true, world: "reviewed"}
	e := mergeFlow(t, srv, b, "INPUT_PLAN-CHECK=warn")
	b.world = "changed"
	code, out, _ := run(t, e.environ, b)
	if code != 0 || b.applies != 1 {
		t.Fatalf("warn must apply: exit %d, %d applies\n%s", code, b.applies, out)
	}
	if !regexp.MustCompile(`(?m)^::warning title=khook::The plan changed since it was reviewed on pull request #7: .* Applying anyway \(plan-check: warn\)\.$`).MatchString(out) {
		t.Errorf("no warning annotation:\n%s", out)
	}
	if cs := srv.Comments(7); !strings.Contains(cs[0].Body, "**Status:** ✅ applied") || !strings.Contains(cs[0].Body, "⚠️ The plan changed since it was reviewed") {
		t.Errorf("the comment must say applied, and that the plan had changed:\n%s", cs[0].Body)
	}
}

func TestGitHubApplyAfterMergeOffSkipsTheLookup(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	b := &fakeBackend{planChanges: true, world: "reviewed"}
	e := mergeFlow(t, srv, b, "INPUT_PLAN-CHECK=off", "INPUT_COMMENT=never")
	b.world, b.plans = "changed", 0
	before := len(srv.Requests)
	if code, out, _ := run(t, e.environ, b); code != 0 || b.applies != 1 {
		t.Fatalf("exit %d, %d applies\n%s", code, b.applies, out)
	}
	if got := srv.Requests[before:]; len(got) != 0 || b.plans != 0 {
		t.Errorf("plan-check: off must neither call GitHub nor plan: requests %v, %d plans", got, b.plans)
	}
}

// A direct push (no merged pull request) has no reviewed plan: strict
// refuses with plan-not-found, warn applies with a warning.
func TestGitHubDirectPushHasNoReviewedPlan(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	b := &fakeBackend{planChanges: true}
	e := mergeFlow(t, srv, b, "GITHUB_SHA=def456")
	code, out, _ := run(t, e.environ, b)
	outs, _ := gha.ParseKeyValues(e.read(t, "output"))
	if code != 1 || outs["failure-reason"] != "plan-not-found" || b.applies != 0 {
		t.Fatalf("exit %d outputs %v applies %d\n%s", code, outs, b.applies, out)
	}
	if !strings.Contains(out, "There is no reviewed plan to check against: commit def456 came from no merged pull request (a direct push?).") {
		t.Errorf("the log does not say why:\n%s", out)
	}
	if sum := e.read(t, "summary"); !strings.Contains(sum, "set plan-check: warn") {
		t.Errorf("the summary does not say what to do:\n%s", sum)
	}
	e.reset()
	e.environ = append(e.environ, "INPUT_PLAN-CHECK=warn")
	if code, out, _ := run(t, e.environ, b); code != 0 || b.applies != 1 || !strings.Contains(out, "::warning title=khook::There is no reviewed plan") {
		t.Errorf("warn: exit %d applies %d\n%s", code, b.applies, out)
	}
}

// A pull request whose plan job never commented (comment: never, another
// identifier) has no reviewed plan either.
func TestGitHubMergedPullRequestWithoutKhookComment(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	b := &fakeBackend{planChanges: true}
	e := mergeFlow(t, srv, b, "INPUT_IDENTIFIER=staging")
	code, out, _ := run(t, e.environ, b)
	if code != 1 || b.applies != 0 || !strings.Contains(out, `pull request #7 has no khook comment for identifier "staging"`) {
		t.Errorf("exit %d applies %d\n%s", code, b.applies, out)
	}
}

func TestPlanCheckInput(t *testing.T) {
	e := newGHEnv(t, "http://127.0.0.1:1", map[string]string{"INPUT_COMMAND": "apply", "INPUT_PLAN-CHECK": "paranoid"})
	code, out, _ := run(t, e.environ, nil)
	if code != 2 || !strings.Contains(out, `input plan-check "paranoid" is not a mode: use strict, warn or off`) {
		t.Errorf("exit %d:\n%s", code, out)
	}
	for _, c := range []struct{ event, input, cmd, want string }{
		{"push", "", "apply", "strict"},
		{"pull_request", "", "apply", "off"},
		{"workflow_dispatch", "", "apply", "off"},
		{"workflow_dispatch", "warn", "apply", "warn"},
		{"push", "strict", "destroy", "off"},
	} {
		env := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": c.event, "INPUT_PLAN-CHECK": c.input, "INPUT_COMMAND": c.cmd}
		r := &runState{getenv: func(k string) string { return env[k] }}
		r.in, _ = ReadInputs(r.getenv)
		if got := r.planCheckMode(); got != c.want {
			t.Errorf("%+v: mode %s", c, got)
		}
	}
}

// GitLab: the plan job saves the plan file (an artifact), the manual apply
// job applies exactly it, and refuses when the world moved in between.
func TestGitLabPlanFileThenManualApply(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"khook.yaml", "vars.yaml"} {
		data, _ := os.ReadFile(filepath.Join("testdata", f))
		os.WriteFile(filepath.Join(dir, f), data, 0o644)
	}
	env := []string{"GITLAB_CI=true", "CI_PROJECT_DIR=" + dir, "KHOOK_VAR_FILE=vars.yaml", "KHOOK_PLAN_FILE=.khook/khook.plan",
		"KHOOK_SECRET_HOSTILE=" + hostile, "KHOOK_SECRET_DB_TOKEN=s3cr3t-db-token", "KHOOK_PLAN_KEY=k3y-for-plans"}
	b := &fakeBackend{planChanges: true, world: "reviewed", leak: " " + hostile}
	code, out, _ := run(t, append(env, "KHOOK_COMMAND=plan"), b)
	if code != 0 || !strings.Contains(out, "khook plan: saved the plan to .khook/khook.plan (fingerprint ") {
		t.Fatalf("plan exit %d\n%s", code, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, ".khook", "khook.plan"))
	if err != nil {
		t.Fatal(err)
	}
	assertNoSecrets(t, "the plan file", string(data))
	if strings.Contains(string(data), "k3y-for-plans") {
		t.Error("the plan file holds the plan key")
	}
	apply := append(env, "KHOOK_COMMAND=apply")
	if code, out, _ := run(t, apply, b); code != 0 || b.applies != 1 || b.expected != 1 {
		t.Fatalf("apply exit %d, applies %d, held %d\n%s", code, b.applies, b.expected, out)
	}
	if res := readFile(t, dir, ".khook/results.json"); !strings.Contains(res, `"source": "the plan file .khook/khook.plan"`) {
		t.Errorf("results.json does not record the plan it was held to:\n%s", res)
	}
	b.world = "edited out of band"
	code, out, _ = run(t, apply, b)
	env2 := readFile(t, dir, ".khook/khook.env")
	if code != 1 || b.applies != 1 || !strings.Contains(env2, "KHOOK_FAILURE_REASON=plan-changed") {
		t.Errorf("a changed world: exit %d, applies %d\n%s\n%s", code, b.applies, env2, out)
	}
	os.Remove(filepath.Join(dir, ".khook", "khook.plan"))
	code, out, _ = run(t, apply, b)
	if code != 1 || !strings.Contains(out, "cannot read the plan file .khook/khook.plan (did the plan job save it as an artifact") ||
		!strings.Contains(readFile(t, dir, ".khook/khook.env"), "KHOOK_FAILURE_REASON=plan-not-found") {
		t.Errorf("no plan file: exit %d\n%s", code, out)
	}
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// An apply whose plan changes nothing needs no review: a pull request
// whose plan changed nothing got no comment (comment: on-change).
func TestGitHubApplyThatChangesNothingNeedsNoReview(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	b := &fakeBackend{}
	e := mergeFlow(t, srv, b)
	if len(srv.Comments(7)) != 0 {
		t.Fatal("a plan without changes must not start a comment under on-change")
	}
	code, out, _ := run(t, e.environ, b)
	if code != 0 || b.applies != 1 || !strings.Contains(out, "The plan now changes nothing in the cluster and runs nothing (fingerprint ") {
		t.Errorf("exit %d applies %d\n%s", code, b.applies, out)
	}
	// A job that would run is code run in the cluster: strict holds it to
	// a review even when nothing else changes.
	b.runJobs, b.world = true, "a job's args edited on main"
	e.environ = append(e.environ, "GITHUB_SHA=def456")
	if code, out, _ := run(t, e.environ, b); code != 1 || b.applies != 1 {
		t.Errorf("an unreviewed job run: exit %d applies %d\n%s", code, b.applies, out)
	}
}
