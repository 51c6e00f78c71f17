package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/khook/khook/model"
)

// WriteFleetText renders the fleet report for a terminal: the verdict, a
// row per cluster, each group of identical plans once with its changing
// steps and diffs, and each failed cluster's error. One Write.
func WriteFleetText(w io.Writer, rep *model.FleetReport) error {
	var b bytes.Buffer
	cmd := rep.Command
	if cmd == "" {
		cmd = "report"
	}
	fmt.Fprintf(&b, "fleet %s %s: %s\n\n", rep.Fleet, cmd, rep.Verdict().Text)
	width := len("CLUSTER")
	for _, row := range rep.Clusters {
		width = max(width, len(row.Cluster))
	}
	owidth := len("OUTCOME")
	for _, row := range rep.Clusters {
		owidth = max(owidth, len(row.OutcomeText()))
	}
	fmt.Fprintf(&b, "%-*s  WAVE  %-*s  DETAIL\n", width, "CLUSTER", owidth, "OUTCOME")
	for _, row := range rep.Clusters {
		detail := row.Summary
		if row.Failed() {
			detail = firstLine(strings.TrimSpace(row.Error))
		}
		fmt.Fprintf(&b, "%-*s  %4d  %-*s  %s\n", width, row.Cluster, row.Wave, owidth, row.OutcomeText(), detail)
	}
	for _, g := range rep.Groups {
		fmt.Fprintf(&b, "\n%s\n", g.Title())
		if g.Plan != nil {
			for _, s := range g.Plan.Steps {
				if !model.IsChange(s.Action) && s.Action != model.ActionRun && s.Action != model.ActionRestart && s.Action != model.ActionUnknown {
					continue
				}
				fmt.Fprintf(&b, "  %-10s %s (%s)\n", s.Action, s.Name, s.Type)
				if s.Reason != "" {
					fmt.Fprintf(&b, "             %s\n", s.Reason)
				}
				for _, line := range strings.Split(strings.TrimRight(s.Diff, "\n"), "\n") {
					if line != "" {
						fmt.Fprintf(&b, "               %s\n", line)
					}
				}
			}
		}
		if g.Results != nil {
			fmt.Fprintf(&b, "  %s\n", model.ChangesSentence(g.Results))
		}
	}
	for _, row := range rep.Clusters {
		if !row.Failed() {
			continue
		}
		fmt.Fprintf(&b, "\n%s: %s\n", row.Cluster, row.OutcomeText())
		for _, line := range strings.Split(cutLinesN(row.Error, maxErrorLines), "\n") {
			fmt.Fprintf(&b, "    %s\n", line)
		}
		if row.Leg != nil && row.Leg.Results != nil {
			writeFailures(&b, row.Leg.Results, true)
		}
	}
	if len(rep.Ignored) > 0 {
		fmt.Fprintf(&b, "\nignored results of clusters outside the selection: %s\n", strings.Join(rep.Ignored, ", "))
	}
	_, err := w.Write(b.Bytes())
	return err
}
