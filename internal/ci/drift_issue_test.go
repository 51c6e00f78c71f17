package ci

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/internal/ci/sticky"
)

// A nightly drift run with drift-issue: true on GitHub opens one issue with
// the drift table, the labels and a link to the run; the same drift edits
// it without a comment; other drift edits it and comments; no drift
// comments and closes it. The issue is found on the third page among
// lookalikes, and never opened twice.
func TestGitHubDriftIssueLifecycle(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	srv.PerPage = 2
	// Open issues of the bot before khook's, and a lookalike from a person.
	for i := 0; i < 4; i++ {
		srv.SeedIssue("github-actions[bot]", "other", "some other bot issue")
	}
	srv.SeedIssue("mallory", "fake", sticky.IssueMarker("demo")+"\nnot khook's")
	e := newGHEnv(t, srv.URL, map[string]string{"INPUT_COMMAND": "drift", "INPUT_DRIFT-ISSUE": "true", "INPUT_DRIFT-ISSUE-LABELS": "drift, nightly", "INPUT_COMMENT": "never"})
	mine := func() []githubtest.Issue {
		var out []githubtest.Issue
		for _, is := range srv.Issues() {
			if strings.Contains(is.Body, sticky.IssueMarker("demo")) && is.Author == "github-actions[bot]" {
				out = append(out, is)
			}
		}
		return out
	}
	driftRun := func(b *fakeBackend, want int) string {
		t.Helper()
		code, out, _ := run(t, e.environ, b)
		if code != want {
			t.Fatalf("drift run: exit %d, want %d\n%s", code, want, out)
		}
		return out
	}

	out := driftRun(&fakeBackend{planChanges: true}, 1)
	is := mine()
	if len(is) != 1 {
		t.Fatalf("%d drift issues after the first drift\n%s", len(is), out)
	}
	first := is[0]
	if first.State != "open" || strings.Join(first.Labels, ",") != "drift,nightly" || !strings.Contains(first.Title, "demo") {
		t.Errorf("the opened issue: %+v", first)
	}
	for _, want := range []string{"settings", "create", "https://github.com/acme/infra/actions/runs/42", "khook:drift-set"} {
		if !strings.Contains(first.Body, want) {
			t.Errorf("the issue's body lacks %q:\n%s", want, first.Body)
		}
	}
	if strings.Contains(first.Body, "s3cr3t-db-token") {
		t.Error("the issue leaks a secret")
	}
	if !strings.Contains(out, "opened drift issue https://github.com/acme/infra/issues/") {
		t.Errorf("the log does not link the issue:\n%s", out)
	}

	// The same drift at another commit: edited, no comment.
	e.environ = append(e.environ, "GITHUB_SHA=aaaaaaaaaa")
	driftRun(&fakeBackend{planChanges: true}, 1)
	if is := mine(); len(is) != 1 || is[0].Body == first.Body || len(srv.Comments(first.Number)) != 0 {
		t.Fatalf("the same drift again: %d issues, %d comments", len(is), len(srv.Comments(first.Number)))
	}

	// Other drift: edited and commented once.
	driftRun(&fakeBackend{planChanges: true, configure: true}, 1)
	cs := srv.Comments(first.Number)
	if is := mine(); len(is) != 1 || len(cs) != 1 || !strings.Contains(cs[0].Body, "What drifted changed") || !strings.Contains(cs[0].Body, "settings: configure") {
		t.Fatalf("other drift: %d issues, comments %+v", len(is), cs)
	}

	// No drift: a comment and closed; the job is green.
	out = driftRun(&fakeBackend{}, 0)
	is = mine()
	cs = srv.Comments(first.Number)
	if len(is) != 1 || is[0].State != "closed" || len(cs) != 2 || !strings.Contains(cs[1].Body, "No drift") {
		t.Fatalf("after no drift: %+v, comments %+v\n%s", is, cs, out)
	}
	// No drift again: nothing to do; drift again: a new issue.
	before := len(srv.Requests)
	driftRun(&fakeBackend{}, 0)
	for _, r := range srv.Requests[before:] {
		if !strings.HasPrefix(r, "GET ") {
			t.Errorf("a run without drift and without an open issue wrote: %s", r)
		}
	}
	driftRun(&fakeBackend{planChanges: true}, 1)
	if is := mine(); len(is) != 2 || is[1].State != "open" {
		t.Fatalf("drift after the close: %+v", is)
	}
}

// A token that may not write issues (a fork's, or no issues: write): a
// clear warning, and the drift run's result is unchanged.
func TestGitHubDriftIssueForbiddenWarns(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	srv.ForbidWrites = true
	e := newGHEnv(t, srv.URL, map[string]string{"INPUT_COMMAND": "drift", "INPUT_DRIFT-ISSUE": "true", "INPUT_COMMENT": "never"})
	code, out, _ := run(t, e.environ, &fakeBackend{planChanges: true})
	if code != 1 {
		t.Fatalf("exit %d, want 1 (drift)\n%s", code, out)
	}
	if !strings.Contains(out, "::warning title=khook::khook could not keep the drift issue in repository acme/infra: the token may not write issues") || !strings.Contains(out, "issues: write") {
		t.Errorf("no clear warning:\n%s", out)
	}
	if !regexp.MustCompile(`failure-reason<<\S+\ndrift\n`).MatchString(e.read(t, "output")) {
		t.Errorf("outputs:\n%s", e.read(t, "output"))
	}
	if len(srv.Issues()) != 0 {
		t.Error("an issue was opened")
	}
}

// On GitLab the same: a drift run opens the project's issue (labels as a
// comma list), a change edits it and adds a note, no drift notes and
// closes it; found across pages, never twice; a 403 only warns.
func TestGitLabDriftIssueLifecycle(t *testing.T) {
	gl := &fakeGitLab{perPage: 1}
	srv := httptest.NewServer(gl)
	defer srv.Close()
	dir := t.TempDir()
	for _, f := range []string{"khook.yaml", "vars.yaml"} {
		data, _ := os.ReadFile(filepath.Join("testdata", f))
		os.WriteFile(filepath.Join(dir, f), data, 0o644)
	}
	// Two open issues of the bot before khook's: its issue is on page 3.
	for i := 1; i <= 2; i++ {
		gl.issues = append(gl.issues, map[string]any{"iid": int64(i), "description": "other", "state": "opened", "author": map[string]any{"username": "khook-bot"}})
	}
	env := []string{"GITLAB_CI=true", "CI_PROJECT_DIR=" + dir, "CI_API_V4_URL=" + srv.URL, "CI_PROJECT_ID=42",
		"CI_JOB_URL=https://gitlab.example/acme/infra/-/jobs/9", "GITLAB_TOKEN=glpat-t0ken", "CI_COMMIT_SHA=abcdef123456",
		"KHOOK_COMMAND=drift", "KHOOK_VAR_FILE=vars.yaml", "KHOOK_DRIFT_ISSUE=true", "KHOOK_SECRET_DB_TOKEN=s3cr3t"}
	drift := func(b *fakeBackend, want int) string {
		t.Helper()
		code, out, errOut := run(t, env, b)
		if code != want {
			t.Fatalf("exit %d, want %d\n%s", code, want, out)
		}
		return out + errOut
	}
	drift(&fakeBackend{planChanges: true}, 1)
	drift(&fakeBackend{planChanges: true}, 1)
	if len(gl.issues) != 3 || len(gl.issueNotes[3]) != 0 {
		t.Fatalf("after two runs of the same drift: %d issues, notes %v", len(gl.issues), gl.issueNotes)
	}
	is := gl.issues[2]
	if is["labels"] != "drift" || !strings.Contains(is["description"].(string), "https://gitlab.example/acme/infra/-/jobs/9") || !strings.Contains(is["description"].(string), sticky.IssueMarker("demo")) {
		t.Errorf("the issue: %v", is)
	}
	drift(&fakeBackend{planChanges: true, configure: true}, 1)
	if len(gl.issues) != 3 || len(gl.issueNotes[3]) != 1 || !strings.Contains(gl.issueNotes[3][0], "What drifted changed") {
		t.Fatalf("other drift: %d issues, notes %v", len(gl.issues), gl.issueNotes)
	}
	drift(&fakeBackend{}, 0)
	if is["state"] != "closed" || len(gl.issueNotes[3]) != 2 || !strings.Contains(gl.issueNotes[3][1], "No drift") {
		t.Fatalf("after no drift: %v, notes %v", is, gl.issueNotes[3])
	}
	gl.forbid = true
	out := drift(&fakeBackend{planChanges: true}, 1)
	if !strings.Contains(out, "khook could not keep the drift issue in project 42: the token may not write issues") {
		t.Errorf("no clear warning on 403:\n%s", out)
	}
	if strings.Contains(out, "glpat-t0ken") {
		t.Error("the token leaked")
	}
}

// A nightly drift over a fleet: the legs' drift ends in one fleet report,
// and with drift-issue one issue for the fleet lists the drifted clusters;
// a run without drift anywhere comments on it and closes it. A leg that
// failed without drift anywhere leaves it alone (its drift is unknown).
func TestFleetDriftIssue(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	e, _ := fleetEnv(t, srv)
	nightly := func(b Backend, want int) string {
		t.Helper()
		for _, c := range []string{"staging", "prod-eu", "prod-us"} {
			run(t, append(append([]string(nil), e.environ...), "INPUT_COMMAND=drift", "INPUT_FLEET=fleet.yaml", "INPUT_CLUSTER="+c, "INPUT_DRIFT-ISSUE=true"), b)
		}
		if len(srv.Issues()) > 1 {
			t.Fatalf("a leg opened an issue of its own: %+v", srv.Issues())
		}
		code, out, _ := run(t, append(append([]string(nil), e.environ...), "INPUT_COMMAND=fleet-report", "INPUT_FLEET=fleet.yaml", "INPUT_DRIFT-ISSUE=true", "INPUT_COMMENT=never"), b)
		if code != want {
			t.Fatalf("fleet-report: exit %d, want %d\n%s", code, want, out)
		}
		return out
	}
	nightly(&fakeBackend{planChanges: true}, 1)
	is := srv.Issues()
	if len(is) != 1 || !strings.Contains(is[0].Title, "fleet platform") || !strings.Contains(is[0].Body, sticky.IssueMarker("fleet/platform")) {
		t.Fatalf("after a drifted fleet: %+v", is)
	}
	for _, c := range []string{"staging", "prod-eu", "prod-us"} {
		if !strings.Contains(is[0].Body, c) {
			t.Errorf("the fleet's issue does not name %s:\n%s", c, is[0].Body)
		}
	}
	// staging unreachable, the others without drift: unknown, left alone.
	nightly(unreachable{&fakeBackend{}}, 1)
	if is := srv.Issues(); is[0].State != "open" || len(srv.Comments(is[0].Number)) != 0 {
		t.Fatalf("a failed leg changed the issue: %+v", is)
	}
	nightly(&fakeBackend{}, 0)
	is = srv.Issues()
	cs := srv.Comments(is[0].Number)
	if len(is) != 1 || is[0].State != "closed" || len(cs) != 1 || !strings.Contains(cs[0].Body, "every cluster of the fleet matching the spec") {
		t.Fatalf("after a fleet without drift: %+v %+v", is, cs)
	}
}
