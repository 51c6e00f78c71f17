package chartsrc

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"testing"
)

// Recompress writes the packaged chart tgz again at another compression
// level: the same chart, other bytes, as a version re-published without a
// change a release would show. Reindex the repository after it.
func Recompress(t testing.TB, tgz string) {
	t.Helper()
	data, err := os.ReadFile(tgz)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("chartsrc: %s is not gzip: %v", tgz, err)
	}
	tarball, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("chartsrc: cannot read %s: %v", tgz, err)
	}
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed) // a valid level: no error
	if _, err := zw.Write(tarball); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tgz, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// FileDigest is a packaged chart's digest as khook's plan shows it
// (sha256:<hex> of the file).
func FileDigest(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("sha256:%x", sha256.Sum256(data))
}
