package command

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/khook/khook/spec"
)

// Files lists the spec, var files, a chart's every file, what a
// kustomization's render reads (its base outside its directory, not a
// README beside it), and skips the missing file of a step when: excludes.
func TestFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("khook.yaml", `apiVersion: khook.io/v1
kind: Khook
metadata: {name: f}
steps:
  - name: chart
    helm: {chart: ./chart, valuesFrom: [{file: values.yaml}]}
  - name: k
    apply: {manifests: [{kustomize: ./overlay}]}
  - name: gone
    when: "false"
    apply: {manifests: [{file: missing.yaml}]}
`)
	write("vars.yaml", "A: b\n")
	write("values.yaml", "x: 1\n")
	write("chart/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n")
	write("chart/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
	write("base/kustomization.yaml", "resources: [cm.yaml]\n")
	write("base/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: k}\n")
	write("base/README.md", "not read\n")
	write("overlay/kustomization.yaml", "resources: [../base]\nnamePrefix: p-\n")
	write("unrelated.yaml", "a: b\n")
	s, err := spec.Load(spec.LoadOptions{Files: []string{filepath.Join(dir, "khook.yaml")}, VarFiles: []string{filepath.Join(dir, "vars.yaml")}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Files(s, []string{filepath.Join(dir, "vars.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range got {
		got[i], _ = filepath.Rel(dir, p)
	}
	want := []string{"base/cm.yaml", "base/kustomization.yaml", "chart/Chart.yaml", "chart/templates/cm.yaml", "khook.yaml", "overlay/kustomization.yaml", "values.yaml", "vars.yaml"}
	if !slices.Equal(got, want) {
		t.Errorf("files:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
