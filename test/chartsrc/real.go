package chartsrc

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
)

// RealChartsEnv names a directory holding the public chart corpus: one
// folder per chart with its pinned packaged .tgz files, the upstream
// LICENSE, and a SOURCES.md at the top saying where each came from.
const RealChartsEnv = "KHOOK_REAL_CHARTS"

// RealChartsDir returns the public chart corpus: $KHOOK_REAL_CHARTS, or
// shared/real-charts beside the repository (where CI lays shared/ out). The
// corpus is third-party code, kept out of this repository. A test that
// needs it is skipped, saying where to put it, when it is absent.
func RealChartsDir(t testing.TB) string {
	t.Helper()
	if dir := os.Getenv(RealChartsEnv); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "SOURCES.md")); err != nil {
			t.Fatalf("chartsrc: %s=%s is not a chart corpus: %v", RealChartsEnv, dir, err)
		}
		return dir
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	for _, dir := range []string{
		filepath.Join(root, "..", "shared", "real-charts"),
		filepath.Join(root, "shared", "real-charts"),
	} {
		if _, err := os.Stat(filepath.Join(dir, "SOURCES.md")); err == nil {
			return dir
		}
	}
	t.Skipf("chartsrc: no public chart corpus: set %s to its directory, or lay it out as shared/real-charts beside the repository (see docs/real-charts.md)", RealChartsEnv)
	return ""
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
