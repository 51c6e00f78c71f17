package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/<name>, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs from the golden file (-want +got):\n%s", path, diff)
	}
}

// writeCounter records how many Write calls a renderer makes: every
// renderer must emit whole documents or lines per call.
type writeCounter struct {
	bytes.Buffer
	writes int
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// WriteString keeps io.WriteString from bypassing the count.
func (w *writeCounter) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

// GitHub's limit on a comment body, and the bound khook ci passes for it
// (internal/ci's githubCommentMaxBytes): the renderers take the bound
// they are given.
const (
	githubCommentChars    = 65536
	githubCommentMaxBytes = githubCommentChars - 1024
)
