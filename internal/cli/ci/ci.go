// Package ci is `khook ci`: the container's CI mode. Inputs come from the
// environment, not flags; internal/ci does the work and runs plan, apply
// and destroy through runner/action, as the CLI commands do.
package ci

import (
	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/ci"
	"github.com/khook/khook/internal/cli/cmdutil"
)

// NewCmd builds `khook ci`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "ci",
		Short: "Run as a CI step: inputs from INPUT_*/KHOOK_* variables, platform reports",
		Long: `Run khook as a CI step (the container image's GitHub Action and GitLab job mode).
Inputs come from INPUT_<NAME> (GitHub) or KHOOK_<NAME> variables: command
(plan, apply, destroy, validate, drift), file, vars, var-file, kubeconfig,
context, diff, comment, identifier, github-token, working-directory.
On GitHub it writes the job summary, annotations, outputs and one sticky
pull request comment; on GitLab, log sections, JUnit, dotenv and Terraform
reports and a merge request note. See docs/ci.md.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			out, errOut := f.IOStreams.Unwrapped()
			code := ci.Run(cmd.Context(), ci.Options{
				Stdout: out, Stderr: errOut, Stdin: f.IOStreams.In, Environ: f.IOStreams.Environ,
				Redactor: f.Redactor, Version: f.Version, Now: f.Now,
			})
			if code != 0 {
				return cmdutil.Silent(code)
			}
			return nil
		},
	}
}
