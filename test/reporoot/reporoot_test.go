package reporoot

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDirFromWorkingDirectory: under -trimpath (make test) this file's path
// is not a real one, so the root comes from the working directory go test
// starts in; without it, from the file. Either way it is the module's root.
func TestDirFromWorkingDirectory(t *testing.T) {
	d, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d, "test", "reporoot", "reporoot.go")); err != nil {
		t.Fatalf("Dir() = %s, which does not hold test/reporoot: %v", d, err)
	}
	t.Chdir(t.TempDir())
	if d2, err := Dir(); err != nil || d2 != d {
		t.Errorf("after a chdir Dir() = %q, %v; want %q: the starting directory is the one that counts", d2, err, d)
	}
}
