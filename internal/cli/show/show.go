// Package show is `khook show FILE`: render a saved plan without a cluster.
//
// May import: internal/cli/cmdutil and anything below the CLI (runner/...,
// model, report, spec, redact); another command's package only to run it
// (plan runs fleet's).
package show

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/model"
	"github.com/khook/khook/report"
	"github.com/khook/khook/runner/planfile"
)

// OutputMarkdown renders the plan as the job summary and PR comment do.
const OutputMarkdown = "markdown"

// Options of the show command.
type Options struct {
	F      *cmdutil.Factory
	Output string
	File   string
}

// NewCmd builds `khook show`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "show FILE",
		Short: "Show a plan saved by plan --out, without a cluster",
		Long: `Show a plan saved by khook plan --out: who made it (khook version, when),
for which cluster, its fingerprint, then the plan as plan prints it. Needs
no cluster and no kubeconfig. -o json prints the plan file's document;
-o markdown the plan as the job summary shows it.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cmdutil.FlagErrorf("%s takes one argument, the plan file (written by khook plan --out FILE), got %d", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(opts.Output, cmdutil.OutputText, cmdutil.OutputJSON, OutputMarkdown); err != nil {
				return err
			}
			opts.File = args[0]
			return Run(opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "output", "o", cmdutil.OutputText, "output format: text, json or markdown")
	return cmd
}

// Run reads the plan file and renders it.
func Run(opts *Options) error {
	pf, err := cmdutil.ReadPlanFile(opts.File)
	if err != nil {
		return err
	}
	out := opts.F.IOStreams.Out
	switch opts.Output {
	case cmdutil.OutputJSON:
		return report.WriteJSON(out, pf)
	case OutputMarkdown:
		var b bytes.Buffer
		for _, f := range Facts(pf) {
			fmt.Fprintf(&b, "- **%s:** `%s`\n", f[0], f[1])
		}
		b.WriteByte('\n')
		if _, err := out.Write(b.Bytes()); err != nil {
			return err
		}
		return report.WritePlanMarkdown(out, pf.Plan, report.MarkdownOptions{Command: "plan"})
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "Saved plan %s\n", opts.File)
	for _, f := range Facts(pf) {
		fmt.Fprintf(&b, "  %-12s %s\n", f[0]+":", f[1])
	}
	b.WriteByte('\n')
	if _, err := out.Write(b.Bytes()); err != nil {
		return err
	}
	return report.WritePlanText(out, pf.Plan)
}

// Facts are the plan file's header facts, label and value.
func Facts(pf *planfile.File) [][2]string {
	d := pf.Plan.Digests
	uid := d.ClusterUID
	if uid == "" {
		uid = "unknown"
	}
	keyed := "unkeyed (SHA-256, secrets masked)"
	if d.Keyed {
		keyed = "keyed with " + planfile.KeyEnv + " (HMAC-SHA256)"
	}
	facts := [][2]string{
		{"format", pf.Format},
		{"khook", pf.KhookVersion},
		{"created", pf.Created.UTC().Format(time.RFC3339)},
		{"fingerprint", model.ShortFingerprint(pf.Plan.Fingerprint) + " (" + pf.Plan.Fingerprint + ")"},
		{"cluster", pf.Plan.Server + " (kube-system UID " + uid + ")"},
		{"digests", keyed},
	}
	if len(pf.WouldFail) > 0 {
		facts = append(facts, [2]string{"would fail", strings.Join(pf.WouldFail, ", ") + " (apply --plan refuses this plan)"})
	}
	return facts
}
