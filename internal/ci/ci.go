package ci

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner/command"
	"github.com/khook/khook/runner/kube/apischema"
	runplan "github.com/khook/khook/runner/plan"
	"github.com/khook/khook/runner/planfile"
	"github.com/khook/khook/sops"
	"github.com/khook/khook/spec"
)

// Request is what a Backend needs to run one command.
type Request struct {
	Spec *spec.Spec
	// Kubeconfig is a kubeconfig path ("" means KUBECONFIG, then in-cluster);
	// the kubeconfig input's content is written to a private temp file.
	Kubeconfig string
	Context    string
	Diff       bool
	Identifier string
	// Expect, for Apply, is the plan the apply is held to (a plan file, or
	// the plan plan-check accepted): under the state lock it plans again
	// and writes nothing unless the world still matches it.
	Expect *planfile.File
	// PlanKey keys the plan's digests (the plan-key input).
	PlanKey []byte
	// LookupSecrets is the plan's lookup-secrets policy, settled.
	LookupSecrets string
	// Selection picks the steps to run (the target, selector and exclude
	// inputs); nil: every step.
	Selection *model.Selection
	// Reconcile, for Apply, runs every step whatever the state record
	// says (the reconcile input).
	Reconcile bool
	// Emit receives progress events; the backend must call it one at a time.
	Emit func(model.Event)
}

// Backend runs the commands that need the cluster: runner/command's Plan,
// Apply and Destroy (actions), or a test's stand-in. A returned error is a
// run-level failure (cluster unreachable, state locked) whose reason
// command.ReasonOf names.
type Backend interface {
	Plan(ctx context.Context, req Request) (*model.Plan, error)
	Apply(ctx context.Context, req Request) (*model.Results, error)
	Destroy(ctx context.Context, req Request) (*model.Results, error)
}

// Options of one `khook ci` run.
type Options struct {
	// Stdout and Stderr are the process's streams, NOT redacted: Run wraps
	// them itself, and writes ::add-mask:: lines (which must carry the raw
	// secret) to Stdout before anything else.
	Stdout, Stderr io.Writer
	Stdin          io.Reader
	// Environ is the environment, os.Environ() form.
	Environ []string
	// Redactor is the run's one redactor; Run registers the secrets.
	Redactor *redact.Redactor
	// Backend runs plan, apply and destroy; nil is runner/command's.
	Backend Backend
	// Version is khook's version, for the summary footer.
	Version string
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// HTTP talks to the GitHub/GitLab API; nil is a client with a timeout.
	HTTP *http.Client
}

// runState is one run's working data.
type runState struct {
	opts    Options
	getenv  func(string) string
	sink    sink
	in      Inputs
	red     *redact.Redactor
	stdout  *stdout   // the ordered raw stdout
	out     io.Writer // redacted stdout
	errOut  io.Writer // redacted stderr
	workdir string    // resolved working-directory
	rootDir string    // the workspace outputs are relative to

	spec       *spec.Spec
	specFiles  []string // the spec files, absolute (spec.Files is made relative for reports)
	identifier string
	tempFiles  []string
	timeline   *timeline
	// reviewed is the reviewed plan plan-check found, nil when unchecked.
	reviewed *reviewed
	// checked is the plan plan-check compared.
	checked *model.Plan
	// leg is the fleet leg this run is (inputs fleet and cluster), nil for none.
	leg *fleetLeg
}

// outcome is what a command produced, for every sink.
type outcome struct {
	command  string
	plan     *model.Plan
	results  *model.Results
	problems spec.Problems
	runErr   string // a run-level error (input, load, backend)
	status   string // ok | failed
	reason   string // failure-reason
	drift    bool
	files    map[string]string // output name -> path (plan-path, ...)
	comment  string            // comment-url
	// check is apply's plan check; with no results, the apply was refused
	// and planNow is the plan that did not match.
	check   *model.PlanCheck
	planNow *model.Plan
	// unchanged says why changed-only did not plan: no file the spec
	// reads changed on the pull request ("" when it planned).
	unchanged string
}

// exitCode is the process exit code of the outcome: the exit-code table's
// (command.ExitCode), as khook's.
func (oc *outcome) exitCode() int {
	return command.ExitCodeOf(oc.status != model.RunOK, oc.reason)
}

// Run executes `khook ci` and returns the process exit code.
func Run(ctx context.Context, opts Options) int {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Redactor == nil {
		opts.Redactor = redact.New()
	}
	r := &runState{opts: opts, red: opts.Redactor, stdout: newStdout(opts.Stdout), timeline: newTimeline()}
	r.getenv = lookup(opts.Environ)
	r.sink = newSink(DetectPlatform(r.getenv), r)
	defer r.cleanup()
	// The platform's masker learns every secret from here on, before a
	// single other byte goes out: those known now (tokens, KHOOK_SECRET_
	// values, the spec's credentials) and those the run reads later (the
	// data of Secrets in the cluster).
	r.sink.mask()
	r.out = r.red.Writer(r.stdout)
	r.errOut = r.red.Writer(opts.Stderr)

	in, inErr := ReadInputs(r.getenv)
	r.in = in
	r.registerSecrets()
	if r.in.SopsAgeKey != "" {
		// sops's age key source reads its keys from the environment.
		os.Setenv("SOPS_AGE_KEY", r.in.SopsAgeKey)
	}

	var oc *outcome
	if inErr == nil {
		r.resolveDirs()
		inErr = r.useFleet()
		if inErr == nil && in.Command != CmdFleetReport {
			oc = r.load()
		}
	}

	switch {
	case inErr != nil:
		oc = &outcome{command: in.Command, status: model.RunFailed, reason: model.ReasonValidation,
			runErr: r.red.String(inErr.Error())}
		if r.workdir == "" {
			r.resolveDirs()
		}
	case in.Command == CmdFleetReport:
		return r.fleetReport(ctx)
	case oc == nil:
		oc = r.execute(ctx)
	}
	r.finish(ctx, oc)
	return oc.exitCode()
}

// lookup turns an environ slice into a getenv; the last value wins.
func lookup(environ []string) func(string) string {
	m := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return func(k string) string { return m[k] }
}

// registerSecrets tells the redactor about every secret known before the
// spec is loaded: tokens, the kubeconfig's credentials, KHOOK_SECRET_ values.
func (r *runState) registerSecrets() {
	r.red.Add(r.in.GitHubToken)
	r.red.Add(r.in.PlanKey)
	r.red.Add(r.in.SopsAgeKey) // and each line of a key file
	for _, k := range []string{"GITHUB_TOKEN", "GITLAB_TOKEN", "KHOOK_GITLAB_TOKEN", "CI_JOB_TOKEN", "SOPS_AGE_KEY"} {
		r.red.Add(r.getenv(k))
	}
	if r.in.Kubeconfig != "" {
		for _, s := range kubeconfigSecrets([]byte(r.in.Kubeconfig)) {
			r.red.Add(s)
		}
	}
	prefix := r.in.SecretPrefix
	if prefix == "" {
		prefix = "KHOOK_SECRET_"
	}
	for _, kv := range r.opts.Environ {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, prefix) {
			r.red.Add(v)
		}
	}
}

// resolveDirs settles the working directory (relative paths) and the
// workspace root (what output paths are relative to).
func (r *runState) resolveDirs() {
	cwd, err := os.Getwd()
	if err != nil {
		cwd = "."
	}
	r.rootDir = cwd
	for _, k := range []string{"GITHUB_WORKSPACE", "CI_PROJECT_DIR"} {
		if v := r.getenv(k); v != "" {
			r.rootDir = v
			break
		}
	}
	r.workdir = r.rootDir
	if wd := r.in.WorkingDirectory; wd != "" {
		if !filepath.IsAbs(wd) {
			wd = filepath.Join(r.rootDir, wd)
		}
		r.workdir = wd
	}
}

// abs resolves a path the user gave against the working directory.
func (r *runState) abs(p string) string {
	if p == "-" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(r.workdir, p)
}

func (r *runState) absAll(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = r.abs(p)
	}
	return out
}

// load reads the spec; it returns an outcome only when loading failed.
func (r *runState) load() *outcome {
	skip := InputEnvKeys()
	var environ []string
	for _, kv := range r.opts.Environ {
		if k, _, _ := strings.Cut(kv, "="); !skip[k] {
			environ = append(environ, kv)
		}
	}
	files, varFiles := r.absAll(r.in.Files), r.absAll(r.in.VarFiles)
	s, err := spec.Load(spec.LoadOptions{
		Files: files, Stdin: r.opts.Stdin, Set: r.in.Vars, VarFiles: varFiles, Environ: environ,
		VarPrefix: r.in.VarPrefix, SecretPrefix: r.in.SecretPrefix, Redactor: r.red, Decrypt: sops.Open, Policies: r.absAll(r.in.Policies),
		RequireVerifiedCharts: r.in.RequireVerifiedCharts,
	})
	if err == nil {
		r.spec = s
		r.identifier = r.in.Identifier
		if r.identifier == "" {
			r.identifier = s.Metadata.Name
		}
		r.specFiles = append([]string(nil), s.Files...) // before they are made relative
		r.relativizePositions(s)
		return nil
	}
	oc := &outcome{command: r.in.Command, status: model.RunFailed, reason: model.ReasonValidation}
	var ps spec.Problems
	if errors.As(err, &ps) {
		oc.problems = r.problems(ps)
	} else {
		oc.runErr = r.red.String(err.Error())
	}
	r.identifier = r.in.Identifier
	return oc
}

// problems are ps as the report shows them: at workspace-relative paths,
// masked.
func (r *runState) problems(ps spec.Problems) spec.Problems {
	for i := range ps {
		ps[i].Pos.File = r.relPath(ps[i].Pos.File)
		ps[i].Message = r.red.String(ps[i].Message)
		ps[i].Hint = r.red.String(ps[i].Hint)
	}
	return ps
}

// validateManifests is validate's check of the manifests and local charts
// offline, as khook validate does it (runner/plan.CheckAPIs), against the
// default Kubernetes version: schemas and removed API versions.
func (r *runState) validateManifests(ctx context.Context, oc *outcome) *outcome {
	ps, _ := runplan.CheckAPIs(ctx, r.spec, command.OfflineKubeVersion(apischema.KubeVersion{}))
	if len(ps) > 0 {
		oc.status, oc.reason = model.RunFailed, model.ReasonValidation
		oc.problems = r.problems(ps)
	}
	return oc
}

// relPath makes a spec path relative to the workspace, as GitHub wants
// annotation files (the repository-relative path).
func (r *runState) relPath(p string) string {
	if p == "" || !filepath.IsAbs(p) {
		return p
	}
	if rel, err := filepath.Rel(r.rootDir, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return p
}

func (r *runState) relativizePositions(s *spec.Spec) {
	for k, p := range s.Positions {
		p.File = r.relPath(p.File)
		s.Positions[k] = p
	}
	for i, f := range s.Files {
		s.Files[i] = r.relPath(f)
	}
	for i, f := range s.PolicyFiles { // named in outputs only, as the spec is
		s.PolicyFiles[i] = r.relPath(f)
	}
}

// execute runs the command through the backend.
func (r *runState) execute(ctx context.Context) *outcome {
	oc := &outcome{command: r.in.Command, status: model.RunOK}
	if r.in.Command == CmdValidate {
		return r.validateManifests(ctx, oc)
	}
	if why := r.unchangedSpec(); why != "" {
		oc.unchanged = why
		return oc
	}
	if r.opts.Backend == nil {
		r.opts.Backend = actions{red: r.red, now: r.opts.Now, version: r.opts.Version, notify: r.note}
	}
	req := Request{Spec: r.spec, Context: r.in.Context, Diff: r.in.Diff, Identifier: r.identifier, Emit: r.progress(), PlanKey: []byte(r.in.PlanKey), LookupSecrets: r.lookupSecrets(), Selection: r.in.Selection(), Reconcile: r.in.Reconcile}
	if r.in.Kubeconfig != "" {
		path, err := r.writeKubeconfig()
		if err != nil {
			return r.failed(oc, model.ReasonClusterUnreachable, err)
		}
		req.Kubeconfig = path
	}
	defer r.sink.fenceProgress(r.in.Command)()
	switch r.in.Command {
	case CmdPlan, CmdDrift:
		p, err := r.opts.Backend.Plan(ctx, req)
		if err != nil {
			return r.failed(oc, "", err)
		}
		r.settlePlan(p)
		oc.plan = p
		if r.in.PlanFile != "" && r.in.Command == CmdPlan {
			r.savePlanFile(oc, p)
		}
		if r.in.Command == CmdDrift && (p.Changes || p.Drifted()) {
			oc.drift = true
			// Steps with drift: warn report their drift; only the others fail the run.
			if p.DriftFails() {
				oc.status, oc.reason = model.RunFailed, model.ReasonDrift
			}
		}
		// A plan that predicts failure fails the job step, drift or not.
		if err := command.PlanGate(p); err != nil {
			oc.status, oc.reason = model.RunFailed, command.ReasonOf(err, model.ReasonStepFailed)
		}
	case CmdApply, CmdDestroy:
		if refused := r.holdToPlan(ctx, &req, oc); refused != nil {
			return refused
		}
		call := r.opts.Backend.Apply
		if r.in.Command == CmdDestroy {
			call = r.opts.Backend.Destroy
		}
		res, err := call(ctx, req)
		if res == nil && err != nil {
			return r.failed(oc, "", err)
		}
		res.Identifier = r.identifier
		for i := range res.Steps {
			res.Steps[i].Pos.File = r.relPath(res.Steps[i].Pos.File)
		}
		if err != nil && res.Error == "" {
			res.Error = r.red.String(err.Error())
		}
		if err != nil && res.Status == model.RunOK {
			res.Status = model.RunFailed
		}
		if res.Status != model.RunOK && res.FailureReason == "" {
			res.FailureReason = command.ReasonOf(err, model.ReasonStepFailed)
		}
		res.Inputs = model.InputsOf(r.spec)
		res.PlanCheck = oc.checkFor(res)
		oc.results = res
		oc.status, oc.reason = res.Status, res.FailureReason
	}
	return oc
}

func (r *runState) failed(oc *outcome, reason string, err error) *outcome {
	if reason == "" {
		reason = command.ReasonOf(err, model.ReasonStepFailed)
	}
	oc.status, oc.reason, oc.runErr = model.RunFailed, reason, r.red.String(err.Error())
	return oc
}

func (r *runState) cleanup() {
	for _, f := range r.tempFiles {
		os.Remove(f)
	}
}
