// Package apply is `khook apply`: run the spec's steps against the cluster
// and report each step's outcome.
//
// May import: internal/cli/cmdutil and anything below the CLI (runner/...,
// model, report, spec, redact); another command's package only to run it
// (plan runs fleet's).
package apply

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/command"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/planfile"
)

// Options of the apply command.
type Options struct {
	F           *cmdutil.Factory
	Spec        cmdutil.SpecFlags
	Output      string
	Parallelism int
	LockTimeout time.Duration
	// Reconcile is --reconcile: nothing resumes from the state record.
	Reconcile bool
	// PlanFile is a plan saved by plan --out to hold the run to ("": none).
	PlanFile string
	// Fleet runs one cluster of a fleet (--fleet, --cluster).
	Fleet cmdutil.FleetFlags
	// WarningsAsErrors is --warnings-as-errors.
	WarningsAsErrors bool
	// Select picks the steps to run (--target ...); with --plan, the saved
	// plan's selection is the one.
	Select cmdutil.SelectFlags

	// Backend builds the cluster side; nil is command.ClusterBackend.
	Backend command.BackendFunc
	// Clients, when set, replace the kubeconfig's (tests).
	Clients *kube.Clients
}

// NewCmd builds `khook apply`. backend nil means the real cluster.
func NewCmd(f *cmdutil.Factory, backend command.BackendFunc) *cobra.Command {
	opts := &Options{F: f, Backend: backend}
	cmd := &cobra.Command{
		Use:   "apply",
		Short: "Run the spec's steps against the cluster",
		Long: `Run the spec's steps against the cluster: each step starts as soon as every
step in its needs succeeded. On a terminal, one line per step is redrawn in
place; piped, one log line per state change and a final table; with -o json,
the results document on stdout and the log lines on stderr.
Exit 1 if a step failed, 2 if the spec is invalid.
--plan FILE applies only what that saved plan (khook plan --out) showed:
with the state lock held, the spec is planned again and any difference
(spec, inputs, cluster, a step's action or an object's digest) refuses the
run before any write, exit 1, failure reason plan-changed.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckRunFlags(opts.Output, opts.Parallelism, opts.LockTimeout); err != nil {
				return err
			}
			if opts.PlanFile != "" && opts.Select.Selection() != nil {
				return cmdutil.FlagErrorf("--plan applies the saved plan's own step selection: drop --target, --target-only, --selector and --exclude (or plan again with them)")
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmdutil.AddSpecFlags(cmd.Flags(), &opts.Spec)
	cmdutil.AddPolicyFlag(cmd.Flags(), &opts.Spec)
	cmdutil.AddRequireVerifiedFlag(cmd.Flags(), &opts.Spec)
	cmdutil.AddRunFlags(cmd, &opts.Output, &opts.Parallelism, &opts.LockTimeout, "run")
	cmdutil.AddFleetFlags(cmd.Flags(), &opts.Fleet, false)
	cmdutil.AddSelectFlags(cmd.Flags(), &opts.Select, "what it needs")
	cmd.Flags().BoolVar(&opts.Reconcile, "reconcile", false, "run every step whatever the state record says (without it, a step the record would resume runs again only when its live objects drifted)")
	cmd.Flags().StringVar(&opts.PlanFile, "plan", "", "apply only if the world still matches the plan saved in `FILE` (khook plan --out)")
	cmd.Flags().BoolVar(&opts.WarningsAsErrors, "warnings-as-errors", false, "fail a step when the API server warns about any of its requests (deprecated API versions, node labels ...), like kubectl's flag")
	return cmd
}

// Run loads the spec, runs it and reports the results.
func Run(ctx context.Context, opts *Options) error {
	var expect *planfile.File
	if opts.PlanFile != "" {
		var err error
		if expect, err = cmdutil.ReadPlanFile(opts.PlanFile); err != nil {
			// No plan to hold the run to: plan-not-found, as khook ci's
			// plan-file input says, so both exit as that row of the table.
			return opts.F.NotStarted(opts.Output, "apply", cmdutil.Failed(model.ReasonPlanNotFound, err))
		}
	}
	cleanup, err := opts.F.UseFleetFlags(&opts.Fleet, &opts.Spec)
	defer cleanup()
	if err != nil {
		return opts.F.NotStarted(opts.Output, "apply", err)
	}
	s, err := opts.F.LoadSpec(&opts.Spec)
	if err != nil {
		return opts.F.NotStarted(opts.Output, "apply", err)
	}
	run := opts.F.NewRunView(opts.Output, s)
	cfg := opts.F.ActionConfig(opts.Clients)
	cfg.WarningsAsErrors = opts.WarningsAsErrors
	res, err := (&command.ApplyCommand{
		Config:      cfg,
		Parallelism: opts.Parallelism,
		LockTimeout: opts.LockTimeout,
		Backend:     opts.Backend,
		Started:     run.Start,
		Expect:      expect,
		Selection:   opts.Select.Selection(),
		Reconcile:   opts.Reconcile,
	}).Run(ctx, s)
	return run.Finish(res, err)
}
