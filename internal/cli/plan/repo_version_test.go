package plan

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	repo "helm.sh/helm/v4/pkg/repo/v1"

	"github.com/khook/khook/model"
	"github.com/khook/khook/test/chartsrc"
)

// TestLivePlanDiffsANewRepositoryChartVersion: a helm step whose pinned
// version moves to one that is not installed yet is fetched as apply would
// fetch it, rendered and diffed — not reported "diff: unavailable".
func TestLivePlanDiffsANewRepositoryChartVersion(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var w writes
	c := w.clients(t)
	ns := testCluster.Namespace(t)

	// A repository with demo 0.1.0 and 0.2.0; their ConfigMaps carry the
	// chart version, so the new version renders differently.
	dir := t.TempDir()
	for _, version := range []string{"0.1.0", "0.2.0"} {
		ch, err := loader.Load(chartsrc.ChartDir("demo"))
		if err != nil {
			t.Fatal(err)
		}
		ch.Metadata.Version = version
		for _, tpl := range ch.Templates {
			if tpl.Name == "templates/configmap.yaml" {
				tpl.Data = append(tpl.Data, []byte("  chartVersion: {{ .Chart.Version | quote }}\n")...)
			}
		}
		if _, err := chartutil.Save(ch, dir); err != nil {
			t.Fatal(err)
		}
	}
	idx, err := repo.IndexDirectory(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.WriteFile(filepath.Join(dir, "index.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()

	specFile := filepath.Join(t.TempDir(), "khook.yaml")
	spec := `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: repo-version
steps:
  - name: demo
    helm:
      chart: demo
      repo: ` + srv.URL + `
      version: ${V}
      namespace: ` + ns + `
`
	if err := os.WriteFile(specFile, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	files := []string{specFile}
	applyRun(t, ctx, c, files, "V=0.1.0")

	before := w.n.Load()
	p, code := planRun(t, ctx, c, true, files, "V=0.2.0")
	if w.n.Load() != before {
		t.Errorf("plan --diff sent %d writes", w.n.Load()-before)
	}
	s := step(p, "demo")
	if s.Action != model.ActionUpgrade || code != 2 {
		t.Fatalf("demo: %s (exit %d), want upgrade (exit 2); reason %q", s.Action, code, s.Reason)
	}
	if strings.HasPrefix(s.DiffNote, "unavailable") || !strings.Contains(s.Diff, `+  chartVersion: 0.2.0`) {
		t.Errorf("demo diff note %q, diff:\n%s\nwant the new chart version's change", s.DiffNote, s.Diff)
	}
}
