package faults

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/khook/khook/model"
)

// lockTimeout lets a re-run wait out the Lease of a killed run (30s).
const lockTimeout = "--lock-timeout=90s"

func releaseSpec(t *testing.T) (string, string) {
	t.Helper()
	spec, err := filepath.Abs(filepath.Join("testdata", "release.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return spec, kc.Namespace(t)
}

// A run killed (SIGKILL) while its install waits leaves the release
// pending-install; the next run, holding the state lock, uninstalls it and
// installs afresh: green, one recovery message, the release deployed.
func TestKillMidInstallRecovers(t *testing.T) {
	t.Parallel()
	spec, ns := releaseSpec(t)
	r := start(t, spec, "", []string{"NS=" + ns, "NEVER_READY=true"})
	awaitReleaseStatus(t, r, ns, "app", "pending-install", time.Minute)
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := r.wait(t)
	t.Logf("killed run: exit %d; release %v", killed.Code, releaseStatuses(t, ns, "app"))

	out := apply(t, spec, []string{"NS=" + ns}, lockTimeout)
	t.Logf("re-run: exit %d in %s (waited for the dead run's lock)", out.Code, out.Took.Round(time.Millisecond))
	expectRecovered(t, out, "recovered: release app was pending-install at revision 1 and was never deployed, so khook uninstalled it",
		"then installed release app revision 1")
	if got := releaseStatuses(t, ns, "app"); strings.Join(got, ",") != "v1=deployed" {
		t.Errorf("release history after recovery = %v, want [v1=deployed]", got)
	}
}

// A run killed while its upgrade waits leaves pending-upgrade; the next run
// rolls back to the deployed revision, then upgrades.
func TestKillMidUpgradeRecovers(t *testing.T) {
	t.Parallel()
	spec, ns := releaseSpec(t)
	if out := apply(t, spec, []string{"NS=" + ns}); out.Code != 0 {
		t.Fatalf("install: exit %d\n%s", out.Code, out.dump())
	}
	r := start(t, spec, "", []string{"NS=" + ns, "NEVER_READY=true", "MSG=two"})
	awaitReleaseStatus(t, r, ns, "app", "pending-upgrade", time.Minute)
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := r.wait(t)
	t.Logf("killed run: exit %d; release %v", killed.Code, releaseStatuses(t, ns, "app"))

	out := apply(t, spec, []string{"NS=" + ns, "MSG=three"}, lockTimeout)
	t.Logf("re-run: exit %d in %s (waited for the dead run's lock)", out.Code, out.Took.Round(time.Millisecond))
	expectRecovered(t, out, "recovered: release app was pending-upgrade at revision 2, so khook rolled it back to revision 1, the last deployed",
		"then upgraded release app to revision 4")
	if got := last(releaseStatuses(t, ns, "app")); got != "v4=deployed" {
		t.Errorf("latest revision after recovery = %s, want v4=deployed (all: %v)", got, releaseStatuses(t, ns, "app"))
	}
}

// Without a state: block a fresh pending revision may belong to a live
// operation: khook keeps its error (exit 1) and leaves the release alone.
func TestPendingWithoutLockKeepsTheError(t *testing.T) {
	t.Parallel()
	spec, ns := releaseSpec(t)
	r := start(t, spec, "", []string{"NS=" + ns, "NEVER_READY=true", "STATE=false"})
	awaitReleaseStatus(t, r, ns, "app", "pending-install", time.Minute)
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r.wait(t)
	out := apply(t, spec, []string{"NS=" + ns, "STATE=false"})
	st := out.step(t, "app")
	t.Logf("re-run without state: exit %d: %s", out.Code, st.Error)
	if out.Code != 1 || st.Status != model.StatusFailed {
		t.Fatalf("exit %d, step %s; want 1, failed\n%s", out.Code, st.Status, out.dump())
	}
	for _, w := range []string{"release app in namespace " + ns + " is pending-install at revision 1", "roll it back or uninstall it", "older than 11m0s", "state: block"} {
		if !strings.Contains(st.Error, w) {
			t.Errorf("error lacks %q: %s", w, st.Error)
		}
	}
	if got := releaseStatuses(t, ns, "app"); strings.Join(got, ",") != "v1=pending-install" {
		t.Errorf("release after the refused run = %v, want it untouched [v1=pending-install]", got)
	}
}

// SIGTERM while an upgrade waits: khook cancels the step, Helm records the
// revision failed (not pending), the run exits 1 and the next run upgrades
// with no recovery needed.
func TestSigtermMidUpgradeLeavesFailed(t *testing.T) {
	t.Parallel()
	spec, ns := releaseSpec(t)
	if out := apply(t, spec, []string{"NS=" + ns}); out.Code != 0 {
		t.Fatalf("install: exit %d\n%s", out.Code, out.dump())
	}
	r := start(t, spec, "", []string{"NS=" + ns, "NEVER_READY=true", "MSG=two"})
	awaitReleaseStatus(t, r, ns, "app", "pending-upgrade", time.Minute)
	sent := time.Now()
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	out := r.wait(t)
	took := time.Since(sent)
	st := out.step(t, "app")
	t.Logf("SIGTERM: exit %d %s after the signal; step %s: %s; release %v", out.Code, took.Round(time.Millisecond), st.Status, st.Error, releaseStatuses(t, ns, "app"))
	if out.Code != 1 || out.Results.FailureReason != model.ReasonCancelled {
		t.Errorf("exit %d reason %q; want 1 %q\n%s", out.Code, out.Results.FailureReason, model.ReasonCancelled, out.dump())
	}
	if got := last(releaseStatuses(t, ns, "app")); got != "v2=failed" {
		t.Errorf("latest revision after SIGTERM = %s, want v2=failed", got)
	}

	next := apply(t, spec, []string{"NS=" + ns, "MSG=three"})
	if next.Code != 0 {
		t.Fatalf("next run: exit %d\n%s", next.Code, next.dump())
	}
	if d := next.step(t, "app").Detail; strings.Contains(d, "recovered") || !strings.Contains(d, "upgraded release app to revision 3") {
		t.Errorf("next run detail = %q; want a plain upgrade to revision 3", d)
	}
	if got := last(releaseStatuses(t, ns, "app")); got != "v3=deployed" {
		t.Errorf("latest revision = %s, want v3=deployed", got)
	}
}

// expectRecovered: exit 0, the step ok, and exactly one recovery message in
// everything the run printed.
func expectRecovered(t *testing.T, out result, wants ...string) {
	t.Helper()
	st := out.step(t, "app")
	t.Logf("detail: %s", st.Detail)
	if out.Code != 0 || st.Status != model.StatusOK {
		t.Fatalf("re-run: exit %d, step %s (%s); want 0, ok\n%s", out.Code, st.Status, st.Error, out.dump())
	}
	for _, w := range wants {
		if !strings.Contains(st.Detail, w) {
			t.Errorf("detail lacks %q", w)
		}
	}
	// Once in the results document (stdout), once in the progress (stderr).
	for what, text := range map[string]string{"results": out.Stdout, "progress": out.Stderr} {
		if n := strings.Count(text, "recovered: release app"); n != 1 {
			t.Errorf("%d recovery messages in the %s, want exactly 1\n%s", n, what, out.dump())
		}
	}
}
