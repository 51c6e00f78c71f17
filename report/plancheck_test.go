package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/khook/khook/model"
)

// The comment carries the full fingerprint and the steps' actions in hidden
// lines; the apply after the merge reads them back.
func TestCommentFingerprintRoundTrip(t *testing.T) {
	p := ciPlan()
	var b bytes.Buffer
	opts := CommentOptions{Marker: `<!-- khook:comment identifier="prod-eu" -->`, Identifier: "prod-eu", Status: model.CommentPlanned}
	if err := WritePlanComment(&b, p, false, opts); err != nil {
		t.Fatal(err)
	}
	body := b.String()
	if !strings.HasPrefix(body, opts.Marker+"\n<!-- khook:fingerprint="+p.Fingerprint+" -->\n") {
		t.Errorf("the marker and the fingerprint must open the comment:\n%.300s", body)
	}
	if !strings.Contains(body, "Plan fingerprint `3f9a1c0de4b2`") {
		t.Errorf("the short fingerprint is not shown:\n%s", body)
	}
	fp, steps := CommentFingerprint(body)
	want := map[string]model.Action{"cilium": "upgrade", "settings": "create", "crs": "unknown", "argocd": "excluded", "ready": "no-op"}
	if fp != p.Fingerprint || !cmp.Equal(steps, want) {
		t.Errorf("read back %q %v", fp, steps)
	}
	if fp, steps := CommentFingerprint("<!-- khook:comment identifier=\"x\" -->\nno plan"); fp != "" || steps != nil {
		t.Errorf("a comment without a fingerprint read as %q %v", fp, steps)
	}
	// A plan without a fingerprint (offline) writes no hidden plan lines.
	p.Fingerprint = ""
	b.Reset()
	_ = WritePlanComment(&b, p, false, opts)
	if strings.Contains(b.String(), "khook:fingerprint") || strings.Contains(b.String(), "khook:steps") || strings.Contains(b.String(), "Plan fingerprint") {
		t.Errorf("no fingerprint, yet:\n%.400s", b.String())
	}
}

func TestReplaceCommentStatusKeepsTheReviewedPlan(t *testing.T) {
	var b bytes.Buffer
	opts := CommentOptions{Marker: "<!-- m -->", Identifier: "prod", Status: model.CommentPlanned, Commit: "0123456789", RunURL: "https://run/1"}
	_ = WritePlanComment(&b, ciPlan(), false, opts)
	line := CommentStatusLine(CommentOptions{Status: model.CommentRefused, Commit: "abcdef0123", RunURL: "https://run/2",
		Note: "the plan changed since review (reviewed 3f9a1c0de4b2, now 000000000000)"})
	got, ok := ReplaceCommentStatus(b.String(), line)
	if !ok {
		t.Fatal("no status line found")
	}
	want := strings.Replace(b.String(), "**Status:** 📝 planned at `0123456`",
		"**Status:** ❌ apply refused at `abcdef0`: the plan changed since review (reviewed 3f9a1c0de4b2, now 000000000000) ([run](https://run/2))", 1)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("only the status line may change (-want +got):\n%s", d)
	}
	if _, ok := ReplaceCommentStatus("no status here", line); ok {
		t.Error("a body without a status line was changed")
	}
}

func TestPlanCheckSentences(t *testing.T) {
	now := ciPlan()
	reviewed := map[string]model.Action{"cilium": "upgrade", "settings": "unchanged", "crs": "unknown", "argocd": "excluded", "ready": "no-op", "old": "create"}
	c := &model.PlanCheck{Mode: model.PlanCheckStrict, Source: "pull request #7", Reviewed: strings.Repeat("a", 64), Current: now.Fingerprint,
		Steps: model.CompareSteps(reviewed, now), StepsKnown: true}
	want := []string{
		"The plan changed since it was reviewed on pull request #7: reviewed fingerprint aaaaaaaaaaaa, now 3f9a1c0de4b2.",
		"Steps whose action changed: settings (reviewed: unchanged, now: create), old (no longer in the plan; reviewed: create).",
	}
	if d := cmp.Diff(want, c.Sentences()); d != "" || c.Matches() || c.Reason() != model.ReasonPlanChanged {
		t.Errorf("sentences (-want +got):\n%s", d)
	}
	var b bytes.Buffer
	c.CommentURL = "https://github.com/o/r/pull/7#issuecomment-1"
	if err := WritePlanCheckMarkdown(&b, c, "demo", "prod-eu", now, MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "ci-plan-refused.md", b.Bytes())
	c.Reviewed = c.Current
	if !c.Matches() {
		t.Error("equal fingerprints must match")
	}
	nf := &model.PlanCheck{Problem: "commit abc1234 came from no merged pull request: there is no reviewed plan."}
	if nf.Matches() || nf.Reason() != model.ReasonPlanNotFound {
		t.Errorf("no reviewed plan: matches %v reason %s", nf.Matches(), nf.Reason())
	}
}
