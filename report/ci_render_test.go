package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
)

func ciPlan() *model.Plan {
	p := &model.Plan{Name: "demo", Identifier: "prod-eu", Server: "https://10.0.0.1:6443", Changes: true, Steps: []model.PlanStep{
		{Name: "cilium", Type: "helm", Action: model.ActionUpgrade, Summary: "upgrade release cilium 1.17.0 -> 1.18.4 in kube-system",
			Diff: "--- live\n+++ desired\n-  image: cilium:1.17.0\n+  image: cilium:1.18.4\n", Pos: spec.Pos{File: "khook.yaml", Line: 8, Col: 5}},
		{Name: "settings", Type: "apply", Action: model.ActionCreate, Summary: "apply 1 object", Needs: []string{"cilium"},
			Objects: []model.ObjectPlan{{Action: "create", Kind: "ConfigMap", Namespace: "demo", Name: "settings"}},
			Diff:    "+apiVersion: v1\n+kind: ConfigMap\n+data: {a: \"```|<b>\"}\n", Pos: spec.Pos{File: "khook.yaml", Line: 20, Col: 5}},
		{Name: "crs", Type: "apply", Action: model.ActionUnknown, Reason: "kind Widget is registered by an earlier step", Needs: []string{"settings"}, Pos: spec.Pos{File: "khook.yaml", Line: 30, Col: 5}},
		{Name: "argocd", Type: "helm", Action: model.ActionExcluded, Reason: `when vars.ENV == "prod" is false`, Skip: spec.SkipWhen, Needs: []string{"cilium"}, Pos: spec.Pos{File: "khook.yaml", Line: 40, Col: 5}},
		{Name: "ready", Type: "wait", Action: model.ActionNoop, Summary: "wait for condition=Ready on pods", DiffNote: "no changes", Needs: []string{"crs"}},
	}}
	p.Totals = model.PlanTotals(p.Steps)
	p.Fingerprint = "3f9a1c0de4b27a55c1e9d08f6b3a2c71e5d4f90a8b6c3e21d7f0a9b8c6e5d4f3"
	return p
}

func ciResults() *model.Results {
	return &model.Results{Name: "demo", Command: "apply", Status: model.RunFailed, FailureReason: model.ReasonStepFailed, Identifier: "prod-eu",
		Server: "https://10.0.0.1:6443", StartedAt: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), DurationMs: 62_000,
		Steps: []model.StepResult{
			{Name: "cilium", Type: "helm", Status: model.StatusOK, Attempts: 1, DurationMs: 4200, Detail: "upgraded release cilium to revision 3",
				Changes: []model.Change{{Action: model.DidUpgrade, Kind: model.KindRelease, Namespace: "kube-system", Name: "cilium"}}},
			{Name: "migrate", Type: "job", Status: model.StatusFailed, Attempts: 3, DurationMs: 57_000, Needs: []string{"cilium"},
				Error:   "job migrate failed: pod migrate-x7k2p exited with code 1\n(after 3 attempts)",
				LogTail: []string{"connecting to db", "::error::not a real annotation", "fatal: relation \"users\" does not exist"},
				Pos:     spec.Pos{File: "khook.yaml", Line: 14, Col: 5}},
			{Name: "app", Type: "apply", Status: model.StatusSkipped, Needs: []string{"migrate"}, SkipReason: "needs migrate, which failed"},
		}}
}

func TestCIPlanMarkdown(t *testing.T) {
	var w writeCounter
	if err := WritePlanMarkdown(&w, ciPlan(), MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	if w.writes != 1 {
		t.Errorf("%d writes, want 1", w.writes)
	}
	golden(t, "ci-plan.md", w.Bytes())
}

func TestCIDriftMarkdownVerdict(t *testing.T) {
	var b bytes.Buffer
	_ = WritePlanMarkdown(&b, ciPlan(), MarkdownOptions{Command: "drift"})
	if !strings.Contains(b.String(), "Drift detected: 2 steps no longer match the spec") {
		t.Errorf("drift verdict missing:\n%s", b.String())
	}
}

func TestCIResultsMarkdown(t *testing.T) {
	var w writeCounter
	if err := WriteResultsMarkdown(&w, ciResults(), MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "ci-results.md", w.Bytes())
}

func TestCIComments(t *testing.T) {
	opts := CommentOptions{Marker: "<!-- khook:comment identifier=\"prod-eu\" -->", Identifier: "prod-eu", Status: model.CommentPlanned,
		Commit: "0123456789abcdef", RunURL: "https://github.com/o/r/actions/runs/42"}
	var b bytes.Buffer
	if err := WritePlanComment(&b, ciPlan(), false, opts); err != nil {
		t.Fatal(err)
	}
	golden(t, "ci-comment-plan.md", b.Bytes())
	b.Reset()
	opts.Status = model.CommentFailed
	if err := WriteResultsComment(&b, ciResults(), opts); err != nil {
		t.Fatal(err)
	}
	golden(t, "ci-comment-results.md", b.Bytes())
}

// bigPlan has diffs far over any limit.
func bigPlan(steps, diffLines int) *model.Plan {
	p := &model.Plan{Name: "big", Changes: true}
	for i := 0; i < steps; i++ {
		var d strings.Builder
		for j := 0; j < diffLines; j++ {
			fmt.Fprintf(&d, "+  key-%d: %s\n", j, strings.Repeat("v", 60))
		}
		p.Steps = append(p.Steps, model.PlanStep{Name: fmt.Sprintf("step-%d", i), Type: "apply", Action: model.ActionConfigure, Summary: "apply", Diff: d.String()})
	}
	return p
}

func TestCIMarkdownCutsDiffsFirst(t *testing.T) {
	const limit = 1 << 20
	var b bytes.Buffer
	if err := WritePlanMarkdown(&b, bigPlan(40, 2000), MarkdownOptions{MaxBytes: limit, RunURL: "https://run"}); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if len(s) > limit {
		t.Fatalf("summary is %d bytes, over the %d limit", len(s), limit)
	}
	if len(s) < limit*9/10 {
		t.Errorf("summary is %d bytes: the cut wasted most of the room", len(s))
	}
	for _, want := range []string{"Diffs were cut", "| step-39 | apply | **configure** |", "Diff of <code>step-0</code>", "[run](https://run)"} {
		if !strings.Contains(s, want) {
			t.Errorf("cut summary lacks %q", want)
		}
	}
	if strings.Count(s, "<details>") != strings.Count(s, "</details>") {
		t.Error("a <details> block is left open")
	}
}

func TestCICommentStaysUnderLimit(t *testing.T) {
	var b bytes.Buffer
	opts := CommentOptions{Marker: "<!-- m -->", Identifier: "big", Status: model.CommentPlanned, RunURL: "https://run/1", MaxBytes: githubCommentMaxBytes}
	if err := WritePlanComment(&b, bigPlan(5, 3000), false, opts); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if n := len([]rune(s)); n >= githubCommentChars {
		t.Fatalf("comment has %d characters, GitHub takes under %d", n, githubCommentChars)
	}
	if !strings.HasPrefix(s, "<!-- m -->\n") || !strings.Contains(s, "Diffs were cut") || !strings.HasSuffix(s, "[Run and job summary](https://run/1)\n") {
		t.Errorf("cut comment lacks its marker, note or run link:\n%s...%s", s[:300], s[len(s)-300:])
	}
}

func TestCIHardCutWhenErrorsAreHuge(t *testing.T) {
	r := ciResults()
	r.Steps[1].Error = strings.Repeat("x", 50_000)
	var b bytes.Buffer
	_ = WriteResultsMarkdown(&b, r, MarkdownOptions{MaxBytes: 10_000, RunURL: "https://run"})
	if b.Len() > 10_000 || !strings.Contains(b.String(), "cut at its size limit") {
		t.Errorf("hard cut failed: %d bytes", b.Len())
	}
}

func TestCIAnnotationsOf(t *testing.T) {
	ra := ResultsAnnotations(ciResults())
	if len(ra) != 1 || ra[0].Pos.Line != 14 || !strings.Contains(ra[0].Message, "fatal: relation") {
		t.Errorf("results annotations: %+v", ra)
	}
	pa := PlanAnnotations(ciPlan(), false)
	if len(pa) != 1 || pa[0].Level != AnnotationWarning || pa[0].Pos.Line != 30 {
		t.Errorf("plan annotations: %+v", pa)
	}
	if da := PlanAnnotations(ciPlan(), true); len(da) != 3 {
		t.Errorf("drift annotations: %+v", da)
	}
	pr := ProblemAnnotations(spec.Problems{{Pos: spec.Pos{File: "k.yaml", Line: 3, Col: 9}, Path: "steps.0.helm.chart", Message: "chart is required", Hint: "set helm.chart"}})
	if len(pr) != 1 || pr[0].Message != "chart is required (set helm.chart)" || pr[0].Title != "khook: invalid spec at steps.0.helm.chart" {
		t.Errorf("problem annotations: %+v", pr)
	}
}

func TestCIJUnit(t *testing.T) {
	var b bytes.Buffer
	r := ciResults()
	r.Steps[1].LogTail = append(r.Steps[1].LogTail, "bell\x07 and <tags> & \"quotes\"")
	if err := WriteJUnit(&b, JUnitOfResults(r, "prod-eu")); err != nil {
		t.Fatal(err)
	}
	golden(t, "ci-junit-results.xml", b.Bytes())
	var back JUnitSuites
	if err := xml.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatalf("JUnit does not parse back: %v", err)
	}
	s := back.Suites[0]
	if s.Tests != 3 || s.Failures != 1 || s.Skipped != 1 || s.Cases[1].Failure == nil ||
		!strings.Contains(s.Cases[1].Failure.Text, "<tags> & \"quotes\"") {
		t.Errorf("parsed back: %+v", s)
	}
	b.Reset()
	back = JUnitSuites{}
	_ = WriteJUnit(&b, JUnitOfPlan(ciPlan(), "prod-eu", true))
	if err := xml.Unmarshal(b.Bytes(), &back); err != nil || back.Failures != 2 || back.Skipped != 1 {
		t.Errorf("drift JUnit: failures %d skipped %d err %v", back.Failures, back.Skipped, err)
	}
	b.Reset()
	back = JUnitSuites{}
	_ = WriteJUnit(&b, JUnitOfProblems("demo", "", spec.Problems{{Path: "metadata.name", Message: "name is required"}}))
	if err := xml.Unmarshal(b.Bytes(), &back); err != nil || back.Failures != 1 || back.Suites[0].Cases[0].Name != "metadata.name" {
		t.Errorf("problems JUnit: %+v %v", back, err)
	}
}

func TestCITerraformReport(t *testing.T) {
	var b bytes.Buffer
	p := ciPlan()
	p.Steps = append(p.Steps, model.PlanStep{Name: "old", Action: model.ActionDelete}, model.PlanStep{Name: "seed", Action: model.ActionRun})
	_ = WriteTerraformReport(&b, TerraformReportOf(p))
	if got, want := b.String(), `{"create":1,"update":1,"delete":1}`+"\n"; got != want {
		t.Errorf("got %s want %s", got, want)
	}
}
