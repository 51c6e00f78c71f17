package command

import (
	"fmt"
	"strings"

	"github.com/khook/khook/model"
)

// Exit codes of khook and khook ci alike; ExitTable says which result
// gives which, and ExitCode is the one function that maps a result to one.
const (
	ExitOK         = 0
	ExitFailure    = 1 // a step failed or would fail, the cluster is unreachable, the lock is held, drift, an internal error
	ExitValidation = 2 // bad spec, missing variables, cycle, bad flags or inputs
	ExitChanges    = 2 // plan --detailed-exitcode only: changes pending
)

// ReasonUsage is the failure reason of a command line that does not parse
// (unknown command or flag, bad flag value, stray arguments): exit 2, as a
// spec that does not validate.
const ReasonUsage = "usage"

// ExitRow is one row of the exit-code table.
type ExitRow struct {
	Code   int
	Reason string // model.Reason*, ReasonUsage; "" for success and for changes pending
	When   string
}

// ExitTable is the exit-code table of khook and khook ci: khook --help,
// docs/cli.md, docs/ci.md and action.yml print it (TestExitTableDocumented).
// Without --detailed-exitcode the code follows from the failure reason
// alone, so 2 always means "nothing ran: fix the spec, the flags or the
// inputs"; with plan --detailed-exitcode, 2 means changes pending and every
// failure, validation included, exits 1 (Terraform's -detailed-exitcode).
var ExitTable = []ExitRow{
	{ExitOK, "", "success: every step succeeded or was skipped; a plan or drift in which nothing would fail"},
	{ExitFailure, model.ReasonStepFailed, "a step failed (apply, destroy) or would fail (plan, drift: it plans fail)"},
	{ExitFailure, model.ReasonDrift, "drift found in a step without drift: warn (drift)"},
	{ExitFailure, model.ReasonStateLocked, "another run holds the state record's lock"},
	{ExitFailure, model.ReasonClusterUnreachable, "the cluster cannot be reached"},
	{ExitFailure, model.ReasonCancelled, "the run was cancelled (Ctrl-C, SIGTERM, the job's timeout)"},
	{ExitFailure, model.ReasonPlanChanged, "apply --plan: the world changed since the saved plan"},
	{ExitFailure, model.ReasonPlanNotFound, "apply --plan: no saved plan (khook ci's plan check)"},
	{ExitValidation, model.ReasonValidation, "a spec that does not validate (bad field, missing variable, cycle, unreadable file), a selection naming no step, bad khook ci inputs; nothing ran"},
	{ExitValidation, ReasonUsage, "bad usage: unknown command or flag, bad flag value, stray arguments; nothing ran"},
	{ExitChanges, "", "plan --detailed-exitcode only: changes pending and nothing would fail (with that flag every failure exits 1)"},
}

// Result is what decides a run's exit code.
type Result struct {
	// Failed: the run failed, or its plan predicts a failure.
	Failed bool
	// Reason is the failure reason (model.Reason*, ReasonUsage); a failure
	// without one, or with one the table does not name, exits 1.
	Reason string
	// Changes: the plan has changes pending; it counts only with
	// DetailedExitCode (plan --detailed-exitcode).
	Changes, DetailedExitCode bool
}

// ExitCode maps a run's result to the process exit code (ExitTable).
func ExitCode(r Result) int {
	switch {
	case !r.Failed && r.DetailedExitCode && r.Changes:
		return ExitChanges
	case !r.Failed:
		return ExitOK
	case r.DetailedExitCode:
		return ExitFailure // 2 is "changes pending" there
	}
	for _, row := range ExitTable {
		if row.Reason != "" && row.Reason == r.Reason {
			return row.Code
		}
	}
	return ExitFailure
}

// ExitCodeOf is the exit code of a run that failed with reason ("" when it
// succeeded).
func ExitCodeOf(failed bool, reason string) int {
	return ExitCode(Result{Failed: failed, Reason: reason})
}

// ExitTableText is the table as plain text, one row a line, as khook
// --help and the docs print it.
func ExitTableText() string {
	var b strings.Builder
	for _, row := range ExitTable {
		reason := row.Reason
		if reason == "" {
			reason = "-"
		}
		fmt.Fprintf(&b, "  %d  %-19s  %s\n", row.Code, reason, row.When)
	}
	return b.String()
}

// ExitTableMarkdown is the table as docs/cli.md and docs/ci.md hold it.
func ExitTableMarkdown() string {
	var b strings.Builder
	b.WriteString("| exit | failure reason | when |\n|---|---|---|\n")
	for _, row := range ExitTable {
		reason := "—"
		if row.Reason != "" {
			reason = "`" + row.Reason + "`"
		}
		fmt.Fprintf(&b, "| %d | %s | %s |\n", row.Code, reason, row.When)
	}
	return b.String()
}

// ExitByReason is the table by failure reason as action.yml's
// failure-reason output states it ("exit 1: step-failed, drift, ...; exit
// 2: validation"); usage is khook's alone (khook ci's bad inputs are a
// validation failure).
func ExitByReason() string {
	var order []int
	byCode := map[int][]string{}
	for _, row := range ExitTable {
		if row.Reason == "" || row.Reason == ReasonUsage {
			continue
		}
		if byCode[row.Code] == nil {
			order = append(order, row.Code)
		}
		byCode[row.Code] = append(byCode[row.Code], row.Reason)
	}
	parts := make([]string, len(order))
	for i, code := range order {
		parts[i] = fmt.Sprintf("exit %d: %s", code, strings.Join(byCode[code], ", "))
	}
	return strings.Join(parts, "; ")
}
