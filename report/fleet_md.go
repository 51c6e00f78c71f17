package report

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/khook/khook/model"
	"github.com/khook/khook/words"
)

// FleetMarkdownOptions shape the fleet report in Markdown.
type FleetMarkdownOptions struct {
	// MaxBytes bounds the document (0: unbounded).
	MaxBytes int
	// Limit names the bound for the note on what was left out
	// ("GitHub's 65,536 characters").
	Limit string
	// RunURL links the report's run.
	RunURL string
	// NoHeading leaves out the "## khook fleet" heading (the comment has its own).
	NoHeading bool
}

// fleetFit is how far a report degrades to fit: no-change clusters folded
// into one counted line, then diffs cut (largest first), then details
// replaced by links to each leg's summary.
type fleetFit struct {
	fold  bool
	cut   map[string]bool // "group/step" diffs left out
	links bool
}

// maxFoldedNames bounds the names listed on the folded line.
const maxFoldedNames = 4000

// maxErrorLines bounds a failed cluster's error in the details.
const maxErrorLines = 30

// WriteFleetMarkdown renders the fleet report for a job summary, within
// opts.MaxBytes, degrading in order and saying what it left out.
func WriteFleetMarkdown(w io.Writer, rep *model.FleetReport, opts FleetMarkdownOptions) error {
	_, err := io.WriteString(w, fitFleet(rep, opts))
	return err
}

// WriteFleetComment renders the fleet report as the one sticky PR/MR
// comment, within opts' limit.
func WriteFleetComment(w io.Writer, rep *model.FleetReport, opts CommentOptions, limit string) error {
	return writeComment(w, opts, "", func(body io.Writer, max int) error {
		return WriteFleetMarkdown(body, rep, FleetMarkdownOptions{MaxBytes: max, Limit: limit, RunURL: opts.RunURL, NoHeading: true})
	})
}

func fitFleet(rep *model.FleetReport, opts FleetMarkdownOptions) string {
	fit := fleetFit{cut: map[string]bool{}}
	render := func() string {
		var b bytes.Buffer
		writeFleetMD(&b, rep, opts, fit)
		return b.String()
	}
	out := render()
	if opts.MaxBytes <= 0 || len(out) <= opts.MaxBytes {
		return out
	}
	if rep.Totals.Unchanged > 0 {
		fit.fold = true
		if out = render(); len(out) <= opts.MaxBytes {
			return out
		}
	}
	// Diffs, the largest first, until the overshoot is covered.
	type diffRef struct {
		key  string
		size int
	}
	var diffs []diffRef
	for gi, g := range rep.Groups {
		if g.Plan == nil {
			continue
		}
		for _, s := range g.Plan.Steps {
			if s.Diff != "" {
				diffs = append(diffs, diffRef{fmt.Sprintf("%d/%s", gi, s.Name), len(s.Diff)})
			}
		}
	}
	sort.SliceStable(diffs, func(i, j int) bool { return diffs[i].size > diffs[j].size })
	for i := 0; i < len(diffs) && len(out) > opts.MaxBytes; {
		over := len(out) - opts.MaxBytes
		for removed := 0; i < len(diffs) && removed < over; i++ {
			fit.cut[diffs[i].key] = true
			removed += diffs[i].size
		}
		out = render()
	}
	if len(out) <= opts.MaxBytes {
		return out
	}
	fit.links = true
	if out = render(); len(out) <= opts.MaxBytes {
		return out
	}
	note := "\n\n> ✂️ This report was cut at its size limit."
	if opts.RunURL != "" {
		note += " The full report is in the [run](" + opts.RunURL + ")."
	}
	note += "\n"
	return cutUTF8(out, opts.MaxBytes-len(note)) + note
}

func writeFleetMD(b *bytes.Buffer, rep *model.FleetReport, opts FleetMarkdownOptions, fit fleetFit) {
	if !opts.NoHeading {
		cmd := rep.Command
		if cmd == "" {
			cmd = "report"
		}
		fmt.Fprintf(b, "## khook fleet %s: %s\n\n", mdInline(cmd), mdInline(rep.Fleet))
	}
	fmt.Fprintf(b, "**%s**\n\n", rep.Verdict().Markdown())
	writeLeftOut(b, rep, opts, fit)
	b.WriteString("| Cluster | Wave | Outcome | Detail |\n|---|---|---|---|\n")
	for _, row := range rep.Clusters {
		if fit.fold && row.Outcome == model.FleetNoChanges {
			continue
		}
		detail := row.Summary
		if row.Failed() {
			detail = firstLine(strings.TrimSpace(row.Error))
		}
		if row.Group >= 0 && len(rep.Groups[row.Group].Clusters) > 1 {
			detail = fmt.Sprintf("same plan as %d %s; %s", len(rep.Groups[row.Group].Clusters)-1, words.Plural(len(rep.Groups[row.Group].Clusters)-1, "other", "others"), detail)
		}
		name := mdCell(row.Cluster)
		if row.SummaryURL != "" {
			name = fmt.Sprintf("[%s](%s)", name, row.SummaryURL)
		}
		fmt.Fprintf(b, "| %s | %d | %s %s | %s |\n", name, row.Wave, row.Tone().Mark(), mdCell(row.OutcomeText()), mdCell(cutUTF8(detail, 300)))
	}
	b.WriteString("\n")
	if fit.fold {
		var names []string
		size := 0
		for _, row := range rep.Clusters {
			if row.Outcome == model.FleetNoChanges && size < maxFoldedNames {
				names = append(names, row.Cluster)
				size += len(row.Cluster) + 2
			}
		}
		list := strings.Join(names, ", ")
		if len(names) < rep.Totals.Unchanged {
			list += fmt.Sprintf(" and %d more", rep.Totals.Unchanged-len(names))
		}
		fmt.Fprintf(b, "%s %d %s without changes: %s.\n\n", model.ToneOK.Mark(), rep.Totals.Unchanged, words.Plural(rep.Totals.Unchanged, "cluster", "clusters"), mdInline(list))
	}
	for gi, g := range rep.Groups {
		writeGroupMD(b, gi, g, rep, fit)
	}
	for _, row := range rep.Clusters {
		if row.Failed() {
			writeFailedMD(b, row, fit)
		}
	}
	if len(rep.Ignored) > 0 {
		fmt.Fprintf(b, "Results of clusters outside this report's selection were ignored: %s.\n\n", mdInline(strings.Join(rep.Ignored, ", ")))
	}
}

// writeLeftOut says what the report left out to fit.
func writeLeftOut(b *bytes.Buffer, rep *model.FleetReport, opts FleetMarkdownOptions, fit fleetFit) {
	var parts []string
	if fit.fold {
		parts = append(parts, fmt.Sprintf("%d %s without changes folded into one line", rep.Totals.Unchanged, words.Plural(rep.Totals.Unchanged, "cluster", "clusters")))
	}
	if n := len(fit.cut); n > 0 && !fit.links {
		parts = append(parts, fmt.Sprintf("%d %s cut (the largest first)", n, words.Plural(n, "diff", "diffs")))
	}
	if fit.links {
		parts = append(parts, "every diff and the per-cluster details left out: follow each cluster's link to its leg's summary")
	}
	if len(parts) == 0 {
		return
	}
	limit := opts.Limit
	if limit == "" {
		limit = fmt.Sprintf("%d bytes", opts.MaxBytes)
	}
	fmt.Fprintf(b, "> ✂️ To stay within %s: %s.", limit, strings.Join(parts, "; "))
	if opts.RunURL != "" {
		fmt.Fprintf(b, " The [run](%s) has each leg's results.", opts.RunURL)
	}
	b.WriteString("\n\n")
}

func writeGroupMD(b *bytes.Buffer, gi int, g model.FleetGroup, rep *model.FleetReport, fit fleetFit) {
	tone := model.ToneNote
	if g.Outcome == model.FleetDrift {
		tone = model.ToneWarning
	}
	fmt.Fprintf(b, "#### %s %s\n\n", tone.Mark(), mdInline(g.Title()))
	if fit.links {
		writeLegLinks(b, g.Clusters, rep)
		return
	}
	if g.Plan != nil {
		b.WriteString(model.TotalsLine(g.Plan) + "\n\n")
		b.WriteString("| Step | Type | Action | Detail |\n|---|---|---|---|\n")
		for _, s := range g.Plan.Steps {
			if !model.IsChange(s.Action) && s.Action != model.ActionRun && s.Action != model.ActionRestart && s.Action != model.ActionUnknown {
				continue
			}
			detail := s.Summary
			if s.Reason != "" {
				detail = string(s.Action) + ": " + s.Reason
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", mdCell(s.Name), mdCell(s.Type), mdCell(actionMark(s.Action)), mdCell(detail))
		}
		b.WriteString("\n")
		for _, s := range g.Plan.Steps {
			if s.Diff == "" {
				continue
			}
			if fit.cut[fmt.Sprintf("%d/%s", gi, s.Name)] {
				n := strings.Count(strings.TrimRight(s.Diff, "\n"), "\n") + 1
				fmt.Fprintf(b, "- diff of `%s` cut (%d %s): see the leg's summary\n", mdCode(s.Name), n, words.Plural(n, "line", "lines"))
				continue
			}
			b.WriteString(mdDiffBlock(s.Name, s.Diff, false))
		}
		b.WriteString("\n")
	}
	if g.Results != nil {
		b.WriteString(model.ChangesSentence(g.Results) + "\n\n")
		for _, s := range g.Results.Steps {
			if s.Changed() {
				var cs []string
				for _, c := range s.Changes {
					if model.IsChange(c.Action) {
						cs = append(cs, c.String())
					}
				}
				fmt.Fprintf(b, "- `%s`: %s\n", mdCode(s.Name), mdInline(strings.Join(cs, ", ")))
			}
		}
		b.WriteString("\n")
	}
}

func writeFailedMD(b *bytes.Buffer, row model.FleetRow, fit fleetFit) {
	fmt.Fprintf(b, "#### %s %s: %s\n\n", model.ToneFailed.Mark(), mdInline(row.Cluster), mdInline(row.OutcomeText()))
	if fit.links {
		fmt.Fprintf(b, "%s", mdInline(cutUTF8(firstLine(strings.TrimSpace(row.Error)), 300)))
		if row.SummaryURL != "" {
			fmt.Fprintf(b, " ([leg summary](%s))", row.SummaryURL)
		}
		b.WriteString("\n\n")
		return
	}
	if row.Error != "" {
		b.WriteString(mdFence("", cutLinesN(row.Error, maxErrorLines)) + "\n\n")
	}
	if l := row.Leg; l != nil && l.Results != nil {
		for _, s := range l.Results.Steps {
			if s.Status == model.StatusFailed && s.Error != "" {
				fmt.Fprintf(b, "Step `%s` failed:\n\n%s\n\n", mdCode(s.Name), mdFence("", cutLinesN(s.Error, maxErrorLines)))
			}
		}
	}
}

func writeLegLinks(b *bytes.Buffer, clusters []string, rep *model.FleetReport) {
	urls := map[string]string{}
	for _, row := range rep.Clusters {
		urls[row.Cluster] = row.SummaryURL
	}
	var links []string
	for _, c := range clusters {
		if u := urls[c]; u != "" {
			links = append(links, fmt.Sprintf("[%s](%s)", mdCell(c), u))
		}
	}
	if len(links) == 0 {
		b.WriteString("Details are in the legs' summaries.\n\n")
		return
	}
	b.WriteString("Details: " + strings.Join(links, ", ") + "\n\n")
}

// cutLinesN keeps the first n lines of s.
func cutLinesN(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= n {
		return strings.Join(lines, "\n")
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n… %d more lines", len(lines)-n)
}
