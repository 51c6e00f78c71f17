// Package chartsrc serves khook's test charts (test/testdata/charts) the ways
// users get charts: a local directory, an HTTP chart repository, and an OCI
// registry, with optional basic auth. Every server listens on a loopback
// port and stops when the test ends.
package chartsrc

import (
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"

	"github.com/khook/khook/test/reporoot"
)

// Version is the version of every test chart.
const Version = "0.1.0"

// Auth is a username and password; the zero value means no authentication.
type Auth struct{ Username, Password string }

// ChartDir returns the absolute path of the test chart called name (demo,
// withcrd, failhook, caps).
func ChartDir(name string) string {
	return filepath.Join(reporoot.MustDir(), "test", "testdata", "charts", name)
}

// Package packages the test chart called name into dir with the Helm SDK and
// returns the path of the .tgz.
func Package(t testing.TB, name, dir string) string {
	t.Helper()
	ch, err := loader.Load(ChartDir(name))
	if err != nil {
		t.Fatalf("chartsrc: cannot load chart %s: %v", name, err)
	}
	path, err := chartutil.Save(ch, dir)
	if err != nil {
		t.Fatalf("chartsrc: cannot package chart %s: %v", name, err)
	}
	return path
}

// WriteFiles writes files (path relative to dir → text) under dir, making
// the folders they need.
func WriteFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, text := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(text), Mode: 0o644}
	}
	if err := os.CopyFS(dir, fsys); err != nil {
		t.Fatalf("chartsrc: cannot write files: %v", err)
	}
}
