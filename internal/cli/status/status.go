// Package status is `khook status`: show the state record of the last run and
// predict which steps the next apply resumes.
//
// May import: internal/cli/cmdutil and anything below the CLI (runner/...,
// model, report, spec, redact); another command's package only to run it
// (plan runs fleet's).
package status

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/report"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/state"
)

// Options of the status command.
type Options struct {
	F      *cmdutil.Factory
	Spec   cmdutil.SpecFlags
	Output string
	// Client overrides the client built from --kubeconfig/--context (tests).
	Client kubernetes.Interface
}

// NewCmd builds `khook status`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the state record of the last run and what the next apply resumes",
		Long: `Show the state record (state: in the spec) of the last run: its run status,
every step's last outcome, whether the spec changed since, who holds the lock,
and which steps the next apply resumes. Read-only. No record exits 0
({"found": false} with -o json).`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(opts.Output, cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
				return err
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmdutil.AddSpecFlags(cmd.Flags(), &opts.Spec)
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

// Run loads the spec, reads its record and prints the status.
func Run(ctx context.Context, opts *Options) error {
	s, err := opts.F.LoadSpec(&opts.Spec)
	if err != nil {
		return err
	}
	client, explain := opts.Client, func(err error) error { return err }
	if _, ok := state.RefFor(s); ok && client == nil {
		clients, err := kube.NewClients(opts.F.Global.Kubeconfig, opts.F.Global.Context)
		if err != nil {
			return err
		}
		client, explain = clients.Typed, clients.Explain
	}
	st, err := state.GetStatus(ctx, client, s, opts.F.Now)
	if err != nil {
		return explain(err)
	}
	return write(opts, st)
}

func write(opts *Options, st *state.Status) error {
	if opts.Output == cmdutil.OutputJSON {
		return report.WriteJSON(opts.F.IOStreams.Out, st)
	}
	return st.WriteText(opts.F.IOStreams.Out)
}
