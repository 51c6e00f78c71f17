package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/state"
	"github.com/khook/khook/test/chartsrc"
)

// A chart applied under a state record, then the same version re-published
// with other bytes: the same files compressed again, so the release's
// content is unchanged and the step plans unchanged. The record keeps the
// applied digest, and the drift run (the live plan) reports the chart
// re-published, naming both digests, in text and JSON.
func TestChartRepublishedDrift(t *testing.T) {
	ns := namespace(t)
	dir := t.TempDir()
	tgz := chartsrc.Package(t, "demo", dir)
	repo := chartsrc.ServeDir(t, chartsrc.Auth{}, dir)
	text := fmt.Sprintf("apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: moved}\nstate: {namespace: %[1]s}\nsteps:\n- name: app\n  helm:\n    namespace: %[1]s\n    chart: demo\n    repo: %[2]s\n    version: 0.1.0\n", ns, repo.URL)
	file := filepath.Join(t.TempDir(), "khook.yaml")
	must(t, os.WriteFile(file, []byte(text), 0o644))

	applied := chartsrc.FileDigest(t, tgz)
	expectSteps(t, applySpec(t, file), []want{{Name: "app", Status: model.StatusOK, Attempts: 1}})
	rec, err := state.NewStore(kc.Client, state.Ref{Namespace: ns, Name: "khook-state-moved"}).Load(context.Background())
	must(t, err)
	if e := rec.Steps["app"]; e.ChartDigest != applied || e.ChartVersion != "demo@0.1.0" {
		t.Fatalf("the state record keeps chart %q %q, want demo@0.1.0 %s", e.ChartVersion, e.ChartDigest, applied)
	}

	chartsrc.Recompress(t, tgz)
	repo.Reindex(t)
	served := chartsrc.FileDigest(t, tgz)
	if served == applied {
		t.Fatal("recompressing the chart left its bytes as they were")
	}
	st := planJSON(t, nil, file).Steps[0]
	want := model.ChartMoved{Version: "demo@0.1.0", Applied: applied, Served: served}
	if st.Action != model.ActionUnchanged || st.ChartMoved == nil || *st.ChartMoved != want || !strings.Contains(st.Reason, want.String()) {
		t.Errorf("plan: %s %q chartMoved %+v, want unchanged with %+v", st.Action, st.Reason, st.ChartMoved, want)
	}
	out := khook(t, invocation{Args: []string{"plan", "-f", file}})
	if !strings.Contains(out.Stdout, applied+" in the state record, "+served+" now") {
		t.Errorf("the plan text does not name both digests:\n%s", out.Stdout)
	}
}
