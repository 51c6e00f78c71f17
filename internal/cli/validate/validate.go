// Package validate is `khook validate`: load a spec offline and report every
// problem with its position.
//
// May import: internal/cli/cmdutil and anything below the CLI (runner/...,
// model, report, spec, redact); another command's package only to run it
// (plan runs fleet's).
package validate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/runner/plan"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/words"
)

// Options of the validate command.
type Options struct {
	F           *cmdutil.Factory
	Spec        cmdutil.SpecFlags
	Output      string
	KubeVersion string
	// WarningsAsErrors is --warnings-as-errors: a deprecated API version
	// is a problem, as it fails plan and apply.
	WarningsAsErrors bool
}

// NewCmd builds `khook validate`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Check a spec offline: schema, variables, conditions, the DAG",
		Long: `Load the spec as apply would — substitute variables, evaluate when:
conditions, check every field and the DAG — without touching a cluster.
Every manifest of an apply step and every local chart a helm step renders
is checked against the OpenAPI schemas and API versions of --kube-version.
With --policy, the khook rules and the admission policies' CEL of each file
compile too. Every problem is printed as file:line:col: message (hint);
exit 2 if any.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(opts.Output, cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
				return err
			}
			return Run(opts)
		},
	}
	cmdutil.AddSpecFlags(cmd.Flags(), &opts.Spec)
	cmdutil.AddPolicyFlag(cmd.Flags(), &opts.Spec)
	cmdutil.AddRequireVerifiedFlag(cmd.Flags(), &opts.Spec)
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	cmdutil.AddKubeVersionFlag(cmd.Flags(), &opts.KubeVersion)
	cmd.Flags().BoolVar(&opts.WarningsAsErrors, "warnings-as-errors", false, "treat an object in a deprecated API version as a problem, like plan and apply's flag")
	return cmd
}

// Result is validate's JSON document.
type Result struct {
	Valid    bool           `json:"valid"`
	Files    []string       `json:"files"`
	Steps    int            `json:"steps,omitempty"`
	Excluded int            `json:"excluded,omitempty"`
	Problems []spec.Problem `json:"problems,omitempty"`
	// Warnings are objects in API versions the target version deprecates.
	Warnings []spec.Problem `json:"warnings,omitempty"`
}

// Run validates the spec.
func Run(opts *Options) error {
	ios := opts.F.IOStreams
	kv, err := cmdutil.KubeVersion(opts.KubeVersion)
	if err != nil {
		return err
	}
	s, err := opts.F.LoadSpec(&opts.Spec)
	var warnings spec.Problems
	if err == nil {
		var problems spec.Problems
		problems, warnings = plan.Validate(context.Background(), s, kv)
		if opts.WarningsAsErrors {
			problems, warnings = append(problems, warnings...), nil
			problems.Sort()
		}
		if len(problems) > 0 {
			err = opts.F.ReportProblems(problems)
		}
	}
	res := Result{Valid: err == nil, Files: displayFiles(opts.Spec.Files), Warnings: warnings}
	if opts.Output != cmdutil.OutputJSON {
		for _, w := range warnings {
			fmt.Fprintf(ios.ErrOut, "warning: %s\n", w)
		}
	}
	if err != nil {
		var problems spec.Problems
		if opts.Output == cmdutil.OutputJSON {
			if errors.As(err, &problems) {
				res.Problems = problems
			} else {
				res.Problems = []spec.Problem{{Message: err.Error()}}
			}
			if jerr := cmdutil.WriteJSON(ios.Out, res); jerr != nil {
				return jerr
			}
		}
		return err
	}
	res.Steps = len(s.Steps)
	for _, st := range s.Steps {
		if st.Excluded() {
			res.Excluded++
		}
	}
	if opts.Output == cmdutil.OutputJSON {
		return cmdutil.WriteJSON(ios.Out, res)
	}
	_, err = fmt.Fprintf(ios.Out, "%s: valid (%s)\n", strings.Join(res.Files, ", "), words.Count(res.Steps, "step", "steps"))
	return err
}

func displayFiles(files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		if f == "-" {
			f = "<stdin>"
		}
		out[i] = f
	}
	return out
}
