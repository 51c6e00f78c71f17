package fleet

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/cli/cmdutil"
	ifleet "github.com/khook/khook/internal/fleet"
	"github.com/khook/khook/model"
	"github.com/khook/khook/report"
	"github.com/khook/khook/runner/command"
)

// OutputMarkdown is the report as a job summary would show it.
const OutputMarkdown = "markdown"

// ReportOptions of `khook fleet report`.
type ReportOptions struct {
	F        *cmdutil.Factory
	Fleet    string
	Wave     int
	Selector string
	Output   string
	Results  []string
}

func newReportCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &ReportOptions{F: f}
	cmd := &cobra.Command{
		Use:   "report --fleet FLEET RESULTS...",
		Short: "One report from the legs' results files (fan-in)",
		Long: `Read the legs' results — files, or directories searched recursively for
khook-leg-*.json, as download-artifact lays them out — and print one report:
totals, a row per cluster, identical plans grouped, details for clusters that
change or fail. A selected cluster without a results file is reported as
failed. Exit 1 when a cluster failed; with --wave N, exit 1 only when the
wave's failed clusters exceed the fleet's rollout.maxFailures, so the next
wave's job does not start. khook ci's command fleet-report posts the same
report as one sticky pull request comment.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(opts.Output, cmdutil.OutputText, cmdutil.OutputJSON, OutputMarkdown); err != nil {
				return err
			}
			if opts.Fleet == "" {
				return cmdutil.FlagErrorf("--fleet names the fleet file")
			}
			opts.Results = args
			return RunReport(opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&opts.Fleet, "fleet", "f", "", "the fleet file (kind: Fleet)")
	fs.IntVar(&opts.Wave, "wave", 0, "report this wave only, and exit 1 when its failures exceed rollout.maxFailures")
	fs.StringVar(&opts.Selector, "selector", "", "only the clusters whose labels match: env=prod,region!=us")
	fs.StringVarP(&opts.Output, "output", "o", cmdutil.OutputText, "text, json or markdown")
	return cmd
}

// RunReport prints the fleet report and returns its exit status.
func RunReport(opts *ReportOptions) error {
	fl, err := opts.F.LoadFleet(opts.Fleet)
	if err != nil {
		return err
	}
	clusters, err := ifleet.Selection(fl, opts.Wave, opts.Selector)
	if err != nil {
		return cmdutil.ValidationError(err)
	}
	rep, problems := ifleet.Report(fl, clusters, opts.Wave, opts.Results)
	for _, p := range problems {
		fmt.Fprintf(opts.F.IOStreams.ErrOut, "warning: %s\n", p)
	}
	return WriteReport(opts.F, rep, opts.Output, false)
}

// WriteReport prints a fleet report in the output format and returns the
// exit status it calls for (command.ExitCode): with a wave, failure only
// past maxFailures; with detailedExitCode (plan --fleet), 2 when clusters
// change and none failed.
func WriteReport(f *cmdutil.Factory, rep *model.FleetReport, output string, detailedExitCode bool) error {
	out := f.IOStreams.Out
	var err error
	switch output {
	case cmdutil.OutputJSON:
		err = report.WriteJSON(out, rep)
	case OutputMarkdown:
		err = report.WriteFleetMarkdown(out, rep, report.FleetMarkdownOptions{})
	default:
		err = report.WriteFleetText(out, rep)
	}
	if err != nil {
		return err
	}
	code := command.ExitCode(command.Result{Failed: rep.Failed(), Reason: rep.FailureReason(), Changes: rep.Totals.Changed > 0, DetailedExitCode: detailedExitCode})
	if code != command.ExitOK {
		return cmdutil.Silent(code)
	}
	return nil
}
