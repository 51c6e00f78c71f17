package helmstep

import (
	"path/filepath"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/action"
	helmkube "helm.sh/helm/v4/pkg/kube"
	rcommon "helm.sh/helm/v4/pkg/release/common"

	"github.com/khook/khook/spec"
)

// The release history decides: a failed release is upgraded, a pending one
// is refused with what to do, an uninstalled one kept in history is
// installed again in its place.
func TestHistoryDecidesInstallOrUpgrade(t *testing.T) {
	f := newFixture(t)
	failhook, err := filepath.Abs(filepath.Join("..", "..", "test", "testdata", "charts", "failhook"))
	if err != nil {
		t.Fatal(err)
	}
	st := f.step("hooked", spec.Helm{Chart: failhook})
	_, err = f.try(st, 20*time.Second)
	if err == nil {
		t.Fatal("an install whose post-install hook fails succeeded")
	}
	t.Log(err)
	mustContain(t, "error", err.Error(), "release hooked", "chart failhook", "install failed", "post-install")
	if s := f.status("hooked"); s != rcommon.StatusFailed {
		t.Fatalf("status after the failed install = %s, want failed", s)
	}

	st.Helm.Values = map[string]any{"fail": false}
	out := f.run(st, stepTimeout)
	mustContain(t, "detail", out.Detail, "upgraded release hooked to revision 2")

	// An interrupted operation leaves the release pending.
	sess, last, err := f.exec.open("hooked", f.ns)
	if err != nil {
		t.Fatal(err)
	}
	last.Info.Status = rcommon.StatusPendingUpgrade
	if err := sess.cfg.Releases.Update(last); err != nil {
		t.Fatal(err)
	}
	_, err = f.try(st, stepTimeout)
	if err == nil {
		t.Fatal("a pending release was upgraded")
	}
	mustContain(t, "error", err.Error(), "release hooked", "pending-upgrade at revision 2", "roll it back or uninstall it")
	last.Info.Status = rcommon.StatusDeployed
	if err := sess.cfg.Releases.Update(last); err != nil {
		t.Fatal(err)
	}

	// helm uninstall --keep-history: the name is taken by an uninstalled release.
	un := action.NewUninstall(sess.cfg)
	un.KeepHistory = true
	un.WaitStrategy, un.Timeout = helmkube.StatusWatcherStrategy, stepTimeout
	if _, err := un.Run("hooked"); err != nil {
		t.Fatal(err)
	}
	out = f.run(st, stepTimeout)
	mustContain(t, "detail", out.Detail, "installed release hooked")
	if s := f.status("hooked"); s != rcommon.StatusDeployed {
		t.Errorf("status after reinstall = %s, want deployed", s)
	}
}

func (f *fixture) status(release string) rcommon.Status {
	f.t.Helper()
	_, last, err := f.exec.open(release, f.ns)
	if err != nil || last == nil {
		f.t.Fatalf("release %s: %v", release, err)
	}
	return last.Info.Status
}
