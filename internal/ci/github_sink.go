package ci

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/khook/khook/internal/ci/gha"
	"github.com/khook/khook/model"
	"github.com/khook/khook/report"
	"github.com/khook/khook/runner/command"
)

// summaryMaxBytes keeps the job summary under GitHub's 1 MiB per step, with
// room for the redactor (a masked value can be longer than the secret).
const summaryMaxBytes = 1<<20 - 32<<10

// mask subscribes the runner's log masker to the redactor: every form
// registered so far, then each new one as it is registered, mid-run too, is
// announced with ::add-mask:: on the ordered stdout before Add returns, so
// before anything that could hold it is printed.
func (r githubSink) mask() { r.red.Subscribe(r.stdout.addMask) }

// githubSink is GitHub Actions: workflow commands on stdout, the job
// summary, step outputs and the sticky pull request comment.
type githubSink struct{ *runState }

// print fences report text: it quotes helm and pod output khook did not write.
func (r githubSink) print(text string) { (gha.Commands{W: r.stdout}).Untrusted(text) }

// fenceProgress stops command processing while a run's progress log
// quotes steps' errors; a plan prints its report once, fenced by print.
func (r githubSink) fenceProgress(command string) func() {
	if command != CmdApply && command != CmdDestroy {
		return func() {}
	}
	return r.stdout.stopCommands()
}

// warn is a warning annotation.
func (r githubSink) warn(msg string) {
	(gha.Commands{W: r.out}).Annotate(gha.Annotation{Level: gha.LevelWarning, Title: "khook", Message: msg})
}

func (r githubSink) runURL() string {
	server, repo, id := r.getenv("GITHUB_SERVER_URL"), r.getenv("GITHUB_REPOSITORY"), r.getenv("GITHUB_RUN_ID")
	if server == "" || repo == "" || id == "" {
		return ""
	}
	return fmt.Sprintf("%s/%s/actions/runs/%s", server, repo, id)
}

func (r githubSink) publish(ctx context.Context, oc *outcome) {
	r.annotate(oc)
	oc.comment = r.githubComment(ctx, oc)
	if r.wantsDriftIssue(oc) {
		r.driftIssue(ctx, r.specDriftRun(oc, r.getenv("GITHUB_SHA"), githubCommentMaxBytes))
	}
	if path := r.getenv("GITHUB_STEP_SUMMARY"); path != "" {
		var b bytes.Buffer
		r.writeSummary(&b, oc, summaryMaxBytes, r.sink.runURL())
		if err := gha.AppendFile(path, r.red.String(b.String())); err != nil {
			r.warn(err.Error())
		}
	}
	if path := r.getenv("GITHUB_OUTPUT"); path != "" {
		var b strings.Builder
		for _, o := range oc.outputs() {
			s, err := gha.FormatKeyValue(o.Key, r.red.String(o.Value))
			if err != nil {
				r.warn(err.Error())
				continue
			}
			b.WriteString(s)
		}
		if err := gha.AppendFile(path, b.String()); err != nil {
			r.warn(err.Error())
		}
	}
}

// annotate pins problems, failed steps, drift and unknown plan items to
// the spec's lines, at most 10 per level.
func (r githubSink) annotate(oc *outcome) {
	var as []report.Annotation
	switch {
	case len(oc.problems) > 0:
		as = report.ProblemAnnotations(oc.problems)
	case oc.runErr != "":
		as = []report.Annotation{{Level: report.AnnotationError, Title: fmt.Sprintf("khook %s failed (%s)", oc.command, oc.reason), Message: oc.runErr}}
		if r.spec != nil && len(r.spec.Files) > 0 {
			as[0].Pos.File = r.spec.Files[0]
		}
	case oc.plan != nil:
		as = report.PlanAnnotations(oc.plan, oc.command == CmdDrift)
	case oc.results != nil:
		as = report.ResultsAnnotations(oc.results)
	}
	cmds := gha.Commands{W: r.out}
	for _, a := range LimitAnnotations(as, MaxAnnotationsPerLevel) {
		_ = cmds.Annotate(gha.Annotation{Level: gha.Level(a.Level), File: a.Pos.File, Line: a.Pos.Line, Col: a.Pos.Col, Title: a.Title, Message: a.Message})
	}
}

// writeSummary renders the job summary (or any full Markdown report).
func (r *runState) writeSummary(w io.Writer, oc *outcome, max int, runURL string) {
	opts := report.MarkdownOptions{Command: oc.command, MaxBytes: max, RunURL: runURL}
	name := r.identifier
	if r.spec != nil {
		name = r.spec.Metadata.Name
	}
	switch {
	case len(oc.problems) > 0:
		_ = report.WriteProblemsMarkdown(w, name, r.identifier, problemRows(oc), opts)
	case oc.refused():
		_ = report.WritePlanCheckMarkdown(w, oc.check, name, r.identifier, oc.planNow, opts)
	case oc.runErr != "":
		_ = report.WriteErrorMarkdown(w, name, r.identifier, oc.reason, oc.runErr, opts)
	case oc.unchanged != "":
		_ = report.WriteNotPlannedMarkdown(w, name, r.identifier, oc.unchanged, opts)
	case oc.plan != nil:
		_ = report.WritePlanMarkdown(w, oc.plan, opts)
		if oc.command == CmdDrift && oc.drift {
			fmt.Fprintf(w, "\nRepair the drift with %s.\n", command.RepairCommand)
		}
	case oc.results != nil:
		_ = report.WriteResultsMarkdown(w, oc.results, opts)
	case oc.command == CmdValidate && r.spec != nil:
		fmt.Fprintf(w, "## khook validate: %s\n\n**%s**\n\n", name, model.Verdict{Tone: model.ToneOK, Text: fmt.Sprintf("The spec is valid: %d steps.", len(r.spec.Steps))}.Markdown())
		if len(r.spec.Steps) <= 150 {
			io.WriteString(w, "<details><summary>Step graph</summary>\n\n```mermaid\n")
			_ = report.WriteMermaid(w, report.GraphFromSpec(r.spec))
			io.WriteString(w, "```\n\n</details>\n\n")
		}
	}
}

func problemRows(oc *outcome) []report.ProblemRow {
	ps := append(oc.problems[:0:0], oc.problems...)
	ps.Sort()
	rows := make([]report.ProblemRow, len(ps))
	for i, p := range ps {
		msg := p.Message
		if p.Hint != "" {
			msg += " (" + p.Hint + ")"
		}
		rows[i] = report.ProblemRow{Where: p.Pos.String(), Path: p.Path, Message: msg}
	}
	return rows
}

// commentStatus is the comment's status line word.
func commentStatus(oc *outcome) model.CommentStatus {
	switch {
	case oc.reason == model.ReasonValidation:
		return model.CommentInvalid
	case oc.unchanged != "":
		return model.CommentUnchanged
	case oc.command == CmdDrift && oc.drift:
		return model.CommentDrift
	case oc.status != model.RunOK:
		return model.CommentFailed
	case oc.command == CmdDrift:
		return model.CommentNoDrift
	case oc.command == CmdApply:
		return model.CommentApplied
	case oc.command == CmdDestroy:
		return model.CommentDestroyed
	}
	return model.CommentPlanned
}

// commentBody renders the sticky comment, redacted.
func (r *runState) commentBody(oc *outcome, marker, commit string, max int) string {
	opts := report.CommentOptions{Marker: marker, Identifier: r.identifier, Status: commentStatus(oc), Commit: commit, RunURL: r.sink.runURL(), MaxBytes: max}
	if oc.command == CmdDrift && oc.drift {
		opts.Note = driftRepair
	}
	var b bytes.Buffer
	switch {
	case oc.plan != nil:
		_ = report.WritePlanComment(&b, oc.plan, oc.command == CmdDrift, opts)
	case oc.results != nil:
		_ = report.WriteResultsComment(&b, oc.results, opts)
	default:
		var md bytes.Buffer
		r.writeSummary(&md, oc, 0, "")
		// The summary's heading repeats what the comment's header says.
		text := md.String()
		if strings.HasPrefix(text, "## ") {
			if i := strings.Index(text, "\n\n"); i >= 0 {
				text = text[i+2:]
			}
		}
		_ = report.WriteTextComment(&b, text, opts)
	}
	return r.red.String(b.String())
}

// wantsComment applies the comment input: always creates, never skips.
// on-change writes when there is something to say: a failure, drift, a
// plan with changes, an apply or destroy that changed the cluster. A plan
// without changes still brings an existing comment up to date (a stale
// prediction would mislead); an apply or destroy that changed nothing
// leaves the comment alone.
func (r *runState) wantsComment(oc *outcome) (do, create bool) {
	switch r.in.Comment {
	case CommentNever:
		return false, false
	case CommentAlways:
		return true, true
	}
	if oc.unchanged != "" {
		return true, false // an earlier prediction says it is not planned again
	}
	changes := oc.status != model.RunOK || oc.drift || (oc.plan != nil && oc.plan.Changes)
	if oc.results != nil {
		changes = changes || oc.results.Changed()
		return changes, changes
	}
	return true, changes
}
