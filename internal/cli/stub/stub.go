// Package stub holds the commands that are named but not built yet, so the
// CLI surface and its flags are stable and scripts get a clear answer.
package stub

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/cli/cmdutil"
)

// NewCmd builds a command that accepts the spec flags and exits 1 saying it
// is not implemented yet.
func NewCmd(f *cmdutil.Factory, use, short string) *cobra.Command {
	var flags cmdutil.SpecFlags
	var output string
	cmd := &cobra.Command{
		Use:   use,
		Short: short + " (not implemented yet)",
		Args:  cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return fmt.Errorf("khook %s is not implemented yet", use)
		},
	}
	cmdutil.AddSpecFlags(cmd.Flags(), &flags)
	cmdutil.AddOutputFlag(cmd, &output)
	return cmd
}
