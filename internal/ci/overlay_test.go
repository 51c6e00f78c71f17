package ci

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/internal/ci/github/githubtest"
)

// The file input with several lines is a base and its overlays, merged in
// order; a problem in the overlay is annotated on the overlay's line.
func TestFileInputOverlays(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	e := newGHEnv(t, srv.URL, map[string]string{"INPUT_COMMAND": "validate", "INPUT_FILE": "khook.yaml\nprod.yaml"})
	ws := filepath.Join(e.dir, "workspace")
	os.WriteFile(filepath.Join(ws, "prod.yaml"), []byte("# prod\nsteps:\n  - name: settings\n    apply:\n      waitFor: cel=object.data\n"), 0o644)
	code, out, _ := run(t, e.environ, nil)
	want := "::error file=prod.yaml,line=5,col=16,"
	if code != 2 || !strings.Contains(out, want) || !strings.Contains(out, "steps.0.apply.waitFor: cel=object.data: the expression evaluates to dyn, not a bool") {
		t.Errorf("exit %d, want 2 and an annotation %q:\n%s", code, want, out)
	}
	os.WriteFile(filepath.Join(ws, "prod.yaml"), []byte("steps:\n  - name: settings\n    apply:\n      waitFor: ready\n"), 0o644)
	if code, out, _ := run(t, e.environ, nil); code != 0 {
		t.Errorf("valid overlay: exit %d\n%s", code, out)
	}
}
