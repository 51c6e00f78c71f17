package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/khook/khook/model"
)

// CommentOptions describe one sticky PR/MR comment.
type CommentOptions struct {
	// Marker is the hidden line that finds the comment again (first line).
	Marker string
	// Identifier names the job (cluster) the comment is about.
	Identifier string
	// Status is the status line's word: planned, applied, failed, ...
	Status model.CommentStatus
	// Commit is the commit the run looked at, shown short.
	Commit string
	// RunURL links the run; it is how a cut comment points at the rest.
	RunURL string
	// MaxBytes bounds the body; 0 means no bound. The platform's limit is
	// khook ci's to pass (internal/ci: GitHub's, GitLab's).
	MaxBytes int
	// Note follows the status word on the status line, with a link to the
	// run: why an apply was refused.
	Note string
}

// limit is the room the body has within MaxBytes; 0 means no bound.
func (o CommentOptions) limit(used int) int {
	if o.MaxBytes <= 0 {
		return 0
	}
	return o.MaxBytes - used
}

// WritePlanComment renders a plan as a PR/MR comment: marker, status line,
// verdict, totals, the table and collapsed diffs, cut to the limit.
func WritePlanComment(w io.Writer, p *model.Plan, drift bool, opts CommentOptions) error {
	cmd := "plan"
	if drift {
		cmd = "drift"
	}
	hidden := hiddenPlanLines(p.Fingerprint, p.Steps)
	return writeComment(w, opts, hidden, func(body io.Writer, max int) error {
		return WritePlanMarkdown(body, p, MarkdownOptions{Command: cmd, MaxBytes: max, RunURL: opts.RunURL, NoDiagram: true, NoHeading: true})
	})
}

// WriteResultsComment renders apply or destroy results as the comment.
func WriteResultsComment(w io.Writer, r *model.Results, opts CommentOptions) error {
	hidden := ""
	if r.PlanCheck != nil {
		hidden = hiddenPlanLines(r.PlanCheck.Current, nil)
	}
	return writeComment(w, opts, hidden, func(body io.Writer, max int) error {
		return WriteResultsMarkdown(body, r, MarkdownOptions{MaxBytes: max, RunURL: opts.RunURL, NoDiagram: true, NoHeading: true})
	})
}

// WriteTextComment renders a comment whose body is prepared Markdown (a
// validation failure).
func WriteTextComment(w io.Writer, markdown string, opts CommentOptions) error {
	return writeComment(w, opts, "", func(body io.Writer, max int) error {
		_, err := io.WriteString(body, fitMarkdown(MarkdownOptions{MaxBytes: max, RunURL: opts.RunURL}, nil, nil,
			func(b *bytes.Buffer, _ map[string]string, _ []string) { b.WriteString(markdown) }))
		return err
	})
}

func writeComment(w io.Writer, opts CommentOptions, hidden string, body func(io.Writer, int) error) error {
	var head bytes.Buffer
	head.WriteString(opts.Marker + "\n")
	head.WriteString(hidden)
	fmt.Fprintf(&head, "### khook · %s\n\n", mdInline(opts.Identifier))
	head.WriteString(CommentStatusLine(opts))
	head.WriteString("\n\n")
	var foot string
	if opts.RunURL != "" {
		foot = fmt.Sprintf("\n---\n[Run and job summary](%s)\n", opts.RunURL)
	}
	var b bytes.Buffer
	b.Write(head.Bytes())
	if err := body(&b, opts.limit(head.Len()+len(foot))); err != nil {
		return err
	}
	b.WriteString(foot)
	_, err := w.Write(b.Bytes())
	return err
}

// statusPrefix starts a comment's status line.
const statusPrefix = "**Status:** "

// CommentStatusLine is a comment's status line: "**Status:** 📝 planned at
// `0123456`", then the note and a link to the run when there is a note.
func CommentStatusLine(opts CommentOptions) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s%s %s", statusPrefix, opts.Status.Tone().Mark(), opts.Status)
	if opts.Commit != "" {
		c := opts.Commit
		if len(c) > 7 {
			c = c[:7]
		}
		fmt.Fprintf(&b, " at `%s`", mdCode(c))
	}
	if opts.Note != "" {
		fmt.Fprintf(&b, ": %s", mdInline(opts.Note))
		if opts.RunURL != "" {
			fmt.Fprintf(&b, " ([run](%s))", opts.RunURL)
		}
	}
	return b.String()
}

// ReplaceCommentStatus swaps the status line of a comment khook wrote for
// line, keeping the rest (the plan that was reviewed); false when body has
// no status line.
func ReplaceCommentStatus(body, line string) (string, bool) {
	i := strings.Index(body, "\n"+statusPrefix)
	if i < 0 {
		return body, false
	}
	i++
	end := strings.IndexByte(body[i:], '\n')
	if end < 0 {
		end = len(body) - i
	}
	return body[:i] + line + body[i+end:], true
}
