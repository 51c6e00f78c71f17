package fleet

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/internal/cli/iostreams"
	"github.com/khook/khook/model"
	"github.com/khook/khook/report"
	"github.com/khook/khook/runner/command"
)

// writeLegs writes one results file per cluster under dir/<cluster>/, as
// download-artifact lays out one directory per artifact.
func writeLegs(t testing.TB, dir string, legs ...*model.Leg) {
	t.Helper()
	for _, l := range legs {
		p := filepath.Join(dir, l.Cluster, model.LegFileName(l.Cluster))
		os.MkdirAll(filepath.Dir(p), 0o755)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := report.WriteJSON(f, l); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}

func leg(cluster string, wave int, status string) *model.Leg {
	l := &model.Leg{Kind: model.LegKind, Fleet: "platform", Cluster: cluster, Wave: wave, Command: "plan", Status: status,
		Plan: &model.Plan{Name: "demo", Steps: []model.PlanStep{{Name: "ns", Type: "apply", Action: model.ActionUnchanged}}}}
	if status != model.RunOK {
		l.FailureReason, l.Error, l.Plan = model.ReasonClusterUnreachable, "cannot reach the cluster", nil
	}
	return l
}

func runReport(t testing.TB, opts ReportOptions) (string, error) {
	ios, out, _ := iostreams.Test("")
	opts.F = cmdutil.NewFactory(ios)
	if opts.Output == "" {
		opts.Output = cmdutil.OutputText
	}
	err := RunReport(&opts)
	return out.String(), err
}

// fleet report reads directories recursively; a cluster without results
// is failed; --wave gates on maxFailures.
func TestReportCommand(t *testing.T) {
	fleet := writeFleet(t, 5) // c000-c002 wave 1, c003-c004 wave 2, maxFailures 0
	res := t.TempDir()
	writeLegs(t, res, leg("c000", 1, model.RunOK), leg("c001", 1, model.RunOK), leg("c002", 1, model.RunOK), leg("c003", 2, model.RunFailed))
	out, err := runReport(t, ReportOptions{Fleet: fleet, Results: []string{res}, Output: cmdutil.OutputJSON})
	if cmdutil.CodeOf(err) != command.ExitFailure {
		t.Errorf("a failed and a missing cluster: %v, want exit 1", err)
	}
	var rep model.FleetReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Totals.Failed != 2 || rep.Totals.Missing != 1 || rep.Clusters[4].Outcome != model.FleetMissing {
		t.Errorf("report = %+v", rep.Totals)
	}
	if _, err := runReport(t, ReportOptions{Fleet: fleet, Results: []string{res}, Wave: 1}); err != nil {
		t.Errorf("wave 1 has no failures: %v", err)
	}
	out, err = runReport(t, ReportOptions{Fleet: fleet, Results: []string{res}, Wave: 2})
	if cmdutil.CodeOf(err) != command.ExitFailure || !strings.Contains(out, "The rollout halts") {
		t.Errorf("wave 2 (2 failed > 0): %v\n%s", err, out)
	}
}

// 500 legs read from disk, reported as the CI comment would be.
func BenchmarkReport500(b *testing.B) {
	fleet := writeFleet(b, 500)
	res := b.TempDir()
	for i := 0; i < 500; i++ {
		l := leg(fmt.Sprintf("c%03d", i), 2, model.RunOK)
		if i < 3 {
			l.Wave = 1
		}
		writeLegs(b, res, l)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := runReport(b, ReportOptions{Fleet: fleet, Results: []string{res}, Output: OutputMarkdown}); err != nil {
			b.Fatal(err)
		}
	}
}
