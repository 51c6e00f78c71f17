package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/internal/ci/gha"
	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/command"
	"github.com/khook/khook/runner/state"
	"github.com/khook/khook/test/ci/citest"
)

// The exit-code table (runner/command.ExitTable) on the real control plane:
// every row that needs a cluster runs through every front end — khook with
// text and with -o json output, khook ci on GitHub and on GitLab — and each
// must exit with command.ExitCode's code for the row's result and, where the
// front end reports a failure reason (khook's apply verdict and results
// document, the GitHub output failure-reason, GitLab's KHOOK_FAILURE_REASON),
// report the row's reason. The rows that need no cluster (validation, usage,
// cluster-unreachable) run through the four front ends in
// ../exitcodes_test.go; here they run only under plan --detailed-exitcode,
// where every failure exits 1. A row of the table without a case here, or
// a case for no row, fails the test. Every front end can be cancelled
// deterministically: khook ci is a khook command, and khook turns the first
// SIGTERM into a cancelled run, so each gets it once its output shows the
// waiting step started. khook has no drift command and khook ci no
// --detailed-exitcode; those runs are skipped with the reason logged.
func TestExitCodeTableOnTheCluster(t *testing.T) {
	cases := exitTableCases()
	seen := map[string]bool{}
	for _, row := range command.ExitTable {
		key := exitRowKey(row)
		if seen[key] {
			t.Fatalf("two rows of the exit-code table share the key %q: give each a reason of its own", key)
		}
		seen[key] = true
		c, ok := cases[key]
		if !ok {
			t.Errorf("the exit-code table's row %q (%s) has no case in TestExitCodeTableOnTheCluster: add one, or name the test that runs it", key, row.When)
			continue
		}
		for _, sc := range c.scenarios {
			if sc.want.Reason != row.Reason || command.ExitCode(sc.want) != row.Code && !sc.want.DetailedExitCode {
				t.Errorf("row %q: scenario %q is not of that row (its result gives exit %d, reason %q)", key, sc.name, command.ExitCode(sc.want), sc.want.Reason)
			}
		}
	}
	for key := range cases {
		if !seen[key] {
			t.Errorf("a case for %q, which is no row of the exit-code table", key)
		}
	}
	if t.Failed() {
		return
	}

	for _, row := range command.ExitTable {
		c := cases[exitRowKey(row)]
		for _, sc := range c.scenarios {
			t.Run(strings.ReplaceAll(exitRowKey(row)+"/"+sc.name, " ", "_"), func(t *testing.T) {
				t.Parallel()
				for _, fe := range frontEnds {
					if why, skip := sc.skip[fe]; skip {
						t.Logf("%s: not run: %s", fe, why)
						continue
					}
					t.Run(fe.String(), func(t *testing.T) {
						r := newTableRun(t, fe, sc.spec)
						if sc.before != nil {
							sc.before(r)
						}
						got := r.run(sc.command, sc.opt)
						want := command.ExitCode(sc.want)
						if got.code != want {
							t.Errorf("%s %s: exit %d, the exit-code table says %d (reason %q)\n%s", fe, sc.command, got.code, want, sc.want.Reason, got.out)
						}
						wantReason := ""
						if sc.want.Failed {
							wantReason = sc.want.Reason
						}
						if got.reported && got.reason != wantReason {
							t.Errorf("%s %s: failure reason %q, want %q\n%s", fe, sc.command, got.reason, wantReason, got.out)
						}
						if !got.reported && fe.reportsReason(sc.command, sc.opt) {
							t.Errorf("%s %s reported no failure reason\n%s", fe, sc.command, got.out)
						}
					})
				}
			})
		}
	}
}

// exitRowKey names a row of the exit-code table: its reason, or for the
// rows without one, its code.
func exitRowKey(row command.ExitRow) string {
	if row.Reason != "" {
		return row.Reason
	}
	return fmt.Sprintf("exit %d without a reason", row.Code)
}

// exitCase is how the table test covers one row: scenarios run here, or
// the test that runs it elsewhere.
type exitCase struct {
	scenarios []exitScenario
	elsewhere string
}

// exitScenario is one run of a row through every front end, each in a
// namespace of its own.
type exitScenario struct {
	name string
	spec string
	// before readies the world for the measured run (a run before it, an
	// out-of-band edit, a held lock).
	before  func(r *tableRun)
	command string // plan, apply or drift
	opt     runOpt
	// want is the run's result; its exit code is command.ExitCode(want).
	want command.Result
	// skip says why a front end does not run the scenario.
	skip map[frontEnd]string
}

const (
	noDriftCommand    = "khook has no drift command: drift is khook ci's (a khook plan shows it as changes)"
	noDetailedExit    = "khook ci has no --detailed-exitcode mode: its plan reports changes in the changes output and exits 0"
	lockHolder        = "exit-table-test:1:held"
	exitTableSpecName = "exit-table"
)

func exitTableCases() map[string]exitCase {
	const elsewhere = "TestExitCodeTableEveryFrontEnd (test/ci/exitcodes_test.go): it needs no cluster"
	onlyKhook := map[frontEnd]string{ciGitHub: noDetailedExit, ciGitLab: noDetailedExit}
	onlyCI := map[frontEnd]string{khookText: noDriftCommand, khookJSON: noDriftCommand}
	failed := func(reason string) command.Result { return command.Result{Failed: true, Reason: reason} }
	return map[string]exitCase{
		"exit 0 without a reason": {scenarios: []exitScenario{
			{name: "apply", spec: settingsSpec, command: "apply"},
			// Changes pending without --detailed-exitcode: 0.
			{name: "plan with changes", spec: settingsSpec, command: "plan", want: command.Result{Changes: true}},
			{name: "drift, converged", spec: settingsSpec, command: "drift", before: applied, skip: onlyCI},
		}},
		model.ReasonStepFailed: {scenarios: []exitScenario{
			{name: "apply refused by the server", spec: refusedSpec, command: "apply", want: failed(model.ReasonStepFailed)},
			{name: "plan, would fail", spec: refusedSpec, command: "plan", want: failed(model.ReasonStepFailed)},
			{name: "plan --detailed-exitcode, would fail", spec: refusedSpec, command: "plan", opt: runOpt{detailed: true},
				want: command.Result{Failed: true, Reason: model.ReasonStepFailed, DetailedExitCode: true}, skip: onlyKhook},
		}},
		model.ReasonDrift: {scenarios: []exitScenario{
			{name: "drift", spec: settingsSpec, command: "drift", want: failed(model.ReasonDrift), skip: onlyCI,
				before: func(r *tableRun) { applied(r); r.editSettings() }},
		}},
		model.ReasonStateLocked: {scenarios: []exitScenario{
			{name: "apply", spec: settingsSpec, command: "apply", before: (*tableRun).holdLock, want: failed(model.ReasonStateLocked)},
		}},
		model.ReasonClusterUnreachable: {elsewhere: elsewhere, scenarios: []exitScenario{
			{name: "plan --detailed-exitcode, nobody listening", spec: settingsSpec, command: "plan", opt: runOpt{detailed: true, unreachable: true},
				want: command.Result{Failed: true, Reason: model.ReasonClusterUnreachable, DetailedExitCode: true}, skip: onlyKhook},
		}},
		model.ReasonCancelled: {scenarios: []exitScenario{
			// SIGTERM once the run says the waiting step started: every
			// front end is one process (khook ci is a khook command) that
			// turns the first SIGTERM into a cancelled run.
			{name: "apply, SIGTERM", spec: waitSpec, command: "apply", opt: runOpt{cancelAt: regexp.MustCompile(`(step long: running|long started)`)},
				want: failed(model.ReasonCancelled)},
		}},
		model.ReasonPlanChanged: {scenarios: []exitScenario{
			{name: "apply held to a stale plan", spec: settingsSpec, command: "apply", opt: runOpt{saved: true},
				before: func(r *tableRun) { r.savePlan(); r.createSettingsOutOfBand() }, want: failed(model.ReasonPlanChanged)},
		}},
		model.ReasonPlanNotFound: {scenarios: []exitScenario{
			{name: "apply held to no plan", spec: settingsSpec, command: "apply", opt: runOpt{saved: true}, want: failed(model.ReasonPlanNotFound)},
		}},
		model.ReasonValidation: {elsewhere: elsewhere, scenarios: []exitScenario{
			// With --detailed-exitcode, 2 is "changes pending": a spec that
			// does not validate exits 1 there.
			{name: "plan --detailed-exitcode, invalid spec", spec: invalidSpec, command: "plan", opt: runOpt{detailed: true},
				want: command.Result{Failed: true, Reason: model.ReasonValidation, DetailedExitCode: true}, skip: onlyKhook},
		}},
		command.ReasonUsage: {elsewhere: elsewhere, scenarios: []exitScenario{
			// Cobra refuses the stray argument before plan runs; plan
			// refuses --offline with --detailed-exitcode itself.
			{name: "plan --detailed-exitcode, stray argument", spec: settingsSpec, command: "plan", opt: runOpt{detailed: true, extra: []string{"stray"}},
				want: command.Result{Failed: true, Reason: command.ReasonUsage, DetailedExitCode: true}, skip: onlyKhook},
			{name: "plan --detailed-exitcode --offline", spec: settingsSpec, command: "plan", opt: runOpt{detailed: true, extra: []string{"--offline"}},
				want: command.Result{Failed: true, Reason: command.ReasonUsage, DetailedExitCode: true}, skip: onlyKhook},
		}},
		"exit 2 without a reason": {scenarios: []exitScenario{
			{name: "plan --detailed-exitcode with changes", spec: settingsSpec, command: "plan", opt: runOpt{detailed: true},
				want: command.Result{Changes: true, DetailedExitCode: true}, skip: onlyKhook},
		}},
	}
}

// The specs of the table. NS is each run's namespace; the state record
// lives there too, so a held lock is one run's alone.
const (
	settingsSpec = `apiVersion: khook.io/v1
kind: Khook
metadata: {name: ` + exitTableSpecName + `}
state: {namespace: "${NS}"}
steps:
  - name: settings
    apply:
      namespace: ${NS}
      manifests:
        - inline: |
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: settings}
            data: {region: eu-west-1}
`
	// The API server refuses the unknown field (strict field validation):
	// apply fails the step, plan plans it fail.
	refusedSpec = `apiVersion: khook.io/v1
kind: Khook
metadata: {name: ` + exitTableSpecName + `}
steps:
  - name: refused
    apply:
      namespace: ${NS}
      manifests:
        - inline: |
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: refused}
            dataa: {region: eu-west-1}
`
	// "long" waits for a pod that never becomes ready.
	waitSpec = `apiVersion: khook.io/v1
kind: Khook
metadata: {name: ` + exitTableSpecName + `}
steps:
  - name: sleepy
    apply:
      namespace: ${NS}
      manifests:
        - inline: |
            apiVersion: v1
            kind: Pod
            metadata:
              name: sleepy
              annotations: {khook.test/never-ready: "true"}
            spec:
              containers: [{name: main, image: pause}]
  - name: long
    needs: [sleepy]
    timeout: 5m
    wait: {for: condition=Ready, on: pod/sleepy, namespace: "${NS}"}
`
	invalidSpec = `apiVersion: khook.io/v1
kind: Khook
metadata: {name: ` + exitTableSpecName + `}
steps:
  - name: settings
    nosuchtype: {}
`
)

// frontEnd is one way to run khook.
type frontEnd int

const (
	khookText frontEnd = iota
	khookJSON
	ciGitHub
	ciGitLab
)

var frontEnds = []frontEnd{khookText, khookJSON, ciGitHub, ciGitLab}

func (fe frontEnd) String() string {
	return [...]string{"khook", "khook -o json", "khook ci on GitHub", "khook ci on GitLab"}[fe]
}

// reportsReason says whether the front end must report the failure
// reason of the run: khook ci always does; khook -o json with apply's
// results document, also for a run that did not start (a held lock, a plan
// file it cannot read), not for a plan (the plan document has no reason).
// khook's text verdict names the reason of a run that started; the test
// compares it wherever it is printed.
func (fe frontEnd) reportsReason(cmd string, o runOpt) bool {
	switch fe {
	case ciGitHub, ciGitLab:
		return true
	case khookJSON:
		return cmd == "apply"
	}
	return false
}

// runOpt are the options of a measured run.
type runOpt struct {
	detailed bool // plan --detailed-exitcode (khook only)
	// saved: apply is held to the saved plan (khook apply --plan, the
	// plan-file input on GitLab, plan-check after a merge on GitHub); with
	// no plan saved before, there is none.
	saved bool
	// cancelAt: SIGTERM once the run's output matches it.
	cancelAt *regexp.Regexp
	// unreachable: khook's kubeconfig names a server nobody listens at.
	unreachable bool
	// extra are more of khook's arguments.
	extra []string
}

// tableRun is one front end's run of one scenario, in a namespace of its own.
type tableRun struct {
	t   *testing.T
	fe  frontEnd
	ns  string
	dir string // holds khook.yaml: khook's working directory, the GitHub workspace, the GitLab project
	srv *githubtest.Server
	g   *citest.GitHub
	// planSaved: savePlan ran (GitHub: the pull request's plan comment).
	planSaved bool
}

const savedPlan = "saved.khookplan"

func newTableRun(t *testing.T, fe frontEnd, spec string) *tableRun {
	r := &tableRun{t: t, fe: fe, ns: kube.Namespace(t)}
	if fe == ciGitHub {
		r.srv = githubtest.New()
		t.Cleanup(r.srv.Close)
		r.g = citest.NewGitHub(t, r.srv.URL, 7, map[string]string{"file": "khook.yaml", "kubeconfig": kubeconfig(t),
			"github-token": "ghs_exit_t0ken", "diff": "false", "comment": "on-change", "vars": "NS=" + r.ns, "plan-key": "exit-pl4n-k3y"})
		r.g.Set("TMPDIR=" + t.TempDir())
		r.dir = r.g.Workspace
	} else {
		r.dir = t.TempDir()
	}
	if err := os.WriteFile(filepath.Join(r.dir, "khook.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	return r
}

// tableResult is what a front end said.
type tableResult struct {
	code     int
	reason   string
	reported bool // the front end reported a failure reason ("" for success)
	out      string
}

// verdictRe is the closing line of khook's text results: "apply NAME:
// failed (REASON) in ...".
var verdictRe = regexp.MustCompile(`(?m)^(?:apply|destroy) \S+: (ok|failed(?: \(([a-z-]+)\))?) in `)

// run runs command through the front end.
func (r *tableRun) run(cmd string, o runOpt) tableResult {
	r.t.Helper()
	var environ, args []string
	switch r.fe {
	case khookText, khookJSON:
		environ = []string{"HOME=" + r.dir, "KUBECONFIG=" + kube.Kubeconfig, "TMPDIR=" + r.t.TempDir()}
		args = []string{cmd, "-f", "khook.yaml", "--set", "NS=" + r.ns}
		if r.fe == khookJSON {
			args = append(args, "-o", "json")
		}
		if o.detailed {
			args = append(args, "--detailed-exitcode")
		}
		if o.saved {
			args = append(args, "--plan", savedPlan)
		}
		if o.unreachable {
			args = append(args, "--kubeconfig", r.unreachableKubeconfig())
		}
		args = append(args, o.extra...)
	case ciGitHub:
		r.g.ResetFiles()
		r.g.Set("INPUT_COMMAND=" + cmd)
		if o.saved {
			r.pushMerge()
		}
		environ = r.g.Environ
	case ciGitLab:
		environ = r.gitlabEnv(cmd, o.saved)
		os.Remove(filepath.Join(r.dir, ".khook", "khook.env"))
	}
	if (o.detailed || o.unreachable || o.extra != nil) && (r.fe == ciGitHub || r.fe == ciGitLab) {
		r.t.Fatalf("the scenario's options are khook's; %s has none of them", r.fe)
	}
	var res citest.Result
	if o.cancelAt != nil {
		res = runCancelled(r.t, r.dir, environ, o.cancelAt, args...)
	} else {
		res = citest.Run(r.t, r.dir, environ, args...)
	}
	got := tableResult{code: res.Code, out: res.Stdout + res.Stderr}
	switch r.fe {
	case khookText:
		if m := verdictRe.FindStringSubmatch(res.Stdout); m != nil {
			got.reported, got.reason = true, m[2]
		}
	case khookJSON:
		var doc map[string]any
		if json.Unmarshal([]byte(res.Stdout), &doc) == nil && doc["status"] != nil && doc["command"] == cmd {
			got.reported = true
			got.reason, _ = doc["failureReason"].(string)
		}
	case ciGitHub:
		outs, err := gha.ParseKeyValues(r.g.Read(r.t, "output"))
		if err != nil {
			r.t.Fatalf("GITHUB_OUTPUT: %v", err)
		}
		if _, ok := outs["status"]; ok {
			got.reported, got.reason = true, outs["failure-reason"]
		}
		got.out += "\noutputs: " + formatOutputs(outs)
	case ciGitLab:
		data, _ := os.ReadFile(filepath.Join(r.dir, ".khook", "khook.env"))
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok && k == "KHOOK_STATUS" {
				got.reported = true
			} else if ok && k == "KHOOK_FAILURE_REASON" {
				got.reason = v
			}
		}
		got.out += "\nkhook.env:\n" + string(data)
	}
	return got
}

func (r *tableRun) gitlabEnv(cmd string, saved bool) []string {
	env := []string{"GITLAB_CI=true", "CI=true", "HOME=" + r.dir, "TMPDIR=" + r.t.TempDir(), "CI_PROJECT_DIR=" + r.dir,
		"CI_JOB_URL=https://gitlab.example/acme/infra/-/jobs/7", "KHOOK_COMMAND=" + cmd,
		"KHOOK_VARS=NS=" + r.ns, "KHOOK_KUBECONFIG=" + kubeconfig(r.t), "KHOOK_PLAN_KEY=exit-pl4n-k3y"}
	if saved {
		env = append(env, "KHOOK_PLAN_FILE="+savedPlan)
	}
	return env
}

// mustRun runs cmd through the front end and fails the test unless it
// exits 0.
func (r *tableRun) mustRun(cmd string, extra ...string) {
	r.t.Helper()
	var res citest.Result
	switch r.fe {
	case khookText, khookJSON:
		env := []string{"HOME=" + r.dir, "KUBECONFIG=" + kube.Kubeconfig, "TMPDIR=" + r.t.TempDir()}
		res = citest.Run(r.t, r.dir, env, append([]string{cmd, "-f", "khook.yaml", "--set", "NS=" + r.ns}, extra...)...)
	case ciGitHub:
		r.g.ResetFiles()
		r.g.Set("INPUT_COMMAND=" + cmd)
		res = citest.Run(r.t, r.dir, r.g.Environ)
	case ciGitLab:
		res = citest.Run(r.t, r.dir, append(r.gitlabEnv(cmd, false), extra...))
	}
	if res.Code != 0 {
		r.t.Fatalf("%s %s %v: exit %d\n%s%s", r.fe, cmd, extra, res.Code, res.Stdout, res.Stderr)
	}
}

// applied is a converged apply before the measured run.
func applied(r *tableRun) { r.mustRun("apply") }

// savePlan saves the plan the measured apply is held to: khook plan --out,
// GitLab's plan job with the plan-file input, GitHub's plan comment on the
// pull request.
func (r *tableRun) savePlan() {
	r.t.Helper()
	switch r.fe {
	case khookText, khookJSON:
		r.mustRun("plan", "--out", savedPlan)
	case ciGitLab:
		r.mustRun("plan", "KHOOK_PLAN_FILE="+savedPlan)
	case ciGitHub:
		planOnPR(r.t, r.srv, r.g, 7)
	}
	r.planSaved = true
}

// pushMerge makes the GitHub run the push of a merge commit: of pull
// request #7 once savePlan commented its plan there, else of no pull
// request (a direct push).
func (r *tableRun) pushMerge() {
	r.t.Helper()
	sha := "cccc000000000000000000000000000000000007"
	mergeAndPush(r.t, r.srv, r.g, 7, sha)
	if !r.planSaved {
		delete(r.srv.Pulls, sha)
	}
}

// editSettings edits the applied ConfigMap out of band (drift).
func (r *tableRun) editSettings() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cm, err := kube.Client.CoreV1().ConfigMaps(r.ns).Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	cm.Data["region"] = "us-east-1"
	if _, err := kube.Client.CoreV1().ConfigMaps(r.ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		r.t.Fatal(err)
	}
}

// createSettingsOutOfBand creates the ConfigMap the saved plan would
// create, with other data: the world changed since the plan.
func (r *tableRun) createSettingsOutOfBand() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"region": "us-east-1"}}
	if _, err := kube.Client.CoreV1().ConfigMaps(r.ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		r.t.Fatal(err)
	}
}

// unreachableKubeconfig writes a kubeconfig of a cluster nobody listens at.
func (r *tableRun) unreachableKubeconfig() string {
	r.t.Helper()
	p := filepath.Join(r.t.TempDir(), "unreachable.kubeconfig")
	if err := os.WriteFile(p, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: unused}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o644); err != nil {
		r.t.Fatal(err)
	}
	return p
}

// holdLock takes the state record's lock as another run would, until the
// test ends.
func (r *tableRun) holdLock() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := state.Acquire(ctx, kube.Client, state.Ref{Namespace: r.ns, Name: "khook-state-" + exitTableSpecName}, state.LockOptions{Identity: lockHolder})
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { _ = l.Release(context.Background()) })
}

// runCancelled runs khook (khook ci when args is empty) and sends it
// SIGTERM once its output (stdout or stderr) matches at.
func runCancelled(t *testing.T, dir string, environ []string, at *regexp.Regexp, args ...string) citest.Result {
	t.Helper()
	if len(args) == 0 {
		args = []string{"ci"}
	}
	bin := citest.Khook(t) // built before the run's bound starts
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, environ
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	var outBuf, errBuf bytes.Buffer
	scan := func(r io.Reader, into *bytes.Buffer) {
		defer wg.Done()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			into.WriteString(sc.Text() + "\n")
			if at.MatchString(sc.Text()) {
				once.Do(func() { close(started) })
			}
		}
		_, _ = io.Copy(io.Discard, r)
	}
	wg.Add(2)
	go scan(stdout, &outBuf)
	go scan(stderr, &errBuf)
	exited := make(chan struct{})
	go func() { wg.Wait(); close(exited) }()
	select {
	case <-started:
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
	case <-exited:
		// It ended without starting the step: Wait reports how.
	case <-ctx.Done():
	}
	wg.Wait()
	err = cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running khook: %v", err)
	}
	select {
	case <-started:
	default:
		t.Errorf("the run never printed %q, so it was not cancelled", at)
	}
	return citest.Result{Code: code, Stdout: outBuf.String(), Stderr: errBuf.String()}
}
