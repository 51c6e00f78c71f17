package faults

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/state"
)

// These tests take the package's API server away: none runs in parallel,
// and Go starts the parallel tests of this package only after them.

func outageSpec(t *testing.T) (string, string) {
	t.Helper()
	spec, err := filepath.Abs(filepath.Join("testdata", "outage.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return spec, kc.Namespace(t)
}

// record reads the run's state record (the API server must be up).
func record(t *testing.T, ns string) *state.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec, err := state.NewStore(kc.Client, state.Ref{Namespace: ns, Name: "khook-state-faults-outage"}).Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rec == nil {
		t.Fatalf("no state record in %s", ns)
	}
	return rec
}

func restart(t *testing.T) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	down, err := kc.RestartAPIServer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return down
}

// The API server restarts while a wait step watches a pod: the wait resumes
// its watch once the server is back, the run is green within the step
// timeout, and the record is written.
func TestAPIServerRestartMidWait(t *testing.T) {
	spec, ns := outageSpec(t)
	r := start(t, spec, "", []string{"NS=" + ns, "RELEASE=false", "READY_AFTER=20s"})
	awaitWaiting(t, r, "ready", time.Minute, "pod/late")
	down := restart(t)
	back := time.Now()
	out := r.wait(t)
	t.Logf("limit: API server down %s (restart); khook finished %s after it was back, %s in all (step timeout 2m); exit %d",
		down.Round(time.Millisecond), time.Since(back).Round(time.Millisecond), out.Took.Round(time.Millisecond), out.Code)
	expectGreen(t, out, ns, "pod", "ready")
}

// The API server restarts while Helm waits for the release's pods: Helm's
// status watcher re-lists, the release ends deployed, the record is written.
func TestAPIServerRestartMidHelm(t *testing.T) {
	spec, ns := outageSpec(t)
	r := start(t, spec, "", []string{"NS=" + ns, "READY_AFTER=20s"})
	// Helm waits once khook names a pod of the release's Deployment
	// unready; pending-install is written before Helm creates anything.
	awaitWaiting(t, r, "release", 2*time.Minute, "Deployment "+ns+"/", ": pod ")
	down := restart(t)
	back := time.Now()
	out := r.wait(t)
	t.Logf("limit: API server down %s (restart); khook finished %s after it was back, %s in all (step timeout 2m); exit %d; release %v",
		down.Round(time.Millisecond), time.Since(back).Round(time.Millisecond), out.Took.Round(time.Millisecond), out.Code, releaseStatuses(t, ns, "app"))
	t.Logf("step release: %s", out.step(t, "release").Detail)
	expectGreen(t, out, ns, "pod", "ready", "release")
	if got := last(releaseStatuses(t, ns, "app")); got != "v1=deployed" {
		t.Errorf("release = %s, want v1=deployed", got)
	}
}

func expectGreen(t *testing.T, out result, ns string, steps ...string) {
	t.Helper()
	if out.Code != 0 || out.Results.Status != model.RunOK {
		t.Fatalf("exit %d, run %s; want 0, succeeded\n%s", out.Code, out.Results.Status, out.dump())
	}
	rec := record(t, ns)
	if rec.RunStatus != state.RunSucceeded {
		t.Errorf("record run status %s, want %s", rec.RunStatus, state.RunSucceeded)
	}
	for _, s := range steps {
		if st := rec.Steps[s]; st.Status != string(model.StatusOK) {
			t.Errorf("record: step %s is %q, want ok", s, st.Status)
		}
	}
}

// The API server is gone for longer than the step timeout: the step fails
// at its timeout naming the API server and why, the run exits 1 promptly
// (no hang), and says whether the record could be written. Once the server
// is back the record shows the run did not succeed, so the next run redoes
// the step.
func TestAPIServerGoneLongerThanTheStepTimeout(t *testing.T) {
	spec, ns := outageSpec(t)
	r := start(t, spec, "", []string{"NS=" + ns, "RELEASE=false", "READY_AFTER=1h", "TIMEOUT=20s"})
	awaitWaiting(t, r, "ready", time.Minute, "pod/late")
	stopped := time.Now()
	if err := kc.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	t.Logf("the API server took %s to stop", time.Since(stopped).Round(time.Millisecond))
	out := r.wait(t)
	took := time.Since(stopped)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := kc.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	st := out.step(t, "ready")
	t.Logf("limit: khook exited %s after the API server went away (step timeout 20s); exit %d; step ready: %s; run: %s (%s)\nstderr:\n%s",
		took.Round(time.Millisecond), out.Code, st.Error, out.Results.Status, out.Results.FailureReason, out.Stderr)
	if out.Code != 1 || st.Status != model.StatusFailed {
		t.Fatalf("exit %d, step %s; want 1, failed\n%s", out.Code, st.Status, out.dump())
	}
	if took > 90*time.Second {
		t.Errorf("khook exited %s after the outage began; want soon after the 20s step timeout, no hang", took)
	}
	for _, w := range []string{"timed out after 20s waiting for condition=Ready on pod/late", "the API server at https://127.0.0.1:", "has been unreachable for the last", "connection refused"} {
		if !strings.Contains(st.Error, w) {
			t.Errorf("step error lacks %q: %s", w, st.Error)
		}
	}
	rec := record(t, ns)
	t.Logf("record after the outage: run %s, steps %+v", rec.RunStatus, rec.Steps)
	if !strings.Contains(out.Results.Error, "the run's outcome could not be recorded") {
		t.Errorf("the run does not say its record could not be written: %q", out.Results.Error)
	}
	if rec.RunStatus == state.RunSucceeded || rec.Steps["ready"].Status == string(model.StatusOK) {
		t.Errorf("record says the run or step ready succeeded: %+v", rec)
	}
}
