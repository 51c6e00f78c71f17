package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/words"
)

// MarkdownOptions tune the Markdown documents khook writes for people on a
// CI platform: the GitHub job summary, the plan file, the PR/MR comment.
type MarkdownOptions struct {
	// Command is what ran: plan, drift, apply, destroy (the heading says it).
	Command string
	// MaxBytes bounds the document; 0 means no bound. Diffs are cut first,
	// with a note naming the steps whose diffs were cut.
	MaxBytes int
	// RunURL links the full report from the truncation note (the run page).
	RunURL string
	// NoDiagram leaves out the Mermaid DAG (the PR comment does).
	NoDiagram bool
	// NoHeading leaves out the "## khook ..." heading and header line.
	NoHeading bool
}

// maxDiagramSteps bounds the Mermaid chart: beyond it GitHub refuses to
// render (its text limit) and the chart would be unreadable anyway.
const maxDiagramSteps = 150

// minDiffCut is the smallest cut diff worth showing.
const minDiffCut = 512

// WritePlanMarkdown renders a plan: header, verdict, table, DAG, diffs in
// collapsed blocks, warnings for steps that cannot be assessed. One Write.
func WritePlanMarkdown(w io.Writer, p *model.Plan, opts MarkdownOptions) error {
	if opts.Command == "" {
		opts.Command = "plan"
	}
	diffs := map[string]string{}
	for _, s := range p.Steps {
		if s.Diff != "" {
			diffs[s.Name] = s.Diff
		}
	}
	doc := fitMarkdown(opts, p.Steps, diffs, func(b *bytes.Buffer, kept map[string]string, cut []string) {
		writePlanMD(b, p, opts, kept, cut)
	})
	_, err := io.WriteString(w, doc)
	return err
}

// WriteResultsMarkdown renders a run: header, verdict, table, DAG with each
// step's status, failed steps' errors and pod log tails. One Write.
func WriteResultsMarkdown(w io.Writer, r *model.Results, opts MarkdownOptions) error {
	if opts.Command == "" {
		opts.Command = r.Command
	}
	doc := fitMarkdown(opts, nil, nil, func(b *bytes.Buffer, _ map[string]string, _ []string) {
		writeResultsMD(b, r, opts)
	})
	_, err := io.WriteString(w, doc)
	return err
}

// fitMarkdown renders once with every diff; when that exceeds the bound it
// renders without diffs to learn what the rest costs, gives the remaining
// room to diffs in step order (cutting the one that does not fit, leaving
// out the rest) and names what was cut. A document still too long is cut
// hard at the bound with a closing note.
func fitMarkdown(opts MarkdownOptions, steps []model.PlanStep, diffs map[string]string, render func(*bytes.Buffer, map[string]string, []string)) string {
	var b bytes.Buffer
	render(&b, diffs, nil)
	if opts.MaxBytes <= 0 || b.Len() <= opts.MaxBytes {
		return b.String()
	}
	var cut []string
	for _, s := range steps {
		if diffs[s.Name] != "" {
			cut = append(cut, s.Name)
		}
	}
	if len(cut) > 0 {
		b.Reset()
		render(&b, nil, cut)
		room := opts.MaxBytes - b.Len()
		kept := map[string]string{}
		cut = cut[:0]
		for _, s := range steps {
			d := diffs[s.Name]
			if d == "" {
				continue
			}
			cost := len(mdDiffBlock(s.Name, d, false))
			switch {
			case cost <= room:
				kept[s.Name] = d
				room -= cost
			case room > minDiffCut+200:
				part := cutLines(d, room-200)
				kept[s.Name] = part
				room -= len(mdDiffBlock(s.Name, part, true))
				cut = append(cut, s.Name)
			default:
				cut = append(cut, s.Name)
				room = 0
			}
		}
		b.Reset()
		render(&b, kept, cut)
		if b.Len() <= opts.MaxBytes {
			return b.String()
		}
	}
	note := "\n\n> ✂️ This report was cut at its size limit."
	if opts.RunURL != "" {
		note += " The full report is in the [run](" + opts.RunURL + ")."
	}
	note += "\n"
	return cutUTF8(b.String(), opts.MaxBytes-len(note)) + note
}

// cutLines keeps the whole lines of s that fit in n bytes.
func cutLines(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[:i+1]
	}
	return ""
}

// cutUTF8 cuts s to at most n bytes without splitting a character.
func cutUTF8(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func writeMDHeading(b *bytes.Buffer, opts MarkdownOptions, name, identifier, server string) {
	if opts.NoHeading {
		return
	}
	fmt.Fprintf(b, "## khook %s: %s", opts.Command, mdInline(name))
	if identifier != "" && identifier != name {
		fmt.Fprintf(b, " [%s]", mdInline(identifier))
	}
	b.WriteString("\n\n")
	if server != "" {
		fmt.Fprintf(b, "Cluster: `%s`\n\n", mdCode(server))
	}
}

func writePlanMD(b *bytes.Buffer, p *model.Plan, opts MarkdownOptions, diffs map[string]string, cut []string) {
	writeMDHeading(b, opts, p.Name, p.Identifier, p.Server)
	fmt.Fprintf(b, "**%s**\n\n", model.PlanVerdict(p, opts.Command == "drift").Markdown())
	if p.Selection.IsPartial() {
		fmt.Fprintf(b, "%s\n\n", mdInline(model.TitleCase(selectionLine(p.Selection))))
	}
	b.WriteString(model.TotalsLine(p) + "\n\n")
	for _, n := range p.Notes {
		fmt.Fprintf(b, "> %s\n\n", mdInline(n))
	}
	if p.Fingerprint != "" {
		fmt.Fprintf(b, "Plan fingerprint `%s`\n\n", mdCode(model.ShortFingerprint(p.Fingerprint)))
	}
	writeInputsMD(b, p.Inputs)
	if len(p.Steps) > 0 {
		b.WriteString("| Step | Type | Action | Detail |\n|---|---|---|---|\n")
		for _, s := range p.Steps {
			detail := s.Summary
			if s.Reason != "" {
				detail = string(s.Action) + ": " + s.Reason
			}
			if s.Type == model.TypePrune { // what it prunes or keeps, and why, is the point
				detail = pruneDetail(s.Objects)
			} else if len(s.Needs) > 0 {
				detail += " (after " + strings.Join(s.Needs, ", ") + ")"
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", mdCell(s.Name), mdCell(s.Type), mdCell(actionMark(s.Action)), mdCell(detail))
		}
		b.WriteString("\n")
	}
	if !opts.NoDiagram {
		writeMDDiagram(b, GraphFromPlan(p))
	}
	writePolicyMD(b, p)
	writeWarningsMD(b, model.PlanWarnings(p))
	if len(cut) > 0 {
		fmt.Fprintf(b, "> ✂️ Diffs were cut to keep this report under its size limit: %s.", strings.Join(cut, ", "))
		if opts.RunURL != "" {
			fmt.Fprintf(b, " The full plan is in the [run](%s) and the plan JSON file.", opts.RunURL)
		}
		b.WriteString("\n\n")
	}
	for _, s := range p.Steps {
		if d, ok := diffs[s.Name]; ok && d != "" {
			b.WriteString(mdDiffBlock(s.Name, d, containsString(cut, s.Name)))
		} else if s.DiffNote != "" && s.Diff == "" {
			fmt.Fprintf(b, "- `%s`: diff: %s\n", s.Name, mdInline(s.DiffNote))
		}
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// actionMark puts the actions that act on the cluster — changes, and the
// job runs and restarts that act on every apply — in bold for readers to
// scan for.
func actionMark(a model.Action) string {
	switch {
	case model.IsChange(a) || a == model.ActionRun || a == model.ActionRestart:
		return "**" + string(a) + "**"
	case a == model.ActionUnknown:
		return model.ToneWarning.Mark() + " " + string(a)
	case a == model.ActionFail:
		return model.ToneFailed.Mark() + " **" + string(a) + "**"
	}
	return string(a)
}

func writeResultsMD(b *bytes.Buffer, r *model.Results, opts MarkdownOptions) {
	writeMDHeading(b, opts, r.Name, r.Identifier, r.Server)
	fmt.Fprintf(b, "**%s**\n\n", model.ResultsVerdict(r).Markdown())
	if r.Selection.IsPartial() {
		fmt.Fprintf(b, "%s\n\n", mdInline(model.TitleCase(selectionLine(r.Selection))))
	}
	if len(r.Steps) > 0 {
		fmt.Fprintf(b, "%s\n\n", mdInline(model.ChangesSentence(r)))
	}
	if r.Error != "" {
		fmt.Fprintf(b, "%s\n\n", mdFence("text", r.Error))
	}
	if c := r.PlanCheck; c != nil {
		tone := model.ToneOK
		if !c.Passes() {
			tone = model.ToneWarning
		}
		fmt.Fprintf(b, "%s %s\n\n", tone.Mark(), planCheckMD(c))
	}
	writeInputsMD(b, r.Inputs)
	if len(r.Steps) > 0 {
		b.WriteString("| Step | Type | Status | Attempts | Duration | Detail |\n|---|---|---|---|---|---|\n")
		for _, s := range r.Steps {
			fmt.Fprintf(b, "| %s | %s | %s | %d | %s | %s |\n", mdCell(s.Name), mdCell(s.Type), statusMark(s.Status),
				s.Attempts, model.FormatDuration(time.Duration(s.DurationMs)*time.Millisecond), mdCell(stepDetail(s)))
		}
		b.WriteString("\n")
	}
	if !opts.NoDiagram {
		writeMDDiagram(b, GraphFromResults(r))
	}
	writeWarningsMD(b, model.ResultsWarnings(r))
	var failed []model.StepResult
	for _, s := range r.Steps {
		if s.Status == model.StatusFailed {
			failed = append(failed, s)
		}
	}
	if len(failed) == 0 {
		return
	}
	b.WriteString("### Errors\n\n")
	for _, s := range failed {
		writeStepHeadingMD(b, model.ToneFailed, s.Name, s.Pos)
		b.WriteString(mdFence("text", s.Error) + "\n\n")
		if len(s.LogTail) > 0 {
			fmt.Fprintf(b, "<details><summary>Last %d pod log lines</summary>\n\n%s\n\n</details>\n\n",
				len(s.LogTail), mdFence("text", strings.Join(s.LogTail, "\n")))
		}
		writeDiagnosisMD(b, s.Diagnosis)
	}
}

// writeWarningsMD lists the API server's warnings under each step that got
// them (a deprecated API version, a field the server ignores), then
// khook's own under a heading of their own (a CRD or PVC kept, a policy
// warn): the summary is where a CI user reads, not the log's annotations
// alone.
func writeWarningsMD(b *bytes.Buffer, steps []model.StepWarnings) {
	writeWarnerMD(b, "### Warnings\n\n", model.WarnerAPIServer, steps)
	writeWarnerMD(b, "### Warnings from khook\n\n", model.WarnerKhook, steps)
}

// writeWarnerMD is one warner's section of writeWarningsMD.
func writeWarnerMD(b *bytes.Buffer, heading string, from model.Warner, all []model.StepWarnings) {
	var steps []model.StepWarnings
	for _, s := range all {
		if s.From == from {
			steps = append(steps, s)
		}
	}
	if len(steps) == 0 {
		return
	}
	b.WriteString(heading)
	for _, s := range steps {
		writeStepHeadingMD(b, model.ToneWarning, s.Name, s.Pos)
		for i, w := range s.Warnings {
			if i == maxWarningsPerStep {
				fmt.Fprintf(b, "- … and %d more (the run's log lists them all)\n", len(s.Warnings)-i)
				break
			}
			fmt.Fprintf(b, "- %s\n", mdInline(w.String()))
		}
		b.WriteString("\n")
	}
}

// maxWarningsPerStep bounds a step's warnings in a summary or comment: a
// chart of a thousand objects in a deprecated version warns once each, and
// the platforms' limits (a comment's 65,536 characters) would cut the rest
// of the report.
const maxWarningsPerStep = 20

// writeStepHeadingMD is a step's heading under Errors or Warnings, with its
// place in the spec.
func writeStepHeadingMD(b *bytes.Buffer, tone model.Tone, name string, pos spec.Pos) {
	fmt.Fprintf(b, "#### %s %s", tone.Mark(), mdInline(name))
	if !pos.IsZero() {
		fmt.Fprintf(b, " (%s)", mdInline(pos.String()))
	}
	b.WriteString("\n\n")
}

func statusMark(s model.Status) string {
	switch s {
	case model.StatusOK:
		return model.ToneOK.Mark() + " ok"
	case model.StatusFailed:
		return model.ToneFailed.Mark() + " failed"
	case model.StatusSkipped:
		return model.ToneSkipped.Mark() + " skipped"
	}
	return string(s)
}

func writeMDDiagram(b *bytes.Buffer, nodes []GraphNode) {
	if len(nodes) == 0 {
		return
	}
	b.WriteString("<details><summary>Step graph</summary>\n\n")
	if len(nodes) > maxDiagramSteps {
		fmt.Fprintf(b, "The graph of %d steps is too large to draw here: run `khook graph` to see it.\n\n</details>\n\n", len(nodes))
		return
	}
	b.WriteString("```mermaid\n")
	_ = WriteMermaid(b, nodes)
	b.WriteString("```\n\n</details>\n\n")
}

// mdDiffBlock is one step's diff, collapsed.
func mdDiffBlock(name, diff string, cut bool) string {
	n := strings.Count(strings.TrimRight(diff, "\n"), "\n") + 1
	note := ""
	if cut {
		note = ", cut"
	}
	return fmt.Sprintf("<details><summary>Diff of <code>%s</code> (%d %s%s)</summary>\n\n%s\n\n</details>\n\n",
		htmlEscape(name), n, words.Plural(n, "line", "lines"), note, mdFence("diff", diff))
}

// mdFence wraps text in a code fence longer than any backtick run in it,
// so a diff or a log line can never close the fence early.
func mdFence(lang, text string) string {
	longest, run := 0, 0
	for _, c := range text {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + lang + "\n" + strings.TrimRight(text, "\n") + "\n" + fence
}

// mdCell makes text safe inside a table cell: one line, no pipes, no HTML.
func mdCell(s string) string {
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "|", `\|`).Replace(s)
	return htmlEscape(s)
}

// mdInline makes text safe in a heading or sentence.
func mdInline(s string) string { return mdCell(s) }

// mdCode makes text safe inside an inline code span.
func mdCode(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "`", "'"), "\n", " ") }

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// WriteProblemsMarkdown renders a validation failure: every problem with
// its place in the spec. One Write.
func WriteProblemsMarkdown(w io.Writer, name, identifier string, problems []ProblemRow, opts MarkdownOptions) error {
	if opts.Command == "" {
		opts.Command = "validate"
	}
	var b bytes.Buffer
	writeMDHeading(&b, opts, name, identifier, "")
	fmt.Fprintf(&b, "**%s**\n\n", model.Verdict{Tone: model.ToneFailed, Text: fmt.Sprintf("The spec is invalid: %d %s.", len(problems), words.Plural(len(problems), "problem", "problems"))}.Markdown())
	b.WriteString("| Where | Field | Problem |\n|---|---|---|\n")
	for _, p := range problems {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", mdCell(p.Where), mdCell(p.Path), mdCell(p.Message))
	}
	b.WriteString("\n")
	doc := fitMarkdown(opts, nil, nil, func(out *bytes.Buffer, _ map[string]string, _ []string) { out.Write(b.Bytes()) })
	_, err := io.WriteString(w, doc)
	return err
}

// ProblemRow is one validation problem as the Markdown table shows it.
type ProblemRow struct{ Where, Path, Message string }

// WriteNotPlannedMarkdown says a plan did not run because no file of the
// spec changed (khook ci's changed-only): why names the commits.
func WriteNotPlannedMarkdown(w io.Writer, name, identifier, why string, opts MarkdownOptions) error {
	var b bytes.Buffer
	writeMDHeading(&b, opts, name, identifier, "")
	fmt.Fprintf(&b, "**%s**\n", model.Verdict{Tone: model.ToneNote, Text: "Not planned: " + why + "."}.Markdown())
	_, err := w.Write(b.Bytes())
	return err
}

// WriteErrorMarkdown renders a run that failed before any step: the
// failure-reason and the error. One Write.
func WriteErrorMarkdown(w io.Writer, name, identifier, reason, errText string, opts MarkdownOptions) error {
	var b bytes.Buffer
	writeMDHeading(&b, opts, name, identifier, "")
	fmt.Fprintf(&b, "**%s**\n\n%s\n", model.Verdict{Tone: model.ToneFailed, Text: fmt.Sprintf("%s failed (%s).", model.TitleCase(opts.Command), reason)}.Markdown(), mdFence("text", errText))
	doc := fitMarkdown(opts, nil, nil, func(out *bytes.Buffer, _ map[string]string, _ []string) { out.Write(b.Bytes()) })
	_, err := io.WriteString(w, doc)
	return err
}

// pruneDetail is a prune step's objects: "delete ConfigMap demo/a (no
// longer in step "cms"); no-op ... (kept: prune: false)".
func pruneDetail(objs []model.ObjectPlan) string {
	parts := make([]string, len(objs))
	for i, o := range objs {
		ref := o.Name
		if o.Namespace != "" {
			ref = o.Namespace + "/" + o.Name
		}
		with := ""
		if o.With != "" { // the data that goes with it (prune: {data: true})
			with = " and " + o.With
		}
		parts[i] = fmt.Sprintf("%s %s %s%s (%s)", o.Action, o.Kind, ref, with, o.Reason)
	}
	return strings.Join(parts, "; ")
}
