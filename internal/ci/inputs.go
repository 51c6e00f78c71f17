// Package ci is `khook ci`: khook as a CI step. It reads its inputs from the
// environment (GitHub's INPUT_* or KHOOK_*), detects the platform, runs a
// command through a Backend, and writes what the platform reads: GitHub's
// outputs, job summary, annotations and sticky PR comment; GitLab's log
// sections, JUnit, dotenv and Terraform reports and MR note. Every byte it
// writes passes through the one redactor.
//
// May import: runner/command and what it returns (runner/plan,
// runner/planfile, runner/kube for checks without a cluster), model, report
// (its renderers), internal/fleet, spec, redact and the platform packages
// under it; never internal/cli.
package ci

import (
	"fmt"
	"strings"

	"github.com/khook/khook/model"
	runplan "github.com/khook/khook/runner/plan"
)

// Commands khook ci runs.
const (
	CmdPlan     = "plan"
	CmdApply    = "apply"
	CmdDestroy  = "destroy"
	CmdValidate = "validate"
	CmdDrift    = "drift"
	// CmdFleetReport reads a fleet's leg results into one report and
	// comment (fleet.go).
	CmdFleetReport = "fleet-report"
)

// Comment policies.
const (
	CommentAlways   = "always"
	CommentOnChange = "on-change"
	CommentNever    = "never"
)

// Inputs are the action's inputs (ci-runner.md's table is the contract).
type Inputs struct {
	Command          string
	Files            []string
	Vars             []string // NAME=value
	VarFiles         []string
	Kubeconfig       string // content, not a path
	Context          string
	Diff             bool
	Comment          string
	Identifier       string // "" means the spec's name
	GitHubToken      string
	WorkingDirectory string
	// Beyond the contract's table:
	OutputDir       string // where plan/results files and GitLab reports go
	TerraformReport bool   // GitLab: write the MR widget report
	VarPrefix       string
	SecretPrefix    string
	// PlanCheck is how apply checks its plan against the one reviewed on
	// the pull request: strict, warn, off; "" is strict for an apply on a
	// GitHub push (after a merge), off otherwise (planCheckMode).
	PlanCheck string
	// PlanFile is a saved plan: command plan writes it, command apply
	// applies exactly it (khook plan --out, khook apply --plan).
	PlanFile string
	// PlanKey keys the plan's digests (secret; KHOOK_PLAN_KEY): plan and
	// apply must share it for their fingerprints to compare.
	PlanKey string
	// Fleet and Cluster run one leg of a fleet (fleet.go); Results and
	// Wave are command fleet-report's.
	Fleet   string
	Cluster string
	Results []string
	Wave    int
	// LookupSecrets is what a chart's lookup of a Secret gets in a plan:
	// mask, deny, allow; "" is deny for a pull request from a fork, mask
	// otherwise (lookupSecrets).
	LookupSecrets string
	// RequireVerifiedCharts refuses, at validation, every helm step with a
	// remote chart and no verify: (--require-verified-charts).
	RequireVerifiedCharts bool
	// DriftIssue keeps one issue per identifier for command drift (and a
	// fleet report of a drift), with DriftIssueLabels (drift_issue.go).
	DriftIssue       bool
	DriftIssueLabels []string
	// Target, Selector and Exclude pick the steps of a partial run, as the
	// CLI's --target, --selector and --exclude.
	Target   []string
	Selector string
	Exclude  []string
	// ChangedOnly: a plan on a pull request whose base and head differ in
	// no file the spec reads finishes without contacting the cluster
	// (changed.go).
	ChangedOnly bool
	// SopsAgeKey is an age identity for sops-encrypted files (secret):
	// given to the sops key sources as SOPS_AGE_KEY.
	SopsAgeKey string
	// Reconcile: command apply runs every step whatever the state record
	// says (khook apply --reconcile).
	Reconcile bool
	// Policies are policy files (khook --policy), one per line, read from
	// the working tree: keep them where the pull request cannot change
	// them (docs/policies.md).
	Policies []string
}

// Selection is the inputs' step selection; nil when they ask for none.
func (in Inputs) Selection() *model.Selection {
	sel := &model.Selection{Targets: in.Target, Selector: in.Selector, Exclude: in.Exclude}
	if !sel.Requested() {
		return nil
	}
	return sel
}

// input describes one input: its name (GitHub's spelling) and default.
type input struct {
	name string
	def  string
}

// inputNames lists every input in the order action.yml declares them.
var inputNames = []input{
	{"command", CmdPlan},
	{"file", "khook.yaml"},
	{"vars", ""},
	{"var-file", ""},
	{"kubeconfig", ""},
	{"context", ""},
	{"diff", "true"},
	{"comment", CommentOnChange},
	{"identifier", ""},
	{"github-token", ""},
	{"working-directory", ""},
	{"output-dir", ".khook"},
	{"terraform-report", "false"},
	{"var-prefix", "KHOOK_VAR_"},
	{"secret-prefix", "KHOOK_SECRET_"},
	{"plan-check", ""},
	{"plan-file", ""},
	{"plan-key", ""},
	{"fleet", ""},
	{"cluster", ""},
	{"results", ""},
	{"wave", ""},
	{"lookup-secrets", ""},
	{"require-verified-charts", "false"},
	{"drift-issue", "false"},
	{"drift-issue-labels", "drift"},
	{"target", ""},
	{"selector", ""},
	{"exclude", ""},
	{"changed-only", "false"},
	{"sops-age-key", ""},
	{"reconcile", "false"},
	{"policies", ""},
}

// InputNames returns every input name, for action.yml's test.
func InputNames() []string {
	out := make([]string, len(inputNames))
	for i, in := range inputNames {
		out[i] = in.name
	}
	return out
}

// envKeys are the variables an input can come from, in order: GitHub's
// INPUT_ + upper case with hyphens kept (what the runner sets), the same
// with underscores, then KHOOK_ + upper snake case (GitLab, anything else).
func envKeys(name string) []string {
	up := strings.ToUpper(name)
	snake := strings.ReplaceAll(up, "-", "_")
	return []string{"INPUT_" + up, "INPUT_" + snake, "KHOOK_" + snake}
}

// InputEnvKeys lists every environment variable that carries an input; the
// spec loader must not mistake KHOOK_VAR_FILE for a variable named FILE.
func InputEnvKeys() map[string]bool {
	m := map[string]bool{}
	for _, in := range inputNames {
		for _, k := range envKeys(in.name) {
			m[k] = true
		}
	}
	return m
}

// ReadInputs reads the inputs from an environment lookup. An empty value
// counts as unset (the runner sets INPUT_X="" for inputs not given).
func ReadInputs(getenv func(string) string) (Inputs, error) {
	raw := map[string]string{}
	for _, in := range inputNames {
		raw[in.name] = in.def
		for _, k := range envKeys(in.name) {
			if v := getenv(k); strings.TrimSpace(v) != "" {
				raw[in.name] = v
				break
			}
		}
	}
	var errs []string
	in := Inputs{
		Command:          strings.ToLower(strings.TrimSpace(raw["command"])),
		Files:            lines(raw["file"]),
		Vars:             lines(raw["vars"]),
		VarFiles:         lines(raw["var-file"]),
		Kubeconfig:       raw["kubeconfig"],
		Context:          strings.TrimSpace(raw["context"]),
		Comment:          strings.ToLower(strings.TrimSpace(raw["comment"])),
		Identifier:       strings.TrimSpace(raw["identifier"]),
		GitHubToken:      strings.TrimSpace(raw["github-token"]),
		WorkingDirectory: strings.TrimSpace(raw["working-directory"]),
		OutputDir:        strings.TrimSpace(raw["output-dir"]),
		VarPrefix:        strings.TrimSpace(raw["var-prefix"]),
		SecretPrefix:     strings.TrimSpace(raw["secret-prefix"]),
		PlanCheck:        strings.ToLower(strings.TrimSpace(raw["plan-check"])),
		PlanFile:         strings.TrimSpace(raw["plan-file"]),
		PlanKey:          strings.TrimSpace(raw["plan-key"]),
		Fleet:            strings.TrimSpace(raw["fleet"]),
		Cluster:          strings.TrimSpace(raw["cluster"]),
		Results:          lines(raw["results"]),
		LookupSecrets:    strings.ToLower(strings.TrimSpace(raw["lookup-secrets"])),
		Target:           lines(raw["target"]),
		Selector:         strings.TrimSpace(raw["selector"]),
		Exclude:          lines(raw["exclude"]),
		SopsAgeKey:       strings.TrimSpace(raw["sops-age-key"]),
		Policies:         lines(raw["policies"]),
	}
	if err := runplan.CheckLookupSecrets(in.LookupSecrets); err != nil {
		errs = append(errs, "input "+err.Error())
	}
	errs = append(errs, readFleetInputs(&in, raw)...)
	switch in.Command {
	case CmdPlan, CmdApply, CmdDestroy, CmdValidate, CmdDrift, CmdFleetReport:
	default:
		errs = append(errs, fmt.Sprintf("input command %q is not a command: use plan, apply, destroy, validate, drift or fleet-report", in.Command))
	}
	switch in.Comment {
	case CommentAlways, CommentOnChange, CommentNever:
	default:
		errs = append(errs, fmt.Sprintf("input comment %q is not a policy: use always, on-change or never", in.Comment))
	}
	switch in.PlanCheck {
	case "", model.PlanCheckStrict, model.PlanCheckWarn, model.PlanCheckOff:
	default:
		errs = append(errs, fmt.Sprintf("input plan-check %q is not a mode: use strict, warn or off (empty: strict for an apply on a push, off otherwise)", in.PlanCheck))
	}
	var err error
	if in.Diff, err = parseBool("diff", raw["diff"]); err != nil {
		errs = append(errs, err.Error())
	}
	if in.TerraformReport, err = parseBool("terraform-report", raw["terraform-report"]); err != nil {
		errs = append(errs, err.Error())
	}
	if in.DriftIssue, err = parseBool("drift-issue", raw["drift-issue"]); err != nil {
		errs = append(errs, err.Error())
	}
	if in.Reconcile, err = parseBool("reconcile", raw["reconcile"]); err != nil {
		errs = append(errs, err.Error())
	}
	if in.RequireVerifiedCharts, err = parseBool("require-verified-charts", raw["require-verified-charts"]); err != nil {
		errs = append(errs, err.Error())
	}
	if in.ChangedOnly, err = parseBool("changed-only", raw["changed-only"]); err != nil {
		errs = append(errs, err.Error())
	}
	in.DriftIssueLabels = lines(strings.ReplaceAll(raw["drift-issue-labels"], ",", "\n"))
	if len(in.Files) == 0 {
		errs = append(errs, "input file is empty: name the spec file (several lines for base + overlays)")
	}
	for _, kv := range in.Vars {
		if name, _, ok := strings.Cut(kv, "="); !ok || strings.TrimSpace(name) == "" {
			errs = append(errs, fmt.Sprintf("input vars: line %q is not NAME=value", kv))
		}
	}
	if in.VarPrefix == in.SecretPrefix {
		errs = append(errs, fmt.Sprintf("inputs var-prefix and secret-prefix must differ (both are %q)", in.VarPrefix))
	}
	if len(errs) > 0 {
		return in, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return in, nil
}

// lines splits a multi-line input into its non-empty, trimmed lines.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// parseBool accepts YAML 1.2's core booleans, as GitHub's own inputs do.
func parseBool(name, v string) (bool, error) {
	switch strings.TrimSpace(v) {
	case "true", "True", "TRUE":
		return true, nil
	case "false", "False", "FALSE":
		return false, nil
	}
	return false, fmt.Errorf("input %s %q is not a boolean: use true or false", name, v)
}
