package helmfile

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// commonLabels are in .Release.Labels when a release's own templates
// render, over the release's labels of the same name (helmfile v1.8.0
// pkg/state ExecuteTemplates; edenlabllc/cluster-deps.bootstrap.infra
// writes chart: "{{`{{ .Release.Labels.repo }}`}}/k3d-cluster").
func TestImportCommonLabelsInReleaseTemplates(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl": "repositories:\n  - name: core\n    url: https://charts.example\ncommonLabels:\n  repo: core\n  scope: deps\ntemplates:\n  release:\n    values:\n      - values/{{`{{ .Release.Labels.scope }}`}}.yaml\nreleases:\n  - name: app\n    namespace: apps\n    chart: \"{{`{{ .Release.Labels.repo }}`}}/app\"\n    version: 1.0.0\n    labels:\n      repo: mine\n    inherit:\n      - template: release\n",
		"values/deps.yaml":     "scope: deps\n",
	})
	res, err := Import(dir, "helmfile.yaml.gotmpl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Releases[0].Resolved
	if got.Chart != "core/app" || got.Values["scope"] != "deps" {
		t.Errorf("chart %q, values %v; want core/app and the deps values file", got.Chart, got.Values)
	}
}

// A helmfiles: entry that is one big alias decodes as helmfile decodes
// it (MinBZK/mijn-bureau-infra: 15 entries of `values: *appvalues`,
// the state's values); yaml.v3 alone refused it as excessive aliasing.
func TestImportAliasedHelmfilesEntries(t *testing.T) {
	var big strings.Builder
	for i := 0; i < 600; i++ {
		fmt.Fprintf(&big, "          k%d: v%d\n", i, i)
	}
	files := map[string]string{
		"sub/a.yaml": "releases:\n  - name: a\n    namespace: apps\n    chart: oci://r.example/a\n    version: 1.0.0\n",
		"sub/b.yaml": "releases:\n  - name: b\n    namespace: apps\n    chart: oci://r.example/b\n    version: 1.0.0\n",
	}
	files["helmfile.yaml"] = "helmfiles:\n  - path: sub/a.yaml\n    values: &appvalues\n      - big:\n" + big.String() + "  - path: sub/b.yaml\n    values: *appvalues\n"
	dir := t.TempDir()
	write(t, dir, files)
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range res.Releases {
		names = append(names, r.Resolved.Name)
	}
	if d := cmp.Diff([]string{"a", "b"}, names); d != "" {
		t.Errorf("releases (-want +got):\n%s", d)
	}
}
