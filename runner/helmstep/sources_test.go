package helmstep

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/registry"
	repo "helm.sh/helm/v4/pkg/repo/v1"

	"github.com/khook/khook/test/chartsrc"
)

// chartRepo is an HTTP chart repository behind basic auth, serving index.yaml
// and packages under /charts/ (a repository URL with a path). Unlike
// chartsrc.NewHTTPRepo it serves any versions of a chart: the first chart is
// listed with a relative URL, the others with absolute ones.
type chartRepo struct {
	URL        string // without credentials
	User, Pass string
}

func serveChartRepo(t testing.TB, user, pass string, charts ...*chartv2.Chart) *chartRepo {
	t.Helper()
	dir := t.TempDir()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String() + "/charts"
	idx := repo.NewIndexFile()
	for i, ch := range charts {
		p := packageChart(t, ch, dir)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		url := ""
		if i > 0 {
			url = base
		}
		if err := idx.MustAdd(ch.Metadata, filepath.Base(p), url, "sha256:"+hex.EncodeToString(sum[:])); err != nil {
			t.Fatal(err)
		}
	}
	idx.SortEntries()
	if err := idx.WriteFile(filepath.Join(dir, "index.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := http.StripPrefix("/charts/", http.FileServer(http.Dir(dir)))
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
			w.Header().Set("WWW-Authenticate", `Basic realm="charts"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		files.ServeHTTP(w, r)
	})
	srv.Start()
	t.Cleanup(srv.Close)
	return &chartRepo{URL: base, User: user, Pass: pass}
}

// pushChart pushes a chart (any name and version) to a harness registry
// as <host>/charts/<name>:<version> and returns its manifest digest.
func pushChart(t testing.TB, reg *chartsrc.OCIRegistry, ch *chartv2.Chart) string {
	t.Helper()
	data, err := os.ReadFile(packageChart(t, ch, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	ref := fmt.Sprintf("%s/charts/%s:%s", reg.Host, ch.Name(), ch.Metadata.Version)
	res, err := reg.Client(t).Push(data, ref, registry.PushOptStrictMode(true))
	if err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	return res.Manifest.Digest
}
