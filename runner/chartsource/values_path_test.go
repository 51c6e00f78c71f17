package chartsource

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/khook/khook/redact"
	"github.com/khook/khook/spec"
)

// valuesFrom {file, path} takes the values at a path inside a YAML file
// (a Flux HelmRelease's spec.values), merged in order with the rest.
func TestValuesFromFilePath(t *testing.T) {
	dir := t.TempDir()
	hr := "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nspec:\n  values:\n    replicas: 2\n    image: {tag: v1}\n  empty:\n  list: [a]\n"
	if err := os.WriteFile(filepath.Join(dir, "hr.yaml"), []byte(hr), 0o644); err != nil {
		t.Fatal(err)
	}
	l := &ValuesLoader{baseDir: dir, redactor: redact.New()}
	got, err := l.Load(context.Background(), &spec.Helm{
		ValuesFrom: []spec.Source{{File: "hr.yaml", Path: "spec.values"}, {File: "hr.yaml", Path: "spec.empty"}},
		Values:     map[string]any{"image": map[string]any{"pull": "Always"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"replicas": float64(2), "image": map[string]any{"tag": "v1", "pull": "Always"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("values (-want +got):\n%s", d)
	}
	for path, msg := range map[string]string{
		"spec.nope":       "valuesFrom[0] file hr.yaml has no nope (path spec.nope)",
		"spec.list":       "valuesFrom[0] file hr.yaml: spec.list is not a map of values",
		"spec.values.x.y": "valuesFrom[0] file hr.yaml has no x (path spec.values.x.y)",
		"kind.x":          "valuesFrom[0] file hr.yaml has no map at x (path kind.x)",
	} {
		_, err := l.Load(context.Background(), &spec.Helm{ValuesFrom: []spec.Source{{File: "hr.yaml", Path: path}}})
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("path %s: %v, want %q", path, err, msg)
		}
	}
}
