package report

import (
	"testing"
	"time"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func sampleResults() *model.Results {
	return &model.Results{
		Name: "demo", Command: "apply", Status: model.RunFailed, FailureReason: model.ReasonStepFailed,
		StartedAt: t0, DurationMs: 62_300,
		Steps: []model.StepResult{
			{Name: "cilium", Type: "helm", Status: model.StatusOK, Attempts: 1, DurationMs: 4200, Detail: "upgraded release cilium to revision 4", Pos: spec.Pos{File: "khook.yaml", Line: 7, Col: 5},
				Changes: []model.Change{{Action: model.DidUpgrade, Kind: model.KindRelease, Namespace: "kube-system", Name: "cilium"}}},
			{Name: "seed", Type: "job", Status: model.StatusFailed, Attempts: 3, DurationMs: 58_000, Needs: []string{"cilium"},
				Error: "job seed failed: pod seed-x7k2 exited with code 1", LogTail: []string{"connecting to db", "error: connection refused"}},
			{Name: "argocd", Type: "helm", Status: model.StatusSkipped, Needs: []string{"seed"}, SkipReason: "not run: step seed failed"},
			{Name: "extras", Type: "apply", Status: model.StatusSkipped, Skip: spec.SkipWhen, SkipReason: `excluded: when vars.ENV == "prod" is false`},
		},
	}
}

func TestWriteResultsTable(t *testing.T) {
	var w writeCounter
	if err := WriteResultsTable(&w, sampleResults()); err != nil {
		t.Fatal(err)
	}
	if w.writes != 1 {
		t.Errorf("WriteResultsTable made %d writes, want 1", w.writes)
	}
	golden(t, "results-table.txt", w.Bytes())
}

func TestWriteResultsJSON(t *testing.T) {
	var w writeCounter
	if err := WriteJSON(&w, sampleResults()); err != nil {
		t.Fatal(err)
	}
	golden(t, "results.json", w.Bytes())
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second:                "0ms",
		850 * time.Millisecond:      "850ms",
		4200 * time.Millisecond:     "4.2s",
		62 * time.Second:            "1m02s",
		2*time.Hour + 5*time.Minute: "2h05m",
	} {
		if got := model.FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// runEvents is the event stream of sampleResults' run.
func runEvents() []model.Event {
	r := sampleResults()
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	return []model.Event{
		{Time: at(0), Kind: model.EventFinished, Step: "extras", Result: &r.Steps[3]},
		{Time: at(0), Kind: model.EventStarted, Step: "cilium", Attempt: 1},
		{Time: at(2), Kind: model.EventMessage, Step: "cilium", Message: "waiting for daemonset/cilium"},
		{Time: at(4), Kind: model.EventFinished, Step: "cilium", Result: &r.Steps[0]},
		{Time: at(4), Kind: model.EventStarted, Step: "seed", Attempt: 1},
		{Time: at(20), Kind: model.EventRetrying, Step: "seed", Attempt: 1, Message: "attempt 1 of 3 failed, retrying in 10s: job seed failed: pod seed-a1 exited with code 1"},
		{Time: at(30), Kind: model.EventStarted, Step: "seed", Attempt: 2},
		{Time: at(62), Kind: model.EventFinished, Step: "seed", Result: &r.Steps[1]},
		{Time: at(62), Kind: model.EventFinished, Step: "argocd", Result: &r.Steps[2]},
	}
}

func sampleInfos() []StepInfo {
	return []StepInfo{
		{Name: "cilium", Type: "helm", MaxAttempts: 1},
		{Name: "seed", Type: "job", MaxAttempts: 3},
		{Name: "argocd", Type: "helm", MaxAttempts: 2},
		{Name: "extras", Type: "apply", MaxAttempts: 1, Skip: spec.SkipWhen},
	}
}

func TestLogView(t *testing.T) {
	var w writeCounter
	v := NewLogView(&w, sampleInfos())
	events := runEvents()
	for _, ev := range events {
		v.Handle(ev)
	}
	if w.writes != len(events) {
		t.Errorf("LogView made %d writes for %d events, want one line per event", w.writes, len(events))
	}
	if err := v.Finish(sampleResults()); err != nil {
		t.Fatal(err)
	}
	golden(t, "progress-piped.txt", w.Bytes())
}
