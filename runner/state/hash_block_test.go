package state

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/khook/khook/spec"
)

// echo is a step type that exists only in this test: the state record
// hashes its block and the files it names without a line of its own.
type echo struct {
	Text string `json:"text"`
}

func (*echo) StepType() string { return "echo" }
func (*echo) Inputs() []spec.Input {
	return []spec.Input{{What: spec.InputManifest, Path: "echo.txt", Field: "echo.file"}}
}
func (*echo) ManifestSources() spec.Manifests     { return spec.Manifests{} }
func (*echo) CreatesNamespace() string            { return "" }
func (*echo) HelmRelease() (string, string, bool) { return "", "", false }
func (*echo) Undo(string) *spec.Delete            { return nil }

func TestHashOfATestOnlyStepType(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "echo.txt"), []byte("one"), 0o644)
	st := &spec.Step{Name: "hello", Other: &echo{Text: "hi"}}
	h1, err := Hash(st, dir)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "echo.txt"), []byte("two"), 0o644)
	h2, _ := Hash(st, dir)
	st.Other = &echo{Text: "ho"}
	h3, _ := Hash(st, dir)
	if h1 == h2 || h2 == h3 {
		t.Errorf("the hash must follow the block and its file: %s %s %s", h1, h2, h3)
	}
}
