package helmstep

import (
	"testing"
	"time"

	rcommon "helm.sh/helm/v4/pkg/release/common"
	rel "helm.sh/helm/v4/pkg/release/v1"

	"github.com/khook/khook/runner/chartsource"
	"github.com/khook/khook/spec"
)

// StaleAfter: twice the longer of the step's and helm's default timeout,
// plus the clock-skew margin.
func TestStaleAfter(t *testing.T) {
	for _, tc := range []struct{ step, want time.Duration }{
		{0, 11 * time.Minute},
		{time.Minute, 11 * time.Minute},
		{5 * time.Minute, 11 * time.Minute},
		{20 * time.Minute, 41 * time.Minute},
	} {
		if got := StaleAfter(tc.step); got != tc.want {
			t.Errorf("StaleAfter(%s) = %s, want %s", tc.step, got, tc.want)
		}
	}
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	pending := func(age time.Duration) *rel.Release {
		return &rel.Release{Name: "r", Namespace: "ns", Version: 2, Info: &rel.Info{Status: rcommon.StatusPendingUpgrade, LastDeployed: now.Add(-age)}}
	}
	if why, ok := (recoveryPolicy{lockHeld: held}).mayRecover(pending(time.Second), 5*time.Minute, now); !ok {
		t.Errorf("with the lock held a fresh pending revision is not recovered: %s", why)
	}
	if why, ok := (recoveryPolicy{}).mayRecover(pending(10*time.Minute), 5*time.Minute, now); ok {
		t.Errorf("without the lock a 10m old pending revision is recovered: %s", why)
	} else {
		mustContain(t, "refusal", why, "pending for 10m0s", "roll it back or uninstall it", "older than 11m0s", "state: block")
	}
	if why, ok := (recoveryPolicy{}).mayRecover(pending(12*time.Minute), 5*time.Minute, now); !ok {
		t.Errorf("without the lock a 12m old pending revision is not recovered: %s", why)
	} else {
		mustContain(t, "reason", why, "12m0s old", "(11m0s)")
	}
}

func held() bool { return true }

// markPending rewrites the release's latest revision as an interrupted
// operation leaves it (the e2e tests kill a real one).
func (f *fixture) markPending(name string, status rcommon.Status, age time.Duration) {
	f.t.Helper()
	sess, last, err := f.exec.open(name, f.ns)
	if err != nil {
		f.t.Fatal(err)
	}
	last.Info.Status = status
	last.Info.LastDeployed = time.Now().Add(-age)
	if err := sess.cfg.Releases.Update(last); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) withLock() *fixture {
	g := *f
	g.exec = New(f.clients, f.baseDir, f.redactor, WithStateLock(held))
	f.t.Cleanup(func() { _ = g.exec.Close() })
	return &g
}

// A never-deployed release left pending-install is uninstalled and installed
// afresh when the run holds the state lock; without the lock a fresh pending
// revision keeps the error and an old one is recovered.
func TestRecoverPendingInstall(t *testing.T) {
	f := newFixture(t)
	locked := f.withLock()
	st := f.step("stuck", spec.Helm{Chart: "./charts/demo"})
	f.run(st, stepTimeout)
	f.markPending("stuck", rcommon.StatusPendingInstall, 0)

	_, err := f.try(st, stepTimeout)
	if err == nil {
		t.Fatal("without the lock a fresh pending-install was recovered")
	}
	mustContain(t, "error", err.Error(), "release stuck in namespace "+f.ns+" is pending-install at revision 1", "roll it back or uninstall it")

	out := locked.run(st, stepTimeout)
	t.Log(out.Detail)
	mustContain(t, "detail", out.Detail, "recovered: release stuck was pending-install at revision 1 and was never deployed, so khook uninstalled it",
		"state lock", "; then installed release stuck revision 1")
	if s := f.status("stuck"); s != rcommon.StatusDeployed {
		t.Errorf("status after recovery = %s, want deployed", s)
	}
	if out.Writes == 0 {
		t.Error("the recovery counted no writes")
	}

	// Without the lock, once the revision is older than StaleAfter.
	f.markPending("stuck", rcommon.StatusPendingInstall, StaleAfter(0)+time.Minute)
	out = f.run(st, stepTimeout)
	mustContain(t, "detail", out.Detail, "recovered: release stuck was pending-install", "12m0s old")
	if s := f.status("stuck"); s != rcommon.StatusDeployed {
		t.Errorf("status after recovery = %s, want deployed", s)
	}
}

// A release left pending-upgrade is rolled back to its last deployed
// revision, then upgraded to what the step asks for.
func TestRecoverPendingUpgrade(t *testing.T) {
	f := newFixture(t).withLock()
	st := f.step("halfway", spec.Helm{Chart: "./charts/demo", Wait: true, Values: map[string]any{"greeting": "one"}})
	f.run(st, stepTimeout)
	st.Helm.Values = map[string]any{"greeting": "two"}
	f.run(st, stepTimeout)
	f.markPending("halfway", rcommon.StatusPendingUpgrade, 0)
	// The revision before the pending one is superseded, as after a real
	// upgrade that was interrupted then re-marked: take revision 1 back to deployed.
	sess, _, err := f.exec.open("halfway", f.ns)
	if err != nil {
		t.Fatal(err)
	}
	r1, err := sess.cfg.Releases.Get("halfway", 1)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := chartsource.AsRelease(r1)
	first.Info.Status = rcommon.StatusDeployed
	if err := sess.cfg.Releases.Update(first); err != nil {
		t.Fatal(err)
	}

	st.Helm.Values = map[string]any{"greeting": "three"}
	out := f.run(st, stepTimeout)
	t.Log(out.Detail)
	mustContain(t, "detail", out.Detail, "recovered: release halfway was pending-upgrade at revision 2, so khook rolled it back to revision 1, the last deployed",
		"; then upgraded release halfway to revision 4")
	if s := f.status("halfway"); s != rcommon.StatusDeployed {
		t.Errorf("status after recovery = %s, want deployed", s)
	}
	if got := f.configMap("halfway-config")["greeting"]; got != "three" {
		t.Errorf("ConfigMap greeting = %q, want three", got)
	}
}
