package ci

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/khook/khook/internal/ci/gha"
	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/command"
)

// unreachable is a backend whose clusters under context "gone" cannot be
// reached; the rest plan as fakeBackend does.
type unreachable struct{ *fakeBackend }

func (u unreachable) Plan(ctx context.Context, req Request) (*model.Plan, error) {
	if req.Context == "gone" {
		return nil, &command.Failure{Reason: model.ReasonClusterUnreachable, Err: errors.New("cannot reach the cluster at https://10.255.0.1:6443: connection refused")}
	}
	return u.fakeBackend.Plan(ctx, req)
}

const testFleet = `apiVersion: khook.io/v1
kind: Fleet
metadata: {name: platform}
files: [khook.yaml]
clusters:
  - {name: staging, wave: 1, context: gone, varFiles: [vars.yaml]}
  - {name: prod-eu, wave: 2, context: eu, varFiles: [vars.yaml], vars: {REGION: eu-west-1}}
  - {name: prod-us, wave: 2, context: us, varFiles: [vars.yaml], vars: {REGION: us-east-1}}
`

func fleetEnv(t *testing.T, srv *githubtest.Server) (*ghEnv, string) {
	e := newGHEnv(t, srv.URL, nil)
	ws := filepath.Join(e.dir, "workspace")
	if err := os.WriteFile(filepath.Join(ws, "fleet.yaml"), []byte(testFleet), 0o644); err != nil {
		t.Fatal(err)
	}
	return e, ws
}

// Three legs (one unreachable) and one fleet report: no leg comments, one
// comment naming every cluster with the two identical plans grouped and
// the unreachable cluster failed; a deleted results file reports its
// cluster failed, and the second report edits the same comment.
func TestFleetLegsAndReportOneComment(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	e, ws := fleetEnv(t, srv)
	b := unreachable{&fakeBackend{planChanges: true}}
	for _, c := range []string{"staging", "prod-eu", "prod-us"} {
		env := append(append([]string(nil), e.environ...), "INPUT_COMMAND=plan", "INPUT_FLEET=fleet.yaml", "INPUT_CLUSTER="+c)
		code, out, _ := run(t, env, b)
		if want := map[bool]int{true: 1, false: 0}[c == "staging"]; code != want {
			t.Fatalf("leg %s: exit %d, want %d\n%s", c, code, want, out)
		}
		if _, err := os.Stat(filepath.Join(ws, ".khook", "khook-leg-"+c+".json")); err != nil {
			t.Fatalf("leg %s wrote no results file: %v", c, err)
		}
	}
	if n := len(srv.Comments(7)); n != 0 {
		t.Fatalf("legs posted %d comments, want none", n)
	}

	e.reset()
	report := append(append([]string(nil), e.environ...), "INPUT_COMMAND=fleet-report", "INPUT_FLEET=fleet.yaml", "INPUT_RESULTS=.khook")
	code, out, _ := run(t, report, b)
	if code != 1 {
		t.Errorf("fleet-report with a failed cluster: exit %d, want 1\n%s", code, out)
	}
	cs := srv.Comments(7)
	if len(cs) != 1 {
		t.Fatalf("want exactly 1 comment, got %d", len(cs))
	}
	body := cs[0].Body
	if os.Getenv("DUMP") != "" {
		t.Log(body)
	}
	for _, want := range []string{"staging", "prod-eu", "prod-us", "prod-eu, prod-us: the same 1 change", "failed (cluster-unreachable)", "cannot reach the cluster"} {
		if !strings.Contains(body, want) {
			t.Errorf("the comment lacks %q:\n%s", want, body)
		}
	}
	if strings.Count(body, "```diff") != 1 {
		t.Errorf("identical plans must share one diff; the comment has %d:\n%s", strings.Count(body, "```diff"), body)
	}
	if !strings.Contains(e.read(t, "summary"), "prod-eu, prod-us: the same") {
		t.Errorf("the job summary lacks the grouped plan")
	}
	outs, _ := gha.ParseKeyValues(e.read(t, "output"))
	if outs["status"] != "failed" || outs["comment-url"] == "" {
		t.Errorf("outputs = %v", outs)
	}

	// A leg whose results never arrived is a failed cluster, not a green one.
	if err := os.Remove(filepath.Join(ws, ".khook", "khook-leg-prod-us.json")); err != nil {
		t.Fatal(err)
	}
	e.reset()
	run(t, report, b)
	cs = srv.Comments(7)
	if len(cs) != 1 {
		t.Fatalf("the second report must edit the one comment; got %d", len(cs))
	}
	if !strings.Contains(cs[0].Body, "prod-us") || !strings.Contains(cs[0].Body, "failed (no results)") {
		t.Errorf("prod-us without results is not reported failed:\n%s", cs[0].Body)
	}
	if strings.Contains(cs[0].Body, "the same") {
		t.Errorf("one changing cluster left, nothing to group:\n%s", cs[0].Body)
	}
}

// The wave gate: wave 1's failure exceeds maxFailures 0, so the report of
// wave 1 fails; wave 2 alone has none.
func TestFleetReportWaveGate(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	e, _ := fleetEnv(t, srv)
	b := unreachable{&fakeBackend{}}
	for _, c := range []string{"staging", "prod-eu", "prod-us"} {
		run(t, append(append([]string(nil), e.environ...), "INPUT_COMMAND=plan", "INPUT_FLEET=fleet.yaml", "INPUT_CLUSTER="+c), b)
	}
	gate := func(wave string) int {
		code, _, _ := run(t, append(append([]string(nil), e.environ...), "INPUT_COMMAND=fleet-report", "INPUT_FLEET=fleet.yaml", "INPUT_WAVE="+wave, "INPUT_COMMENT=never"), b)
		return code
	}
	if code := gate("1"); code != 1 {
		t.Errorf("wave 1 (1 failed, maxFailures 0): exit %d, want 1", code)
	}
	if code := gate("2"); code != 0 {
		t.Errorf("wave 2 (no failures): exit %d, want 0", code)
	}
}

// On GitLab the legs (KHOOK_FLEET, KHOOK_CLUSTER, the kubeconfig from the
// variable kubeconfigSecret names) and the report's one merge request note.
func TestGitLabFleetLegsAndNote(t *testing.T) {
	gl := &fakeGitLab{}
	srv := httptest.NewServer(gl)
	defer srv.Close()
	dir := t.TempDir()
	for _, f := range []string{"khook.yaml", "vars.yaml"} {
		data, _ := os.ReadFile(filepath.Join("testdata", f))
		os.WriteFile(filepath.Join(dir, f), data, 0o644)
	}
	os.WriteFile(filepath.Join(dir, "fleet.yaml"), []byte(testFleet), 0o644)
	env := []string{"GITLAB_CI=true", "CI_PROJECT_DIR=" + dir, "CI_API_V4_URL=" + srv.URL, "CI_PROJECT_ID=42",
		"CI_MERGE_REQUEST_IID=5", "CI_PROJECT_URL=https://gitlab.example/acme/infra", "GITLAB_TOKEN=glpat-t0ken", "KHOOK_FLEET=fleet.yaml", "KHOOK_SECRET_DB_TOKEN=s3cr3t"}
	b := unreachable{&fakeBackend{planChanges: true}}
	for _, c := range []string{"staging", "prod-eu", "prod-us"} {
		run(t, append(append([]string(nil), env...), "KHOOK_COMMAND=plan", "KHOOK_CLUSTER="+c), b)
	}
	if len(gl.notes) != 0 {
		t.Fatalf("legs wrote %d notes", len(gl.notes))
	}
	code, out, _ := run(t, append(append([]string(nil), env...), "KHOOK_COMMAND=fleet-report"), b)
	if code != 1 || len(gl.notes) != 1 {
		t.Fatalf("fleet-report: exit %d, %d notes\n%s", code, len(gl.notes), out)
	}
	if body := gl.notes[0]["body"].(string); !strings.Contains(body, "prod-eu, prod-us: the same") || !strings.Contains(body, "staging") {
		t.Errorf("the note:\n%s", body)
	}
	data, _ := os.ReadFile(filepath.Join(dir, ".khook", DotenvFile))
	if !strings.Contains(string(data), "KHOOK_STATUS=failed\n") {
		t.Errorf("dotenv:\n%s", data)
	}
}

// The waves' apply on the push of the merge edits the merged pull
// request's fleet comment: applied.
func TestFleetApplyOnPushUpdatesTheFleetComment(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	e, _ := fleetEnv(t, srv)
	b := &fakeBackend{planChanges: true}
	legs := func(command string) {
		for _, c := range []string{"staging", "prod-eu", "prod-us"} {
			if code, out, _ := run(t, append(append([]string(nil), e.environ...), "INPUT_COMMAND="+command, "INPUT_FLEET=fleet.yaml", "INPUT_CLUSTER="+c), b); code != 0 {
				t.Fatalf("%s leg %s: exit %d\n%s", command, c, code, out)
			}
		}
		if code, out, _ := run(t, append(append([]string(nil), e.environ...), "INPUT_COMMAND=fleet-report", "INPUT_FLEET=fleet.yaml"), b); code != 0 {
			t.Fatalf("fleet-report after %s: exit %d\n%s", command, code, out)
		}
	}
	legs("plan")
	srv.Pulls = map[string]int{"abc123": 7}
	push := filepath.Join(e.dir, "push.json")
	os.WriteFile(push, []byte(`{"ref":"refs/heads/main","after":"abc123"}`), 0o644)
	e.environ = append(e.environ, "GITHUB_EVENT_NAME=push", "GITHUB_EVENT_PATH="+push, "GITHUB_SHA=abc123")
	legs("apply")
	cs := srv.Comments(7)
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "**Status:** ✅ applied") || !strings.Contains(cs[0].Body, "3 clusters: 3 changed") {
		t.Fatalf("after the push's apply: %d comments\n%s", len(cs), cs[len(cs)-1].Body)
	}
}

// policyRecorder records the policy files each leg's spec was loaded with.
type policyRecorder struct {
	*fakeBackend
	files map[string][]string
}

func (p policyRecorder) Plan(ctx context.Context, req Request) (*model.Plan, error) {
	p.files[req.Identifier] = req.Spec.PolicyFiles
	return p.fakeBackend.Plan(ctx, req)
}

// A leg checks the fleet's policy files, then its cluster's own, then the
// policies input: the same list khook files and fleet matrix
// --changed-since read for that cluster.
func TestFleetLegChecksItsPolicies(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	e, ws := fleetEnv(t, srv)
	rule := "policies:\n  - name: %s\n    deny: 'false'\n    message: '\"never\"'\n"
	for name, text := range map[string]string{
		"policy-fleet.yaml":    "apiVersion: khook.io/v1\nkind: Fleet\nmetadata: {name: platform}\nfiles: [khook.yaml]\npolicies: [policies/all.yaml]\nclusters:\n  - {name: prod-eu, context: eu, varFiles: [vars.yaml], policies: [policies/eu.yaml]}\n  - {name: prod-us, context: us, varFiles: [vars.yaml]}\n",
		"policies/all.yaml":    fmt.Sprintf(rule, "all"),
		"policies/eu.yaml":     fmt.Sprintf(rule, "eu"),
		"policies/review.yaml": fmt.Sprintf(rule, "review"),
	} {
		os.MkdirAll(filepath.Join(ws, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b := policyRecorder{&fakeBackend{}, map[string][]string{}}
	for _, c := range []string{"prod-eu", "prod-us"} {
		e.reset()
		env := append(append([]string(nil), e.environ...), "INPUT_COMMAND=plan", "INPUT_FLEET=policy-fleet.yaml", "INPUT_CLUSTER="+c, "INPUT_POLICIES=policies/review.yaml")
		if code, out, _ := run(t, env, b); code != 0 {
			t.Fatalf("leg %s: exit %d\n%s", c, code, out)
		}
	}
	want := map[string][]string{
		"prod-eu": {"policies/all.yaml", "policies/eu.yaml", "policies/review.yaml"},
		"prod-us": {"policies/all.yaml", "policies/review.yaml"},
	}
	if d := cmp.Diff(want, b.files); d != "" {
		t.Errorf("the legs' policy files (-want +got):\n%s", d)
	}
}

// A leg whose plan predicts a failure names the failing steps and why in
// its results file: the fleet report shows no plan, only that line.
func TestFleetLegSaysWhyItsPlanFails(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	e, ws := fleetEnv(t, srv)
	env := append(append([]string(nil), e.environ...), "INPUT_COMMAND=plan", "INPUT_FLEET=fleet.yaml", "INPUT_CLUSTER=prod-eu")
	if code, out, _ := run(t, env, &fakeBackend{wouldFail: "migrate"}); code != 1 {
		t.Fatalf("leg: exit %d, want 1\n%s", code, out)
	}
	data, err := os.ReadFile(filepath.Join(ws, ".khook", "khook-leg-prod-eu.json"))
	if err != nil {
		t.Fatal(err)
	}
	var leg model.Leg
	if err := json.Unmarshal(data, &leg); err != nil {
		t.Fatal(err)
	}
	if want := `step migrate: install failed: namespaces "istio-system" not found`; leg.FailureReason != model.ReasonStepFailed || !strings.Contains(leg.Error, want) {
		t.Errorf("leg %s (%s): error %q, want it to say %q", leg.Cluster, leg.FailureReason, leg.Error, want)
	}
}
