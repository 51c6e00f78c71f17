// Package plan is `khook plan`: predict what apply would do, offline from
// the spec alone or (live) against the cluster.
package plan

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/report"
	"github.com/khook/khook/runner/action"
	"github.com/khook/khook/runner/kube"
)

// Options of the plan command.
type Options struct {
	F                *cmdutil.Factory
	Spec             cmdutil.SpecFlags
	Output           string
	Offline          bool
	Diff             bool
	DetailedExitCode bool

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
actions. --detailed-exitcode: 0 no changes, 2 changes pending, 1 error.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(opts.Output, cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
				return err
			}
			if opts.Offline && opts.Diff {
				return cmdutil.FlagErrorf("--diff needs the cluster: it cannot be combined with --offline")
			}
			if opts.Offline && opts.DetailedExitCode {
				return cmdutil.FlagErrorf("--detailed-exitcode needs the cluster to tell whether anything would change: drop --offline")
			}
			err := Run(cmd.Context(), opts)
			if opts.DetailedExitCode {
				err = errorsExitOne(err)
			}
			return err
		},
	}
	cmdutil.AddSpecFlags(cmd.Flags(), &opts.Spec)
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	cmd.Flags().BoolVar(&opts.Offline, "offline", false, "plan from the spec alone, without a cluster")
	cmd.Flags().BoolVar(&opts.Diff, "diff", false, "add unified diffs from server-side dry-runs and rendered charts")
	cmd.Flags().BoolVar(&opts.DetailedExitCode, "detailed-exitcode", false, "exit 0 with no changes, 2 with changes pending, 1 on error")
	return cmd
}

// errorsExitOne keeps --detailed-exitcode's 2 for "changes pending" only:
// any failure, validation included, exits 1.
func errorsExitOne(err error) error {
	var ee *cmdutil.ExitError
	if err == nil || (errors.As(err, &ee) && ee.Code == cmdutil.ExitChanges && ee.Err == nil) {
		return err
	}
	if ee != nil {
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: ee.Err, Reported: ee.Reported}
	}
	return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: err}
}

// Run loads the spec, plans and prints the plan.
func Run(ctx context.Context, opts *Options) error {
	s, err := opts.F.LoadSpec(&opts.Spec)
	if err != nil {
		return err
	}
	p, err := (&action.Plan{Config: opts.F.ActionConfig(opts.Clients), Offline: opts.Offline, Diff: opts.Diff}).Run(ctx, s)
	if err != nil {
		return err
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
	if opts.DetailedExitCode && p.Changes {
		return cmdutil.Silent(cmdutil.ExitChanges)
	}
	return nil
}
