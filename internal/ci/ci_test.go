package ci

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/khook/khook/internal/ci/gha"
	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/planfile"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// fakeBackend answers with fixed models built from the loaded spec, so
// positions are the spec's own.
type fakeBackend struct {
	planChanges bool
	failStep    string
	// converged makes apply find every object as the spec has it.
	converged bool
	// leak is put into every free-text field a cluster could fill.
	leak string
	// configure makes apply steps predict configure instead of create.
	configure bool
	// runJobs makes job steps predict a run even without planChanges.
	runJobs bool
	// driftWarn gives every step drift: warn.
	driftWarn bool
	// wouldFail plans the step of that name as fail.
	wouldFail string
	// world stands for everything a plan fingerprint covers besides the
	// predicted actions (objects' content, inputs, the cluster): plans of
	// the same world have the same fingerprint.
	world string
	// plans and applies count the calls; expected counts the applies held
	// to a plan (Request.Expect) that still matched.
	plans, applies, expected int
}

func (f *fakeBackend) Plan(ctx context.Context, req Request) (*model.Plan, error) {
	p := &model.Plan{Name: req.Spec.Metadata.Name, Server: "https://127.0.0.1:6443"}
	for _, st := range req.Spec.Steps {
		ps := model.PlanStep{Name: st.Name, Type: st.Type(), Needs: st.Needs, Pos: req.Spec.PosOf(st.Path), Action: model.ActionNoop, Summary: "nothing to do"}
		if f.planChanges && st.Type() == "apply" {
			ps.Action, ps.Summary = model.ActionCreate, "apply 1 object"+f.leak
			if f.configure {
				ps.Action = model.ActionConfigure
			}
			ps.Diff = "+kind: ConfigMap\n+data: {region: eu-west-1}\n" + f.leak
		}
		if (f.planChanges || f.runJobs) && st.Type() == "job" {
			ps.Action, ps.Summary = model.ActionRun, "run job "+st.Name
		}
		if st.Type() == "wait" {
			ps.Action, ps.Reason = model.ActionUnknown, "namespace demo is created by an earlier step"
		}
		if st.Name == f.wouldFail {
			ps.Action, ps.Reason = model.ActionFail, "install failed: namespaces \"istio-system\" not found"
		}
		ps.DriftWarn = f.driftWarn
		p.Steps = append(p.Steps, ps)
	}
	p.Totals = model.PlanTotals(p.Steps)
	for _, s := range p.Steps {
		p.Changes = p.Changes || model.IsChange(s.Action)
	}
	world := sha256.Sum256([]byte(f.world))
	p.Digests = &model.PlanDigests{Spec: "sha256:" + hex.EncodeToString(world[:])}
	p.Fingerprint = planfile.Fingerprint(p)
	f.plans++
	return p, nil
}

func (f *fakeBackend) Apply(ctx context.Context, req Request) (*model.Results, error) {
	res := &model.Results{Name: req.Spec.Metadata.Name, Command: "apply", Status: model.RunOK, StartedAt: t0, DurationMs: 3200, Server: "https://127.0.0.1:6443"}
	if req.Expect != nil {
		// As action.Apply does under the state lock: plan again, refuse
		// before the first step when the world moved.
		f.plans--
		if now, _ := f.Plan(ctx, req); now.Fingerprint != req.Expect.Plan.Fingerprint {
			res.Status, res.FailureReason, res.Error = model.RunFailed, model.ReasonPlanChanged, "the world changed: "+strings.Join(req.Expect.Changes(now), "; ")
			return res, nil
		}
		f.expected++
	}
	f.applies++
	failed := ""
	for i, st := range req.Spec.Steps {
		sr := model.StepResult{Name: st.Name, Type: st.Type(), Needs: st.Needs, Pos: req.Spec.PosOf(st.Path), Attempts: 1, DurationMs: int64(1000 * (i + 1))}
		req.Emit(model.Event{Time: t0.Add(time.Duration(i) * time.Second), Kind: model.EventStarted, Step: st.Name, Attempt: 1})
		switch {
		case failed != "":
			sr.Status, sr.Attempts, sr.SkipReason = model.StatusSkipped, 0, "needs "+failed+", which failed"
		case st.Name == f.failStep:
			sr.Status, sr.Error = model.StatusFailed, "job migrate failed: pod migrate-abc exited with code 1"+f.leak
			sr.LogTail = []string{"connecting", "::error::injected by a pod", "fatal: " + f.leak}
			failed = st.Name
			res.Status, res.FailureReason = model.RunFailed, model.ReasonStepFailed
		default:
			sr.Status, sr.Detail = model.StatusOK, "done"+f.leak
			sr.Changes = f.changes(st.Type(), st.Name)
		}
		req.Emit(model.Event{Time: t0.Add(time.Duration(i+1) * time.Second), Kind: model.EventFinished, Step: st.Name, Result: &sr})
		res.Steps = append(res.Steps, sr)
	}
	return res, nil
}

// changes is a step's change set: apply steps create (or find unchanged)
// one ConfigMap, job steps run.
func (f *fakeBackend) changes(typ, name string) []model.Change {
	switch typ {
	case "apply":
		did := model.DidCreate
		if f.converged {
			did = model.DidUnchanged
		}
		return []model.Change{{Action: did, Kind: "ConfigMap", Namespace: "demo", Name: name}}
	case "job":
		return []model.Change{{Action: model.DidRun, Kind: "Job", Namespace: "demo", Name: name}}
	}
	return nil
}

func (f *fakeBackend) Destroy(ctx context.Context, req Request) (*model.Results, error) {
	r, err := f.Apply(ctx, req)
	r.Command = "destroy"
	return r, err
}

// ghEnv is a GitHub Actions runner's environment for a Docker action step
// on a pull_request event, with files in dir.
type ghEnv struct {
	dir     string
	environ []string
}

func newGHEnv(t *testing.T, apiURL string, inputs map[string]string) *ghEnv {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "workspace")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"khook.yaml", "invalid.yaml", "vars.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(ws, f), data, 0o644)
	}
	event := `{"action":"synchronize","number":7,"pull_request":{"number":7,"head":{"sha":"0123456789abcdef0123","repo":{"fork":false}}}}`
	os.WriteFile(filepath.Join(dir, "event.json"), []byte(event), 0o644)
	e := &ghEnv{dir: dir, environ: []string{
		"GITHUB_ACTIONS=true", "GITHUB_WORKSPACE=" + ws, "GITHUB_REPOSITORY=acme/infra", "GITHUB_RUN_ID=42",
		"GITHUB_SERVER_URL=https://github.com", "GITHUB_API_URL=" + apiURL, "GITHUB_SHA=fedcba",
		"GITHUB_EVENT_NAME=pull_request", "GITHUB_EVENT_PATH=" + filepath.Join(dir, "event.json"),
		"GITHUB_OUTPUT=" + filepath.Join(dir, "output"), "GITHUB_STEP_SUMMARY=" + filepath.Join(dir, "summary"),
		"INPUT_FILE=khook.yaml", "INPUT_VAR-FILE=vars.yaml", "INPUT_DIFF=true", "INPUT_COMMENT=on-change",
		"INPUT_GITHUB-TOKEN=ghs_t0ken", "INPUT_IDENTIFIER=", "INPUT_KUBECONFIG=", "INPUT_CONTEXT=",
		"KHOOK_SECRET_DB_TOKEN=s3cr3t-db-token",
	}}
	for k, v := range inputs {
		e.environ = append(e.environ, k+"="+v)
	}
	return e
}

func (e *ghEnv) read(t *testing.T, name string) string {
	data, _ := os.ReadFile(filepath.Join(e.dir, name))
	return string(data)
}

func (e *ghEnv) reset() {
	os.Remove(filepath.Join(e.dir, "output"))
	os.Remove(filepath.Join(e.dir, "summary"))
}

func run(t *testing.T, environ []string, b Backend) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(context.Background(), Options{Stdout: &out, Stderr: &errOut, Environ: environ, Backend: b, Now: func() time.Time { return t0 }})
	return code, out.String(), errOut.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		os.WriteFile(path, []byte(got), 0o644)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/ci -update)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, d)
	}
}

var commandLine = regexp.MustCompile(`(?m)^::(error|warning|notice)[ :].*$`)

func outputsJSON(t *testing.T, text string) string {
	m, err := gha.ParseKeyValues(text)
	if err != nil {
		t.Fatalf("GITHUB_OUTPUT does not parse the way the runner reads it: %v\n%s", err, text)
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	return string(b) + "\n"
}

func TestGitHubPlanCommentsAndEditsInPlace(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	e := newGHEnv(t, srv.URL, map[string]string{"INPUT_COMMAND": "plan"})
	b := &fakeBackend{planChanges: true}

	code, out, _ := run(t, e.environ, b)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if !strings.HasPrefix(out, "::add-mask::") {
		t.Errorf("stdout must start with ::add-mask:: lines, got %.80q", out)
	}
	golden(t, "github-plan-summary.md", e.read(t, "summary"))
	golden(t, "github-plan-outputs.json", outputsJSON(t, e.read(t, "output")))
	golden(t, "github-plan-annotations.txt", strings.Join(commandLine.FindAllString(out, -1), "\n")+"\n")
	cs := srv.Comments(7)
	if len(cs) != 1 {
		t.Fatalf("want 1 comment, got %d", len(cs))
	}
	golden(t, "github-plan-comment.md", cs[0].Body)

	// The merge's apply edits the same comment: planned -> applied.
	e.reset()
	e.environ = append(e.environ, "INPUT_COMMAND=apply")
	if code, out, _ := run(t, e.environ, b); code != 0 {
		t.Fatalf("apply exit %d\n%s", code, out)
	}
	cs = srv.Comments(7)
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "**Status:** ✅ applied") {
		t.Fatalf("the apply must edit the one comment; got %d comments:\n%s", len(cs), cs[len(cs)-1].Body)
	}
	outs, _ := gha.ParseKeyValues(e.read(t, "output"))
	if outs["comment-url"] != "https://github.com/acme/infra/pull/7#issuecomment-1001" || outs["results-json-path"] != ".khook/results.json" {
		t.Errorf("apply outputs: %v", outs)
	}
}

func TestGitHubApplyFailureAnnotatesTheStep(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	e := newGHEnv(t, srv.URL, map[string]string{"INPUT_COMMAND": "apply"})
	code, out, _ := run(t, e.environ, &fakeBackend{failStep: "migrate"})
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	golden(t, "github-apply-failed-annotations.txt", strings.Join(commandLine.FindAllString(out, -1), "\n")+"\n")
	golden(t, "github-apply-failed-summary.md", e.read(t, "summary"))
	// The pod's fake annotation is printed inside stop-commands.
	i := strings.Index(out, "::error::injected by a pod")
	stop := strings.LastIndex(out[:i], "::stop-commands::")
	if i < 0 || stop < 0 {
		t.Fatalf("pod log line not fenced:\n%s", out)
	}
	tok := strings.TrimSpace(strings.SplitN(out[stop+len("::stop-commands::"):], "\n", 2)[0])
	if !strings.Contains(out[i:], "::"+tok+"::") {
		t.Error("stop-commands is not resumed after the pod log")
	}
	outs, _ := gha.ParseKeyValues(e.read(t, "output"))
	if outs["status"] != "failed" || outs["failure-reason"] != "step-failed" || outs["failed-steps"] != "migrate" {
		t.Errorf("outputs: %v", outs)
	}
}

func TestGitHubForbiddenCommentIsAWarning(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	srv.ForbidWrites = true
	e := newGHEnv(t, srv.URL, map[string]string{"INPUT_COMMAND": "plan"})
	code, out, _ := run(t, e.environ, &fakeBackend{planChanges: true})
	if code != 0 {
		t.Fatalf("a 403 on the comment must leave the step green; exit %d", code)
	}
	if !regexp.MustCompile(`(?m)^::warning title=khook::khook could not comment on pull request #7`).MatchString(out) {
		t.Errorf("no warning about the comment:\n%s", out)
	}
	if !strings.Contains(e.read(t, "summary"), "would change the cluster") {
		t.Error("the summary must still have the plan")
	}
}

func TestGitHubDriftFailsTheStep(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	e := newGHEnv(t, srv.URL, map[string]string{"INPUT_COMMAND": "drift", "INPUT_COMMENT": "never"})
	code, _, _ := run(t, e.environ, &fakeBackend{planChanges: true})
	outs, _ := gha.ParseKeyValues(e.read(t, "output"))
	if code != 1 || outs["drift"] != "true" || outs["failure-reason"] != "drift" || outs["status"] != "failed" {
		t.Errorf("exit %d outputs %v", code, outs)
	}
	if len(srv.Requests) != 0 {
		t.Errorf("comment: never must not call the API: %v", srv.Requests)
	}
	e2 := newGHEnv(t, srv.URL, map[string]string{"INPUT_COMMAND": "drift"})
	code, _, _ = run(t, e2.environ, &fakeBackend{})
	outs, _ = gha.ParseKeyValues(e2.read(t, "output"))
	if code != 0 || outs["drift"] != "false" || outs["status"] != "ok" {
		t.Errorf("no drift: exit %d outputs %v", code, outs)
	}
}

// A plan that predicts failure fails the job step, with the step named,
// and the plan is still written for review.
func TestGitHubPlanThatWouldFailFailsTheStep(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	for _, cmd := range []string{"plan", "drift"} {
		e := newGHEnv(t, srv.URL, map[string]string{"INPUT_COMMAND": cmd, "INPUT_COMMENT": "never"})
		code, out, _ := run(t, e.environ, &fakeBackend{wouldFail: "migrate"})
		outs, _ := gha.ParseKeyValues(e.read(t, "output"))
		if code != 1 || outs["status"] != "failed" || outs["failure-reason"] != "step-failed" || outs["failed-steps"] != "migrate" || outs["plan-json-path"] == "" {
			t.Errorf("%s: exit %d outputs %v\n%s", cmd, code, outs, out)
		}
		if !strings.Contains(out, "1 step would fail on apply.") {
			t.Errorf("%s: the log does not say the plan would fail:\n%s", cmd, out)
		}
	}
}

func TestGitHubDriftWarnReportsWithoutFailing(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	e := newGHEnv(t, srv.URL, map[string]string{"INPUT_COMMAND": "drift", "INPUT_COMMENT": "never"})
	code, _, _ := run(t, e.environ, &fakeBackend{planChanges: true, driftWarn: true})
	outs, _ := gha.ParseKeyValues(e.read(t, "output"))
	if code != 0 || outs["drift"] != "true" || outs["status"] != "ok" {
		t.Errorf("drift: warn must report drift and leave the run green: exit %d outputs %v", code, outs)
	}
}

func TestGitHubValidationProblemsAnnotateTheSpec(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	e := newGHEnv(t, srv.URL, map[string]string{"INPUT_COMMAND": "validate", "INPUT_FILE": "invalid.yaml"})
	code, out, _ := run(t, e.environ, nil)
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	golden(t, "github-validate-annotations.txt", strings.Join(commandLine.FindAllString(out, -1), "\n")+"\n")
	outs, _ := gha.ParseKeyValues(e.read(t, "output"))
	if outs["failure-reason"] != "validation" {
		t.Errorf("outputs: %v", outs)
	}
	if len(srv.Comments(7)) != 1 {
		t.Error("an invalid spec on a PR is worth a comment")
	}
}

// validate checks the manifests offline as khook validate does: a typo'd
// field is an annotation on its line in the manifest file.
func TestGitHubValidateChecksManifestsOffline(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	e := newGHEnv(t, srv.URL, map[string]string{"INPUT_COMMAND": "validate", "INPUT_FILE": "typo.yaml", "INPUT_VAR-FILE": "", "INPUT_COMMENT": "never"})
	ws := filepath.Join(e.dir, "workspace")
	os.WriteFile(filepath.Join(ws, "typo.yaml"), []byte("apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: typo}\nsteps:\n  - name: web\n    apply:\n      manifests: [{file: web.yaml}]\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "web.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndatas: {a: b}\n"), 0o644)
	code, out, _ := run(t, e.environ, nil)
	const want = `::error file=web.yaml,line=4,col=1,`
	if code != 2 || !strings.Contains(out, want) || !strings.Contains(out, `configmap/web: unknown field "datas"`) {
		t.Errorf("exit %d, want 2 and an annotation %s... naming the field:\n%s", code, want, out)
	}
}

func TestBadInputsAreValidationFailures(t *testing.T) {
	e := newGHEnv(t, "http://127.0.0.1:1", map[string]string{"INPUT_COMMAND": "deploy", "INPUT_DIFF": "yes"})
	code, out, _ := run(t, e.environ, nil)
	if code != 2 || !strings.Contains(out, `input command "deploy" is not a command`) || !strings.Contains(out, `input diff "yes" is not a boolean`) {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestInputsPrecedence(t *testing.T) {
	env := map[string]string{"INPUT_VAR-FILE": "a.yaml\nb.yaml", "KHOOK_VAR_FILE": "c.yaml", "KHOOK_COMMAND": "apply", "INPUT_COMMAND": "", "KHOOK_TERRAFORM_REPORT": "true"}
	in, err := ReadInputs(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a.yaml", "b.yaml"}, in.VarFiles); d != "" || in.Command != "apply" || !in.TerraformReport || !in.Diff || in.Comment != "on-change" {
		t.Errorf("inputs %+v %s", in, d)
	}
}

// Apply on merge runs on a push: khook finds the merged pull request from
// the commit and updates the comment plan left, and creates none otherwise.
func TestGitHubApplyOnPushUpdatesTheMergedPRComment(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	e := newGHEnv(t, srv.URL, map[string]string{"INPUT_COMMAND": "plan"})
	b := &fakeBackend{planChanges: true}
	if code, out, _ := run(t, e.environ, b); code != 0 {
		t.Fatalf("plan exit %d\n%s", code, out)
	}
	srv.Pulls = map[string]int{"abc123": 7}
	push := filepath.Join(e.dir, "push.json")
	os.WriteFile(push, []byte(`{"ref":"refs/heads/main","after":"abc123"}`), 0o644)
	e.reset()
	e.environ = append(e.environ, "INPUT_COMMAND=apply", "GITHUB_EVENT_NAME=push", "GITHUB_EVENT_PATH="+push, "GITHUB_SHA=abc123")
	if code, out, _ := run(t, e.environ, b); code != 0 {
		t.Fatalf("apply exit %d\n%s", code, out)
	}
	cs := srv.Comments(7)
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "applied") || !strings.Contains(cs[0].Body, "at `abc123`") {
		t.Fatalf("comments after the push's apply: %+v", cs)
	}
	// A push whose commit came from no pull request comments nowhere
	// (plan-check: off, or it would refuse an unreviewed push).
	e.reset()
	e.environ = append(e.environ, "GITHUB_SHA=def456", "INPUT_PLAN-CHECK=off")
	before := len(srv.Requests)
	if code, _, _ := run(t, e.environ, &fakeBackend{}); code != 0 {
		t.Fatal("apply failed")
	}
	for _, r := range srv.Requests[before:] {
		if strings.HasPrefix(r, "POST") || strings.HasPrefix(r, "PATCH") {
			t.Errorf("unexpected write %s", r)
		}
	}
}

// A sops-encrypted var-file input is opened as khook's --var-file is: with
// a key that opens it the spec validates, with none the run is a validation
// failure naming the file and its recipient.
func TestEncryptedVarFileInput(t *testing.T) {
	fixtures, err := filepath.Abs(filepath.Join("..", "..", "test", "e2e", "testdata", "sops"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", t.TempDir())
	e := newGHEnv(t, "http://127.0.0.1:1", map[string]string{"INPUT_COMMAND": "validate", "INPUT_FILE": "greeting.yaml", "INPUT_VAR-FILE": filepath.Join(fixtures, "values.enc.yaml"), "INPUT_COMMENT": "never"})
	os.WriteFile(filepath.Join(e.dir, "workspace", "greeting.yaml"), []byte("apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: greeting}\nvars:\n  greeting: {type: string, required: true}\nsteps:\n  - name: web\n    rollout: {restart: deployment/web, namespace: default}\n"), 0o644)
	t.Setenv("SOPS_AGE_KEY_FILE", filepath.Join(fixtures, "TEST-ONLY-age.key"))
	if code, out, _ := run(t, e.environ, nil); code != 0 {
		t.Errorf("with the key: exit %d:\n%s", code, out)
	}
	t.Setenv("SOPS_AGE_KEY_FILE", filepath.Join(fixtures, "TEST-ONLY-wrong-age.key"))
	if code, out, _ := run(t, e.environ, nil); code != 2 || !strings.Contains(out, "values.enc.yaml: no available key opens it; it was encrypted for age age1nydme8") {
		t.Errorf("with a key that does not open it: exit %d:\n%s", code, out)
	}
}
