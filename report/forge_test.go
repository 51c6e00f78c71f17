package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/khook/khook/model"
)

// forged is text a chart or the cluster controls (an error, a pod log, a
// rendered object) trying to end khook's code fence and <details> block
// and write its own Markdown after them.
const forged = "x\n```\n~~~\n</details>\n</code></pre>\n# forged heading\n[forged link](https://evil.example)\n<details><summary>forged</summary>"

// outsideFences returns the lines of md outside fenced code blocks.
func outsideFences(md string) []string {
	var out []string
	fence := ""
	for _, line := range strings.Split(md, "\n") {
		t := strings.TrimLeft(line, " ")
		switch {
		case fence == "" && strings.HasPrefix(t, "```"):
			fence = t[:len(t)-len(strings.TrimLeft(t, "`"))]
		case fence != "" && strings.TrimRight(t, " ") == fence:
			fence = ""
		case fence == "":
			out = append(out, line)
		}
	}
	return out
}

func assertNotForged(t *testing.T, what, md string) {
	t.Helper()
	if !strings.Contains(md, "# forged heading") {
		t.Fatalf("%s does not show the text at all:\n%s", what, md)
	}
	text := strings.Join(outsideFences(md), "\n")
	for _, bad := range []string{"# forged heading", "[forged link](https://evil.example)", "<summary>forged</summary>"} {
		if strings.Contains(text, bad) {
			t.Errorf("%s: %q escapes its fence:\n%s", what, bad, md)
		}
	}
	if o, c := strings.Count(text, "<details>"), strings.Count(text, "</details>"); o != c {
		t.Errorf("%s: %d <details> and %d </details> outside fences:\n%s", what, o, c, md)
	}
}

// TestClusterTextCannotForgeTheCommentOrSummary: the diff, errors and pod
// log lines land in the comment and summary fenced, however they try to
// close the fence or the <details> block around them.
func TestClusterTextCannotForgeTheCommentOrSummary(t *testing.T) {
	p := &model.Plan{Name: "forge", Steps: []model.PlanStep{{Name: "app", Type: "helm", Action: model.ActionUpgrade, Summary: "upgrade app",
		Diff: "-a: 1\n+a: 2\n" + forged}}}
	p.Totals = model.PlanTotals(p.Steps)
	p.Changes = true
	res := &model.Results{Name: "forge", Command: "apply", Status: model.RunFailed, FailureReason: model.ReasonStepFailed,
		Steps: []model.StepResult{{Name: "migrate", Type: "job", Status: model.StatusFailed, Error: "job failed: " + forged, LogTail: strings.Split(forged, "\n")}}}
	opts := CommentOptions{Marker: "<!-- m -->", Identifier: "forge", Status: model.CommentPlanned}
	for name, write := range map[string]func(*bytes.Buffer) error{
		"plan comment":    func(b *bytes.Buffer) error { return WritePlanComment(b, p, false, opts) },
		"plan summary":    func(b *bytes.Buffer) error { return WritePlanMarkdown(b, p, MarkdownOptions{Command: "plan"}) },
		"results comment": func(b *bytes.Buffer) error { return WriteResultsComment(b, res, opts) },
		"results summary": func(b *bytes.Buffer) error { return WriteResultsMarkdown(b, res, MarkdownOptions{Command: "apply"}) },
		"error summary": func(b *bytes.Buffer) error {
			return WriteErrorMarkdown(b, "forge", "forge", model.ReasonStepFailed, "render failed: "+forged, MarkdownOptions{Command: "plan"})
		},
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		assertNotForged(t, name, b.String())
	}
}
