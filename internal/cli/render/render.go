// Package render is `khook render`: print the spec as khook sees it — every
// -f file substituted and merged in order — after it validated.
//
// May import: internal/cli/cmdutil and anything below the CLI (runner/...,
// model, report, spec, redact); another command's package only to run it
// (plan runs fleet's).
package render

import (
	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/spec"
)

// Options of the render command.
type Options struct {
	F    *cmdutil.Factory
	Spec cmdutil.SpecFlags
}

// NewCmd builds `khook render`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "render",
		Short: "Print the spec after variable substitution and overlay merging",
		Long: `Substitute variables in every -f file, merge the files in order (a base
and its overlays: mappings merge, steps merge by name, $patch: delete removes
a step) and print the merged spec as YAML. The spec is validated first: an
invalid one prints its problems and exits 2. Secret values are redacted.`,
		Example: `  khook render -f base.yaml -f prod.yaml
  khook render -f base.yaml -f prod.yaml --set CLUSTER=eu-1 > merged.yaml`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return Run(opts) },
	}
	cmdutil.AddSpecFlags(cmd.Flags(), &opts.Spec)
	return cmd
}

// Run renders the spec.
func Run(opts *Options) error {
	lo, err := opts.F.SpecLoadOptions(&opts.Spec)
	if err != nil {
		return err
	}
	out, err := spec.Render(lo)
	if err != nil {
		return opts.F.SpecError(err)
	}
	_, err = opts.F.IOStreams.Out.Write(out)
	return err
}
