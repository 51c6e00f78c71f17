// Package fleet is `khook fleet`: a fleet's CI matrix (fleet matrix) and
// its one report from the legs' results (fleet report).
//
// May import: internal/cli/cmdutil and anything below the CLI (runner/...,
// model, report, spec, redact); another command's package only to run it
// (plan runs fleet's).
package fleet

import (
	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/cli/cmdutil"
)

// NewCmd builds `khook fleet` and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fleet",
		Short: "Run one spec across many clusters on the CI's matrix (docs/fleet.md)",
		Long: `A fleet file (kind: Fleet) names the spec every cluster runs and, per cluster,
its wave, labels, credentials, overlays and variables. khook fleet matrix
prints the CI matrix of the selected clusters (fan-out); each matrix job runs
one leg (khook ci with the fleet and cluster inputs, or khook plan --fleet
--cluster); khook fleet report reads the legs' results into one report and
one pull request comment (fan-in). See docs/fleet.md.`,
		Args: cmdutil.NoArgs,
	}
	cmd.AddCommand(newMatrixCmd(f), newReportCmd(f))
	return cmd
}
