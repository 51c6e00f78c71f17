package scriptapply

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/khook/khook/test/chartsrc"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// copyTree copies the files under src to dst, keeping their modes (a
// script that runs another needs it executable).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, info.Mode().Perm())
	})
	if err != nil {
		t.Fatalf("Cannot copy %s: %v.", src, err)
	}
}

// copyChart stands a test chart (test/testdata/charts) in for a chart
// directory a script installs.
func copyChart(t *testing.T, name, dst string) {
	t.Helper()
	copyTree(t, chartsrc.ChartDir(name), dst)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// writeFiles writes files at their paths under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		path := filepath.Join(dir, name)
		must(t, os.MkdirAll(filepath.Dir(path), 0o755))
		must(t, os.WriteFile(path, []byte(text), 0o644))
	}
}
