package chartsource

import (
	"strings"
	"testing"

	"github.com/khook/khook/spec"
	"github.com/khook/khook/test/chartsrc"
)

func TestSplitOCIRef(t *testing.T) {
	for ref, want := range map[string][3]string{
		"127.0.0.1:5000/charts/demo":                 {"127.0.0.1:5000/charts/demo", "", ""},
		"127.0.0.1:5000/charts/demo:1.2.3":           {"127.0.0.1:5000/charts/demo", "1.2.3", ""},
		"ghcr.io/org/demo@sha256:abc":                {"ghcr.io/org/demo", "", "sha256:abc"},
		"ghcr.io/org/demo:1.0.0@sha256:abc":          {"ghcr.io/org/demo", "1.0.0", "sha256:abc"},
		"registry.example:443/a/b/c/demo:0.1.0-rc.1": {"registry.example:443/a/b/c/demo", "0.1.0-rc.1", ""},
	} {
		b, tag, d := splitOCIRef(ref)
		if [3]string{b, tag, d} != want {
			t.Errorf("splitOCIRef(%q) = %q %q %q, want %q", ref, b, tag, d, want)
		}
	}
}

func TestSplitCredentialsRegistersPassword(t *testing.T) {
	e := New(nil, ".", nil, Options{})
	clean, user, pass, err := e.splitCredentials("https://bob:p%40ss@charts.example/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	if clean != "https://charts.example/x" || user != "bob" || pass != "p@ss" {
		t.Errorf("got %q %q %q", clean, user, pass)
	}
	if got := e.redactor.String("token p@ss here"); got != "token *** here" {
		t.Errorf("password not registered with the redactor: %q", got)
	}
}

// plan --offline names the dependencies a vendored subchart needs built,
// as apply builds them (TestSubchartDependenciesBuilt in runner/helmstep).
func TestOfflineDependenciesOfSubcharts(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	files := map[string]string{
		"Chart.yaml":            "apiVersion: v2\nname: umbrella\nversion: 1.0.0\ndependencies:\n  - {name: sub, version: 0.1.0}\n",
		"charts/sub/Chart.yaml": "apiVersion: v2\nname: sub\nversion: 0.1.0\ndependencies:\n  - {name: common, version: 2.x.x, repository: https://charts.example}\n",
	}
	chartsrc.WriteFiles(t, dir, files)
	got := DependenciesNote(OfflineDependencies(dir, &spec.Helm{Chart: "./", DependencyUpdate: true}))
	if got != "; builds chart dependencies common 2.x.x from https://charts.example (download)" {
		t.Errorf("offline note %q, want the subchart's dependency", got)
	}
}

// A folder of manifests is a chart as helmfile's chartify makes one: each
// *.yaml under it a template <i>-<file> in walk order (*.yml and other
// files are not), named after the release, version 1.0.0.
func TestManifestFolderChart(t *testing.T) {
	dir := t.TempDir()
	chartsrc.WriteFiles(t, dir, map[string]string{"b.yaml": "kind: B\n", "a/c.yaml": "kind: C\n", "d.yml": "kind: D\n", "notes.txt": "x\n"})
	ch, err := LoadLocal(dir, &spec.Helm{Chart: "./", Release: "office"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range ch.Templates {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, " "); got != "templates/0-c.yaml templates/1-b.yaml" || ch.Name() != "office" || ch.Metadata.Version != "1.0.0" {
		t.Errorf("chart %s %s with templates %q", ch.Name(), ch.Metadata.Version, got)
	}
	empty := t.TempDir()
	if _, err := LoadLocal(empty, &spec.Helm{Chart: "./", Release: "x"}); err == nil || !strings.Contains(err.Error(), "has neither a Chart.yaml nor manifests") {
		t.Errorf("an empty folder: %v", err)
	}
}
