package chartsrc

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"helm.sh/helm/v4/pkg/chart/v2/loader"

	"github.com/khook/khook/test/reporoot"
)

// RealChartsDir returns the public chart corpus vendored in
// test/testdata/real-charts (see its SOURCES.md): one folder per chart with
// its pinned packages and the upstream LICENSE.
func RealChartsDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(reporoot.MustDir(), "test", "testdata", "real-charts")
	if _, err := os.Stat(filepath.Join(dir, "SHA256SUMS")); err != nil {
		t.Fatalf("chartsrc: the public chart corpus is missing: %v (go run ./test/cmd/vendor-real-charts makes it)", err)
	}
	return dir
}

// RealChart returns the path of a packaged chart of the corpus, e.g.
// RealChart(t, dir, "metrics-server", "3.13.1").
func RealChart(t testing.TB, dir, name, version string) string {
	t.Helper()
	path := filepath.Join(dir, name, fmt.Sprintf("%s-%s.tgz", name, version))
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("chartsrc: the corpus has no %s %s: %v", name, version, err)
	}
	return path
}

// NewHTTPRepoFromFiles serves already packaged charts (.tgz paths) with an
// index, like NewHTTPRepo.
func NewHTTPRepoFromFiles(t testing.TB, auth Auth, tgzs ...string) *HTTPRepo {
	t.Helper()
	dir := t.TempDir()
	for _, src := range tgzs {
		if err := copyFile(src, filepath.Join(dir, filepath.Base(src))); err != nil {
			t.Fatalf("chartsrc: %v", err)
		}
	}
	return serveRepoDir(t, auth, dir)
}

// PushFile pushes an already packaged chart; it returns the reference
// without version, URL()+"/"+name.
func (r *OCIRegistry) PushFile(t testing.TB, tgz string) string {
	t.Helper()
	ch, err := loader.Load(tgz)
	if err != nil {
		t.Fatalf("chartsrc: cannot load %s: %v", tgz, err)
	}
	data, err := os.ReadFile(tgz)
	if err != nil {
		t.Fatal(err)
	}
	ref := fmt.Sprintf("%s/charts/%s:%s", r.Host, ch.Metadata.Name, ch.Metadata.Version)
	if _, err := r.Client(t).Push(data, ref); err != nil {
		t.Fatalf("chartsrc: cannot push %s: %v", ref, err)
	}
	return r.URL() + "/" + ch.Metadata.Name
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// CRDFromChart returns the CustomResourceDefinition name as the packaged
// chart ships it in its crds/ directory (subcharts' included).
func CRDFromChart(t testing.TB, tgz, name string) map[string]any {
	t.Helper()
	for _, obj := range chartCRDs(t, tgz) {
		if meta, _ := obj["metadata"].(map[string]any); meta != nil && meta["name"] == name {
			return obj
		}
	}
	t.Fatalf("chartsrc: %s has no CRD %s in crds/", tgz, name)
	return nil
}

// CRDNames lists the CRDs the packaged chart ships in crds/.
func CRDNames(t testing.TB, tgz string) []string {
	t.Helper()
	var names []string
	for _, obj := range chartCRDs(t, tgz) {
		if meta, _ := obj["metadata"].(map[string]any); meta != nil {
			if n, _ := meta["name"].(string); n != "" {
				names = append(names, n)
			}
		}
	}
	return names
}

func chartCRDs(t testing.TB, tgz string) []map[string]any {
	t.Helper()
	ch, err := loader.Load(tgz)
	if err != nil {
		t.Fatalf("chartsrc: cannot load %s: %v", tgz, err)
	}
	var out []map[string]any
	for _, f := range ch.CRDObjects() {
		for _, doc := range strings.Split(string(f.File.Data), "\n---") {
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(doc), &obj); err == nil && obj["kind"] == "CustomResourceDefinition" {
				out = append(out, obj)
			}
		}
	}
	return out
}
