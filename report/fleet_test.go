package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/khook/khook/model"
)

// legOf is a leg with a plan of three steps; diff varies its content, so
// legs with the same diff have identical plans.
func legOf(cluster string, wave int, diff string, changes bool) *model.Leg {
	p := &model.Plan{Name: "demo", Identifier: cluster, Changes: changes}
	action := model.ActionUnchanged
	if changes {
		action = model.ActionCreate
	}
	p.Steps = []model.PlanStep{
		{Name: "settings", Type: "apply", Action: action, Summary: "apply 1 object",
			Objects: []model.ObjectPlan{{Action: action, Kind: "ConfigMap", Namespace: "demo", Name: "settings", Desired: "sha256:" + fmt.Sprint(len(diff)), Live: "sha256:live-" + cluster}}},
		{Name: "cert-manager", Type: "helm", Action: model.ActionUnchanged, Summary: "chart cert-manager 1.14.0"},
		{Name: "ready", Type: "wait", Action: model.ActionWait, Summary: "wait for pods Ready"},
	}
	if changes {
		p.Steps[0].Diff = diff
	}
	p.Totals = model.PlanTotals(p.Steps)
	return &model.Leg{Kind: model.LegKind, Fleet: "platform", Cluster: cluster, Wave: wave, Command: "plan", Status: model.RunOK, Changes: changes,
		Fingerprint: "fp-" + cluster, SummaryURL: "https://ci.example/runs/1/" + cluster, Plan: p}
}

func failedLeg(cluster string, wave int) *model.Leg {
	return &model.Leg{Kind: model.LegKind, Fleet: "platform", Cluster: cluster, Wave: wave, Command: "plan", Status: model.RunFailed,
		FailureReason: model.ReasonClusterUnreachable, Error: "cannot reach the cluster at https://10.0.0.9:6443: connection refused", SummaryURL: "https://ci.example/runs/1/" + cluster}
}

func smallFleet() *model.FleetReport {
	members := []model.FleetMember{{Name: "staging", Wave: 1}, {Name: "prod-eu", Wave: 2}, {Name: "prod-us", Wave: 2}, {Name: "prod-ap", Wave: 2}, {Name: "dev", Wave: 1}, {Name: "lab", Wave: 1}}
	diff := "+apiVersion: v1\n+kind: ConfigMap\n+data: {tier: prod}\n"
	legs := []*model.Leg{
		legOf("staging", 1, "+apiVersion: v1\n+kind: ConfigMap\n+data: {tier: staging}\n", true),
		legOf("prod-eu", 2, diff, true), legOf("prod-us", 2, diff, true), legOf("prod-ap", 2, diff, true),
		legOf("dev", 1, "", false),
		failedLeg("elsewhere", 1), // not in the selection: ignored
	}
	// lab has no results file: failed.
	return model.BuildFleetReport("platform", "", 0, 0, members, legs)
}

func TestFleetReportGolden(t *testing.T) {
	rep := smallFleet()
	if rep.Totals != (model.FleetTotals{Clusters: 6, Changed: 4, Unchanged: 1, Failed: 1, Missing: 1}) {
		t.Errorf("totals = %+v", rep.Totals)
	}
	if len(rep.Groups) != 2 || rep.Groups[1].Title() != "prod-eu, prod-us, prod-ap: the same 1 change" {
		t.Errorf("groups = %+v", rep.Groups)
	}
	for name, render := range map[string]func(*writeCounter) error{
		"fleet-report.txt": func(w *writeCounter) error { return WriteFleetText(w, rep) },
		"fleet-report.md": func(w *writeCounter) error {
			return WriteFleetMarkdown(w, rep, FleetMarkdownOptions{RunURL: "https://ci.example/runs/1"})
		},
		"fleet-report.json": func(w *writeCounter) error { return WriteJSON(w, rep) },
		"fleet-comment.md": func(w *writeCounter) error {
			return WriteFleetComment(w, rep, CommentOptions{Marker: "<!-- khook fleet -->", Identifier: "fleet platform", Status: model.FleetCommentStatus(rep), Commit: "0123456789"}, "GitHub's 65,536 characters")
		},
	} {
		var w writeCounter
		if err := render(&w); err != nil {
			t.Fatal(err)
		}
		if w.writes != 1 {
			t.Errorf("%s: %d writes, want the document in one", name, w.writes)
		}
		golden(t, name, w.Bytes())
	}
}

// bigFleet is n legs: a tenth failed, a third with changes (every tenth
// change unique, the rest in a few groups, each with a large diff), the
// rest unchanged.
func bigFleet(n int) ([]model.FleetMember, []*model.Leg) {
	var members []model.FleetMember
	var legs []*model.Leg
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("cluster-%03d", i)
		wave := 1 + i%3
		members = append(members, model.FleetMember{Name: name, Wave: wave})
		switch {
		case i%10 == 0:
			legs = append(legs, failedLeg(name, wave))
		case i%3 == 0:
			variant := i % 7
			if i%10 == 3 {
				variant = i // unique
			}
			diff := strings.Repeat(fmt.Sprintf("+  key-%d: value for variant %d of this fleet's settings\n", variant, variant), 40+variant%50)
			legs = append(legs, legOf(name, wave, diff, true))
		default:
			legs = append(legs, legOf(name, wave, "", false))
		}
	}
	return members, legs
}

// A report over 300 legs stays under GitHub's comment limit, names every
// failed cluster, and says what it folded and cut.
func TestFleetReportFitsGitHub(t *testing.T) {
	members, legs := bigFleet(320)
	rep := model.BuildFleetReport("platform", "", 0, 0, members, legs)
	var b bytes.Buffer
	if err := WriteFleetComment(&b, rep, CommentOptions{Marker: "<!-- m -->", Identifier: "fleet platform", Status: model.FleetCommentStatus(rep), RunURL: "https://ci.example/runs/1", MaxBytes: githubCommentMaxBytes}, "GitHub's 65,536 characters"); err != nil {
		t.Fatal(err)
	}
	body := b.String()
	if n := len([]rune(body)); n >= githubCommentChars {
		t.Fatalf("the comment has %d characters, GitHub allows %d", n, githubCommentChars)
	}
	for _, row := range rep.Clusters {
		if row.Failed() && !strings.Contains(body, row.Cluster) {
			t.Errorf("failed cluster %s is not named", row.Cluster)
		}
	}
	for _, want := range []string{"clusters without changes folded into one line", "To stay within GitHub's 65,536 characters"} {
		if !strings.Contains(body, want) {
			t.Errorf("the comment does not say %q", want)
		}
	}
}

func TestFleetReportWaveGate(t *testing.T) {
	members := []model.FleetMember{{Name: "a", Wave: 1}, {Name: "b", Wave: 1}}
	legs := []*model.Leg{failedLeg("a", 1), legOf("b", 1, "", false)}
	if rep := model.BuildFleetReport("f", "", 1, 0, members, legs); !rep.Halted {
		t.Error("1 failure > maxFailures 0 does not halt")
	}
	if rep := model.BuildFleetReport("f", "", 1, 1, members, legs); rep.Halted {
		t.Error("1 failure <= maxFailures 1 halts")
	}
	if rep := model.BuildFleetReport("f", "", 1, 1, members, legs[1:]); rep.Halted || rep.Totals.Missing != 1 {
		t.Errorf("a missing leg is a failure within maxFailures 1: %+v", rep.Totals)
	}
}

func BenchmarkFleetReport500(b *testing.B) {
	members, legs := bigFleet(500)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		rep := model.BuildFleetReport("platform", "", 0, 0, members, legs)
		var out bytes.Buffer
		if err := WriteFleetComment(&out, rep, CommentOptions{Marker: "<!-- m -->", Identifier: "fleet platform", MaxBytes: githubCommentMaxBytes}, "GitHub's 65,536 characters"); err != nil {
			b.Fatal(err)
		}
		out.Reset()
		if err := WriteFleetMarkdown(&out, rep, FleetMarkdownOptions{MaxBytes: 1 << 20}); err != nil {
			b.Fatal(err)
		}
	}
}
