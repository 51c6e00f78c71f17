package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A base and an overlay merge into testdata/overlay/merged.golden
// (go test ./spec -run TestOverlayGolden -update rewrites it).
func TestOverlayGolden(t *testing.T) {
	files := []string{"testdata/overlay/base.yaml", "testdata/overlay/prod.yaml"}
	got, err := Render(LoadOptions{Files: files})
	if err != nil {
		t.Fatal(err)
	}
	golden := "testdata/overlay/merged.golden"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("merged spec differs from %s (-want +got):\n%s", golden, diff)
	}
	// The merged spec loads, and positions name the file each value came from.
	s, err := Load(LoadOptions{Files: files})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range s.Steps {
		names = append(names, st.Name)
	}
	if diff := cmp.Diff([]string{"cilium", "settings", "coredns-ready", "ingress"}, names); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	for path, want := range map[string]string{
		"steps.0.helm.chart":        "testdata/overlay/base.yaml:15:14",
		"steps.0.helm.version":      "testdata/overlay/prod.yaml:7:16",
		"steps.0.helm.namespace":    "testdata/overlay/base.yaml:9:14",
		"steps.0.helm.valuesFrom.1": "testdata/overlay/prod.yaml:10:11",
		"steps.3":                   "testdata/overlay/prod.yaml:16:5",
	} {
		if got := s.PosOf(path).String(); got != want {
			t.Errorf("%s at %s, want %s", path, got, want)
		}
	}
	if s.Files[1] != files[1] || len(s.Files) != 2 {
		t.Errorf("Files = %v", s.Files)
	}
}

// Problems in an overlay point at the overlay's file and line, all at once.
func TestOverlayProblemsNameTheOverlay(t *testing.T) {
	_, err := Load(LoadOptions{Files: []string{"testdata/overlay/base.yaml", "testdata/overlay/bad-overlay.yaml"}})
	for _, want := range []string{
		`testdata/overlay/bad-overlay.yaml:4:15: steps.0.helm.atomic:`,
		`testdata/overlay/bad-overlay.yaml:7:16: steps.1.apply.waitFor: cel=object.status: the expression evaluates to dyn, not a bool`,
		`testdata/overlay/bad-overlay.yaml:8:5: steps.2: $patch: delete names step "missing", which no earlier file defines`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error:\n%v\nwant it to contain\n%s", err, want)
		}
	}
}

func TestOverlayRules(t *testing.T) {
	const base = "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: t}\nsteps:\n" +
		"  - name: a\n    wait: {for: delete, on: pods/x}\n" +
		"  - name: b\n    needs: [a]\n    apply: {manifests: [{file: a.yaml}], namespace: one}\n"
	tests := []struct{ name, overlay, want string }{
		{"scalar wins", "metadata: {name: u}", "metadata: {name: u}\n"},
		{"needs append", "steps: [{name: b, needs: [c]}, {name: c, wait: {for: delete, on: pods/y}}]", "needs: [a, c]"},
		{"manifests append", "steps: [{name: b, apply: {manifests: [{file: b.yaml}]}}]", "manifests: [{file: a.yaml}, {file: b.yaml}]"},
		{"list replace directive", "steps: [{name: b, apply: {manifests: [{$patch: replace}, {file: c.yaml}]}}]", "manifests: [{file: c.yaml}]"},
		{"null removes", "steps: [{name: b, apply: {namespace: null}}]", "apply: {manifests: [{file: a.yaml}]}"},
		{"step replace", "steps: [{name: b, $patch: replace, wait: {for: delete, on: pods/z}}]", "- {name: b, wait: {for: delete, on: pods/z}}"},
		{"step delete", "steps: [{name: b, $patch: delete}]", "steps:\n  - name: a\n    wait: {for: delete, on: pods/x}\nx"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		b, o := filepath.Join(dir, "base.yaml"), filepath.Join(dir, "o.yaml")
		os.WriteFile(b, []byte(base), 0o644)
		os.WriteFile(o, []byte(tt.overlay), 0o644)
		got, err := Render(LoadOptions{Files: []string{b, o}})
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !strings.Contains(string(got)+"x", tt.want) {
			t.Errorf("%s: merged\n%s\nwant it to contain\n%s", tt.name, got, tt.want)
		}
	}
}

// An overlay that changes one user of an anchor leaves the others alone, and
// a third file merges on top of the first two.
func TestOverlayAnchorsAndThreeFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := write("base.yaml", "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: t}\n"+
		"x-w: &w {for: delete, on: pods/x}\nsteps:\n  - name: a\n    wait: *w\n  - name: b\n    wait: *w\n")
	two := write("two.yaml", "steps:\n  - name: a\n    wait: {on: pods/changed}\n")
	three := write("three.yaml", "steps:\n  - name: a\n    wait: {for: ready}\n")
	s, err := Load(LoadOptions{Files: []string{base, two, three}})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := s.Steps[0].Wait, s.Steps[1].Wait; a.On != "pods/changed" || a.For != "ready" || b.On != "pods/x" || b.For != "delete" {
		t.Errorf("a = %+v, b = %+v", a, b)
	}
	if got := s.PosOf("steps.0.wait.for").File; got != three {
		t.Errorf("steps.0.wait.for from %s, want %s", got, three)
	}
}

func TestOverlayExample(t *testing.T) {
	s, err := Load(LoadOptions{Files: []string{"../examples/overlays/base.yaml", "../examples/overlays/prod.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Steps) != 3 || s.Steps[2].Name != "settings-ready" || len(s.Steps[1].Apply.Manifests) != 2 || *s.Defaults.Retries != 3 {
		t.Errorf("merged example: %d steps, defaults %+v", len(s.Steps), s.Defaults)
	}
	if _, err := Load(LoadOptions{Files: []string{"../examples/overlays/base.yaml"}}); err != nil {
		t.Errorf("the base alone: %v", err)
	}
}

// Any overlay merges or fails with problems; it never panics.
func FuzzOverlay(f *testing.F) {
	for _, file := range []string{"testdata/overlay/prod.yaml", "testdata/overlay/bad-overlay.yaml", "../examples/overlays/prod.yaml"} {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("x-a: &a {name: cilium, $patch: replace}\nsteps: [*a, {name: z, needs: [{$patch: replace}]}]\n"))
	base, err := os.ReadFile("testdata/overlay/base.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		dir := t.TempDir()
		b, o := filepath.Join(dir, "base.yaml"), filepath.Join(dir, "o.yaml")
		os.WriteFile(b, base, 0o644)
		os.WriteFile(o, in, 0o644)
		_, _ = Render(LoadOptions{Files: []string{b, o}})
	})
}

// A base without steps still takes an overlay's steps, directives checked.
func TestOverlayStepsIntoEmptyBase(t *testing.T) {
	dir := t.TempDir()
	b, o := filepath.Join(dir, "base.yaml"), filepath.Join(dir, "o.yaml")
	os.WriteFile(b, []byte("apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: t}\n"), 0o644)
	os.WriteFile(o, []byte("steps:\n  - {name: a, wait: {for: delete, on: pods/x}}\n  - {name: gone, $patch: delete}\n"), 0o644)
	_, err := Load(LoadOptions{Files: []string{b, o}})
	if err == nil || !strings.Contains(err.Error(), `o.yaml:3:5: steps.1: $patch: delete names step "gone", which no earlier file defines`) {
		t.Fatalf("error: %v", err)
	}
}
