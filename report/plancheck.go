package report

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/khook/khook/model"
)

// planCheckMD is the check's sentences in Markdown, the source linked to
// the reviewed comment.
func planCheckMD(c *model.PlanCheck) string {
	link := func(text, url string) string {
		if url == "" {
			return mdInline(text)
		}
		return fmt.Sprintf("[%s](%s)", mdInline(text), url)
	}
	return strings.Join(c.SentencesWith(func(s string) string { return "`" + mdCode(s) + "`" }, link), " ")
}

// WritePlanCheckMarkdown renders an apply the check refused: the verdict,
// what differs, what to do, and the plan now (when there is one). One Write.
func WritePlanCheckMarkdown(w io.Writer, c *model.PlanCheck, name, identifier string, now *model.Plan, opts MarkdownOptions) error {
	if opts.Command == "" {
		opts.Command = "apply"
	}
	server := ""
	if now != nil {
		server = now.Server
	}
	var steps []model.PlanStep
	diffs := map[string]string{}
	if now != nil {
		steps = now.Steps
		for _, s := range now.Steps {
			if s.Diff != "" {
				diffs[s.Name] = s.Diff
			}
		}
	}
	doc := fitMarkdown(opts, steps, diffs, func(b *bytes.Buffer, kept map[string]string, cut []string) {
		writeMDHeading(b, opts, name, identifier, server)
		fmt.Fprintf(b, "**%s**\n\n%s\n\n%s\n\n", c.RefusalVerdict().Markdown(), planCheckMD(c), mdInline(c.RefusalHint()))
		if now != nil {
			b.WriteString("### The plan now\n\n")
			inner := opts
			inner.NoHeading, inner.Command = true, "plan"
			writePlanMD(b, now, inner, kept, cut)
		}
	})
	_, err := io.WriteString(w, doc)
	return err
}

// The hidden lines a comment carries besides its identifier marker: the
// plan's full fingerprint and its steps' actions, so the apply after the
// merge can check what it is about to do against what was reviewed.
// Step names are RFC 1123 labels and actions fixed words: neither can close
// the HTML comment.
var (
	fingerprintLine = regexp.MustCompile(`(?m)^<!-- khook:fingerprint=([0-9a-f]+) -->$`)
	stepsLine       = regexp.MustCompile(`(?m)^<!-- khook:steps ([a-z0-9 =.-]*) -->$`)
)

func hiddenPlanLines(fingerprint string, steps []model.PlanStep) string {
	if fingerprint == "" {
		return ""
	}
	s := fmt.Sprintf("<!-- khook:fingerprint=%s -->\n", fingerprint)
	if len(steps) > 0 {
		parts := make([]string, len(steps))
		for i, st := range steps {
			parts[i] = st.Name + "=" + string(st.Action)
		}
		s += fmt.Sprintf("<!-- khook:steps %s -->\n", strings.Join(parts, " "))
	}
	return s
}

// CommentFingerprint reads the plan fingerprint a khook comment carries
// ("" when it has none) and the reviewed step actions (nil when unknown).
func CommentFingerprint(body string) (fingerprint string, steps map[string]model.Action) {
	m := fingerprintLine.FindStringSubmatch(body)
	if m == nil {
		return "", nil
	}
	if sm := stepsLine.FindStringSubmatch(body); sm != nil {
		steps = map[string]model.Action{}
		for _, kv := range strings.Fields(sm[1]) {
			if name, action, ok := strings.Cut(kv, "="); ok {
				steps[name] = model.Action(action)
			}
		}
	}
	return m[1], steps
}
