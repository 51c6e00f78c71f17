package ci

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/khook/khook/model"
	"github.com/khook/khook/report"
	"github.com/khook/khook/runner/command"
	"github.com/khook/khook/words"
)

// countedActions are the to-<action> outputs, always present.
var countedActions = []model.Action{
	model.ActionInstall, model.ActionUpgrade, model.ActionCreate, model.ActionConfigure,
	model.ActionDelete, model.ActionRun, model.ActionRestart, model.ActionWait, model.ActionUnknown,
}

// Output names (the contract's list, in a stable order).
const (
	OutStatus        = "status"
	OutChanges       = "changes"
	OutDrift         = "drift"
	OutFailedSteps   = "failed-steps"
	OutFailureReason = "failure-reason"
	OutPlanPath      = "plan-path"
	OutPlanJSONPath  = "plan-json-path"
	OutResultsJSON   = "results-json-path"
	OutCommentURL    = "comment-url"
	OutPartial       = "partial"
	OutSelectedSteps = "selected-steps"
	// OutPlanned is false when changed-only found no file of the spec
	// changed and the cluster was not contacted.
	OutPlanned = "planned"
)

// OutputNames lists every output, for action.yml's test.
func OutputNames() []string {
	names := []string{OutStatus, OutChanges, OutDrift}
	for _, a := range countedActions {
		names = append(names, "to-"+string(a))
	}
	return append(names, OutFailedSteps, OutFailureReason, OutPlanPath, OutPlanJSONPath, OutResultsJSON, OutCommentURL, OutPartial, OutSelectedSteps, OutPlanned)
}

// outputs computes every output's value.
func (oc *outcome) outputs() []kv {
	changes := false
	counts := map[model.Action]int{}
	var failed []string
	var sel *model.Selection
	if oc.plan != nil {
		changes, sel = oc.plan.Changes, oc.plan.Selection
		for _, s := range oc.plan.Steps {
			counts[s.Action]++
		}
		for _, s := range oc.plan.Failing() {
			failed = append(failed, s.Name)
		}
	}
	if oc.results != nil {
		changes, sel = oc.results.Changed(), oc.results.Selection
		for _, s := range oc.results.Steps {
			if s.Status == model.StatusFailed {
				failed = append(failed, s.Name)
			}
		}
	}
	out := []kv{
		{OutStatus, oc.status},
		{OutChanges, fmt.Sprint(changes)},
		{OutDrift, fmt.Sprint(oc.drift)},
	}
	for _, a := range countedActions {
		out = append(out, kv{"to-" + string(a), fmt.Sprint(counts[a])})
	}
	return append(out,
		kv{OutFailedSteps, strings.Join(failed, ",")},
		kv{OutFailureReason, oc.reason},
		kv{OutPlanPath, oc.files[OutPlanPath]},
		kv{OutPlanJSONPath, oc.files[OutPlanJSONPath]},
		kv{OutResultsJSON, oc.files[OutResultsJSON]},
		kv{OutCommentURL, oc.comment},
		kv{OutPartial, fmt.Sprint(sel.IsPartial())},
		kv{OutSelectedSteps, selectedSteps(sel)},
		kv{OutPlanned, fmt.Sprint(oc.plan != nil || oc.results != nil)},
	)
}

type kv struct{ Key, Value string }

// selectedSteps is a partial run's steps, comma-separated ("" for a full run).
func selectedSteps(sel *model.Selection) string {
	if !sel.IsPartial() {
		return ""
	}
	return strings.Join(sel.Steps, ",")
}

// refused reports whether plan-check refused the apply (nothing ran).
func (oc *outcome) refused() bool { return oc.check != nil && oc.results == nil }

// finish writes everything the run produced: the log, files, annotations,
// comment, summary, reports and outputs.
func (r *runState) finish(ctx context.Context, oc *outcome) {
	r.printReport(oc)
	r.writeFiles(oc)
	r.writeLeg(oc)
	r.sink.publish(ctx, oc)
	if line := verdictLine(oc); line != "" {
		r.say("%s", line)
	}
}

// say prints one line of khook's own.
func (r *runState) say(format string, args ...any) {
	fmt.Fprintf(r.out, format+"\n", args...)
}

// warn reports a problem that does not fail the step, as the platform shows it.
func (r *runState) warn(msg string) { r.sink.warn(msg) }

// driftRepair names the command that repairs drift, in the drift run's
// log, comment and issue.
var driftRepair = "repair it with " + command.RepairCommand

func verdictLine(oc *outcome) string {
	switch {
	case oc.reason == model.ReasonValidation:
		return fmt.Sprintf("khook %s: failed (validation)", oc.command)
	case oc.refused():
		return fmt.Sprintf("khook apply: refused (%s): nothing was applied", oc.reason)
	case oc.unchanged != "":
		return fmt.Sprintf("khook %s: not planned: %s", oc.command, oc.unchanged)
	case oc.drift:
		return fmt.Sprintf("khook %s: %s (plan fingerprint %s); %s", oc.command, model.PlanVerdict(oc.plan, true).Text, model.ShortFingerprint(oc.plan.Fingerprint), driftRepair)
	case oc.plan != nil && oc.plan.Fingerprint != "":
		return fmt.Sprintf("khook %s: %s (plan fingerprint %s)", oc.command, model.PlanVerdict(oc.plan, oc.command == CmdDrift).Text, model.ShortFingerprint(oc.plan.Fingerprint))
	case oc.plan != nil:
		return "khook " + oc.command + ": " + model.PlanVerdict(oc.plan, oc.command == CmdDrift).Text
	case oc.results != nil:
		return "" // the results table ends with it
	case oc.status == model.RunOK:
		return fmt.Sprintf("khook %s: ok", oc.command)
	}
	return fmt.Sprintf("khook %s: failed (%s)", oc.command, oc.reason)
}

// printReport prints the human report on stdout: problems, the plan or
// the results table. Text that quotes the cluster (diffs, errors, pod
// logs) is fenced from GitHub's command processing.
func (r *runState) printReport(oc *outcome) {
	var b bytes.Buffer
	switch {
	case oc.refused():
		fmt.Fprintf(&b, "Error: %s\n", oc.runErr)
		if oc.planNow != nil {
			b.WriteString("\nThe plan now:\n")
			_ = report.WritePlanText(&b, oc.planNow)
		}
	case oc.runErr != "":
		fmt.Fprintf(&b, "Error: %s\n", oc.runErr)
	case len(oc.problems) > 0:
		sorted := append(oc.problems[:0:0], oc.problems...)
		sorted.Sort()
		for _, p := range sorted {
			b.WriteString(p.String() + "\n")
		}
		fmt.Fprintf(&b, "spec is invalid: %d %s\n", len(sorted), words.Plural(len(sorted), "problem", "problems"))
	case oc.plan != nil:
		_ = report.WritePlanText(&b, oc.plan)
	case oc.results != nil:
		_ = report.WriteResultsTable(&b, oc.results)
	case oc.command == CmdValidate && r.spec != nil:
		fmt.Fprintf(&b, "spec %s is valid: %d steps\n", r.spec.Metadata.Name, len(r.spec.Steps))
	}
	r.sink.print(r.red.String(b.String()))
}

// outputDir is where files go, created on first use.
func (r *runState) outputDir() (string, error) {
	dir := r.in.OutputDir
	if dir == "" {
		dir = ".khook"
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(r.rootDir, dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("cannot create the output directory %s: %w", dir, err)
	}
	return dir, nil
}

// writeFile writes one output file through the redactor and returns the
// path as later steps see it (relative to the workspace when inside it).
func (r *runState) writeFile(name string, render func(io.Writer) error) (string, error) {
	dir, err := r.outputDir()
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := render(&b); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(r.red.String(b.String())), 0o644); err != nil {
		return "", fmt.Errorf("cannot write %s: %w", path, err)
	}
	return r.relPath(path), nil
}

// writeFiles writes the plan (Markdown and JSON) or the results (JSON).
func (r *runState) writeFiles(oc *outcome) {
	oc.files = map[string]string{}
	put := func(out, name string, render func(io.Writer) error) {
		p, err := r.writeFile(name, render)
		if err != nil {
			r.warn(err.Error())
			return
		}
		oc.files[out] = p
	}
	// A refused apply leaves the plan it would have applied for review.
	if p := oc.plan; p != nil || oc.planNow != nil {
		cmd := oc.command
		if p == nil {
			p, cmd = oc.planNow, CmdPlan
		}
		put(OutPlanPath, "plan.md", func(w io.Writer) error {
			return report.WritePlanMarkdown(w, p, report.MarkdownOptions{Command: cmd})
		})
		put(OutPlanJSONPath, "plan.json", func(w io.Writer) error { return report.WriteJSON(w, p) })
	}
	if oc.results != nil {
		put(OutResultsJSON, "results.json", func(w io.Writer) error { return report.WriteJSON(w, oc.results) })
	}
}
