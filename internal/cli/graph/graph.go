// Package graph is `khook graph`: draw the step DAG as Mermaid or DOT.
//
// May import: internal/cli/cmdutil and anything below the CLI (runner/...,
// model, report, spec, redact); another command's package only to run it
// (plan runs fleet's).
package graph

import (
	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/report"
	"github.com/khook/khook/runner/selection"
)

// Formats of --format.
const (
	FormatMermaid = "mermaid"
	FormatDOT     = "dot"
)

// Options of the graph command.
type Options struct {
	F      *cmdutil.Factory
	Spec   cmdutil.SpecFlags
	Format string
	// Select draws a partial run's selection: the steps left out are
	// drawn as excluded.
	Select cmdutil.SelectFlags
}

// NewCmd builds `khook graph`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "graph",
		Short: "Draw the step DAG (Mermaid flowchart, or Graphviz DOT)",
		Long: `Draw the steps and their needs: edges as a Mermaid flowchart (the default)
or Graphviz DOT (--format dot). Steps that when: excludes, or that --target,
--selector or --exclude leave out, are drawn dashed and labelled skipped.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Format != FormatMermaid && opts.Format != FormatDOT {
				return cmdutil.FlagErrorf("--format %q is not a graph format: use mermaid or dot", opts.Format)
			}
			return Run(opts)
		},
	}
	cmdutil.AddSpecFlags(cmd.Flags(), &opts.Spec)
	cmd.Flags().StringVar(&opts.Format, "format", FormatMermaid, "graph format: mermaid or dot")
	cmdutil.AddSelectFlags(cmd.Flags(), &opts.Select, "what it needs")
	return cmd
}

// Run loads the spec and draws its DAG.
func Run(opts *Options) error {
	s, err := opts.F.LoadSpec(&opts.Spec)
	if err != nil {
		return err
	}
	if _, err := selection.Mark(s, opts.Select.Selection(), selection.Needs); err != nil {
		return cmdutil.ValidationError(err)
	}
	nodes := report.GraphFromSpec(s)
	if opts.Format == FormatDOT {
		return report.WriteDOT(opts.F.IOStreams.Out, s.Metadata.Name, nodes)
	}
	return report.WriteMermaid(opts.F.IOStreams.Out, nodes)
}
