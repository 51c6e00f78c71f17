// Package plan is `khook plan`: predict what apply would do, offline from
// the spec alone or (live) against the cluster.
//
// May import: internal/cli/cmdutil and anything below the CLI (runner/...,
// model, report, spec, redact); another command's package only to run it
// (plan runs fleet's).
package plan

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/model"
	"github.com/khook/khook/report"
	"github.com/khook/khook/runner/command"
	"github.com/khook/khook/runner/kube"
	runplan "github.com/khook/khook/runner/plan"
	"github.com/khook/khook/runner/planfile"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/words"
)

// Options of the plan command.
type Options struct {
	F                *cmdutil.Factory
	Spec             cmdutil.SpecFlags
	Output           string
	Offline          bool
	Diff             bool
	DetailedExitCode bool
	KubeVersion      string // --kube-version: what --offline checks API versions against
	// Out is where to save the plan for apply --plan ("": not saved).
	Out string
	// Fleet runs one cluster of a fleet (--fleet, --cluster), or every
	// selected cluster (fleet.go).
	Fleet cmdutil.FleetFlags
	// LookupSecrets is --lookup-secrets (runner/plan's policies).
	LookupSecrets string
	// WarningsAsErrors is --warnings-as-errors.
	WarningsAsErrors bool
	// Select picks the steps to plan (--target ...); its Selector is
	// --selector unless the plan is fleet-wide (selection below).
	Select cmdutil.SelectFlags

	// Clients, when set, replace the kubeconfig's (tests).
	Clients *kube.Clients
}

// NewCmd builds `khook plan`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Predict what apply would do, per step",
		Long: `Predict, per step, what apply would do: the DAG order, each step's type and
what it does, which steps when: excludes, and (against a cluster) the action
and objects it would touch. --offline needs no cluster and assesses no
actions. A plan in which any step would fail exits 1 (saved with --out all
the same, marked). --detailed-exitcode: 0 no changes, 2 changes pending,
1 error or a step that would fail.
--out FILE saves the plan (digests of the spec, inputs, cluster and every
object, and its fingerprint) for khook show and khook apply --plan; set
KHOOK_PLAN_KEY to key its digests (docs/cli.md).`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			err := checkFlags(opts)
			if err == nil {
				err = Run(cmd.Context(), opts)
			}
			if opts.DetailedExitCode {
				err = errorsExitOne(err) // a flag it refuses too: 2 would read as changes pending
			}
			return err
		},
	}
	cmdutil.AddSpecFlags(cmd.Flags(), &opts.Spec)
	cmdutil.AddPolicyFlag(cmd.Flags(), &opts.Spec)
	cmdutil.AddRequireVerifiedFlag(cmd.Flags(), &opts.Spec)
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	cmd.Flags().BoolVar(&opts.Offline, "offline", false, "plan from the spec alone, without a cluster")
	cmdutil.AddKubeVersionFlag(cmd.Flags(), &opts.KubeVersion)
	cmd.Flags().BoolVar(&opts.Diff, "diff", false, "add unified diffs from server-side dry-runs and rendered charts")
	cmd.Flags().StringVar(&opts.Out, "out", "", "save the plan to `FILE` for khook show and khook apply --plan")
	cmd.Flags().BoolVar(&opts.WarningsAsErrors, "warnings-as-errors", false, "plan a step as fail when the API server warns about any of its dry runs (deprecated API versions, node labels ...), like kubectl's flag")
	cmd.Flags().StringVar(&opts.LookupSecrets, "lookup-secrets", runplan.LookupMask, "what a chart's lookup of a Secret gets: mask (its values, masked in every output), deny (nothing, as in a client-side render; for plans of untrusted code) or allow (its values, unmasked)")
	cmd.Flags().BoolVar(&opts.DetailedExitCode, DetailedExitCodeFlag, false, "exit 0 with no changes, 2 with changes pending, 1 on error or a step that would fail")
	cmdutil.AddFleetFlags(cmd.Flags(), &opts.Fleet, true)
	cmdutil.AddSelectFlagsNoSelector(cmd.Flags(), &opts.Select, "what it needs")
	return cmd
}

// DetailedExitCodeFlag is the flag with which 2 means changes pending
// (command.ExitTable) and every failure exits 1, a command line that does
// not parse too (cli.Run).
const DetailedExitCodeFlag = "detailed-exitcode"

// checkFlags refuses flags that do not go together.
func checkFlags(opts *Options) error {
	if err := cmdutil.CheckOutput(opts.Output, cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
		return err
	}
	if opts.Offline && opts.Diff {
		return cmdutil.FlagErrorf("--diff needs the cluster: it cannot be combined with --offline")
	}
	if opts.Offline && opts.Out != "" {
		return cmdutil.FlagErrorf("--out saves a plan to apply later, which needs the cluster's state: drop --offline")
	}
	if err := runplan.CheckLookupSecrets(opts.LookupSecrets); err != nil {
		return cmdutil.FlagErrorf("--%v", err)
	}
	if opts.Offline && opts.DetailedExitCode {
		return cmdutil.FlagErrorf("--detailed-exitcode needs the cluster to tell whether anything would change: drop --offline")
	}
	return nil
}

// errorsExitOne keeps --detailed-exitcode's 2 for "changes pending" only:
// any failure, validation included, exits as the exit-code table says for
// that flag (1).
func errorsExitOne(err error) error {
	var ee *cmdutil.ExitError
	if err == nil || (errors.As(err, &ee) && ee.Err == nil && ee.Code == command.ExitCode(command.Result{Changes: true, DetailedExitCode: true})) {
		return err
	}
	code := command.ExitCode(command.Result{Failed: true, DetailedExitCode: true})
	if ee != nil {
		return &cmdutil.ExitError{Code: code, Err: ee.Err, Reported: ee.Reported}
	}
	return &cmdutil.ExitError{Code: code, Err: err}
}

// Run loads the spec, plans and prints the plan.
func Run(ctx context.Context, opts *Options) error {
	if opts.Fleet.Fleet != "" || opts.Fleet.Cluster != "" {
		done, cleanup, err := useFleet(ctx, opts)
		defer cleanup()
		if done || err != nil {
			return err
		}
	}
	s, err := opts.F.LoadSpec(&opts.Spec)
	if err != nil {
		return err
	}
	kv, err := cmdutil.KubeVersion(opts.KubeVersion)
	if err != nil {
		return err
	}
	cfg := opts.F.ActionConfig(opts.Clients)
	cfg.LookupSecrets = opts.LookupSecrets
	cfg.WarningsAsErrors = opts.WarningsAsErrors
	p, err := (&command.PlanCommand{Config: cfg, Offline: opts.Offline, Diff: opts.Diff, KubeVersion: kv, Selection: opts.selection()}).Run(ctx, s)
	var problems spec.Problems
	if errors.As(err, &problems) {
		return opts.F.ReportProblems(problems) // --offline: manifests the target version refuses
	}
	if err != nil {
		return planError(err)
	}
	if opts.Out != "" {
		p.Inputs = model.InputsOf(s)
		if len(opts.F.Redactor.Values()) > 0 && !p.Digests.Keyed {
			fmt.Fprintf(opts.F.IOStreams.ErrOut, "warning: %s is not set: the plan's digests are unkeyed, so they leave secret values out and apply --plan cannot tell a changed secret; set it (the same for plan and apply) to cover them\n", planfile.KeyEnv)
		}
		if err := opts.F.WritePlanFile(opts.Out, p); err != nil {
			return err
		}
		if n := len(p.Failing()); n > 0 {
			fmt.Fprintf(opts.F.IOStreams.ErrOut, "Saved the plan to %s (fingerprint %s), marked as failed: %d %s would fail, so khook apply --plan refuses it.\n",
				opts.Out, model.ShortFingerprint(p.Fingerprint), n, words.Plural(n, "step", "steps"))
		} else {
			fmt.Fprintf(opts.F.IOStreams.ErrOut, "Saved the plan to %s (fingerprint %s): khook apply --plan %s applies it if nothing changed.\n",
				opts.Out, model.ShortFingerprint(p.Fingerprint), opts.Out)
		}
	}
	out := opts.F.IOStreams.Out
	if opts.Output == cmdutil.OutputJSON {
		err = report.WriteJSON(out, p)
	} else {
		err = report.WritePlanText(out, p)
	}
	if err != nil {
		return err
	}
	if err := command.PlanGate(p); err != nil {
		return cmdutil.Failed(command.ReasonOf(err, model.ReasonStepFailed), err) // printed and saved, and failed
	}
	if code := command.ExitCode(command.Result{Changes: p.Changes, DetailedExitCode: opts.DetailedExitCode}); code != command.ExitOK {
		return cmdutil.Silent(code)
	}
	return nil
}

// selection is the step selection: --selector picks steps here, clusters
// only in a fleet-wide plan (--fleet without --cluster), which refuses
// step selection (fleet.go).
func (opts *Options) selection() *model.Selection {
	sel := opts.Select
	if opts.Fleet.Fleet == "" || opts.Fleet.Cluster != "" {
		sel.Selector = opts.Fleet.Selector
	}
	return sel.Selection()
}

// planError is a plan's run-level error: a selection naming nothing is a
// usage error (exit 2), the rest fail the plan (exit 1).
func planError(err error) error {
	return cmdutil.Failed(command.ReasonOf(err, ""), err)
}
