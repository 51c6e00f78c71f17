// Package destroy is `khook destroy`: undo what apply installed, walking the
// DAG in reverse, and delete the state record after a full success.
//
// May import: internal/cli/cmdutil and anything below the CLI (runner/...,
// model, report, spec, redact); another command's package only to run it
// (plan runs fleet's).
package destroy

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/runner/command"
	"github.com/khook/khook/runner/kube"
)

// Options of the destroy command.
type Options struct {
	// Select picks the steps to tear down (--target ...).
	Select      cmdutil.SelectFlags
	F           *cmdutil.Factory
	Spec        cmdutil.SpecFlags
	Output      string
	Parallelism int
	LockTimeout time.Duration

	// Clients overrides the clients built from --kubeconfig/--context (tests).
	Clients *kube.Clients
}

// NewCmd builds `khook destroy`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "destroy",
		Short: "Undo what apply installed, walking the DAG in reverse",
		Long: `Undo what apply installed: a step is torn down only after every step that
needs it. helm steps are uninstalled, apply steps delete the objects they
applied (last manifest first), job steps delete their Job; delete, patch,
wait and rollout steps are left alone, and namespaces made by
createNamespace stay. Absent objects are fine, so a second destroy succeeds.
After a full success the state record is deleted.
Exit 1 if a teardown failed, 2 if the spec is invalid.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckRunFlags(opts.Output, opts.Parallelism, opts.LockTimeout); err != nil {
				return err
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmdutil.AddSpecFlags(cmd.Flags(), &opts.Spec)
	cmdutil.AddRunFlags(cmd, &opts.Output, &opts.Parallelism, &opts.LockTimeout, "tear down")
	cmdutil.AddSelectFlags(cmd.Flags(), &opts.Select, "every step that needs it (torn down first)")
	return cmd
}

// Run loads the spec, tears it down and reports the results.
func Run(ctx context.Context, opts *Options) error {
	s, err := opts.F.LoadSpec(&opts.Spec)
	if err != nil {
		return opts.F.NotStarted(opts.Output, "destroy", err)
	}
	run := opts.F.NewRunView(opts.Output, s)
	res, err := (&command.DestroyCommand{
		Config:      opts.F.ActionConfig(opts.Clients),
		Parallelism: opts.Parallelism,
		LockTimeout: opts.LockTimeout,
		Selection:   opts.Select.Selection(),
		Started:     run.Start,
	}).Run(ctx, s)
	return run.Finish(res, err)
}
