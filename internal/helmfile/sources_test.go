package helmfile

import (
	"strings"
	"testing"
)

// A repository that is a git repository (the helm-git plugin's URL, as
// trials 46n, 46w and 46y's helmfiles write it) is carried as it is: the
// spec reads the chart from git at the ref. Without ref= helm-git reads
// master, and the spec says so; depupdate=0 turns dependency update off.
func TestImportGitRepository(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml": `repositories:
  - name: local-path
    url: git+https://github.com/rancher/local-path-provisioner@deploy/chart?ref=v0.0.31
  - name: tekton
    url: git+https://github.com/tektoncd/operator@charts?ref=v0.76.0&sparse=0&depupdate=0
  - name: unpinned
    url: git+https://github.com/example/api@charts
releases:
  - name: local-path
    namespace: storage
    chart: local-path/local-path-provisioner
  - name: tekton
    namespace: tekton
    chart: tekton/tekton-operator
    version: v0.76.0
  - name: api
    namespace: api
    chart: unpinned/api
`,
	})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Spec)
	for _, want := range []string{
		"chart: local-path-provisioner\n      repo: git+https://github.com/rancher/local-path-provisioner@deploy/chart?ref=v0.0.31\n",
		"chart: tekton-operator\n      repo: git+https://github.com/tektoncd/operator@charts?ref=v0.76.0&sparse=0&depupdate=0\n      version: v0.76.0\n",
		"repo: git+https://github.com/example/api@charts?ref=master\n",
		"names no ref=, so helm-git reads branch master and the spec says ref=master",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	for _, r := range res.Releases {
		if r.Verdict != Faithful {
			t.Errorf("release %s: %v %v, want faithful", r.Resolved.Name, r.Verdict, r.NotCarried)
		}
	}
	if n := strings.Count(out, "dependencyUpdate: true"); n != 2 {
		t.Errorf("%d steps update dependencies, want 2: helm-git does unless depupdate=0:\n%s", n, out)
	}
}

// A hook that pulls its release's chart and applies its crds/ first
// (trial 46w's f5-dpf apply-crds.sh) is the release step's crds: upgrade.
func TestImportHookAppliesChartCRDs(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"apply-crds.sh": `#!/bin/bash
set -euo pipefail
CHART="$1"
VERSION="${2:-}"
TMP_DIR="$(mktemp -d)"
trap 'rm -rf "$TMP_DIR"' EXIT
if [[ "$CHART" == oci://* ]]; then
	helm fetch --destination "$TMP_DIR" --untar "$CHART" --version "$VERSION"
else
	helm pull "$CHART" --version "$VERSION" --untar --untardir "$TMP_DIR"
fi
CHART_DIR=$(find "$TMP_DIR" -mindepth 1 -maxdepth 1 -type d | head -n 1)
if [[ -d "$CHART_DIR/crds" ]]; then
	kubectl apply -f "$CHART_DIR/crds" --server-side
fi
`,
		"helmfile.yaml": `releases:
  - name: kamaji
    namespace: kamaji
    chart: oci://ghcr.io/nvidia/charts/kamaji
    version: 1.2.0
    hooks:
      - events: ["preapply"]
        command: "./apply-crds.sh"
        args: ["oci://ghcr.io/nvidia/charts/kamaji", "1.2.0"]
  - name: other
    namespace: other
    chart: oci://ghcr.io/org/other
    version: 1.0.0
`,
	})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Spec)
	if !strings.Contains(out, "chart: oci://ghcr.io/nvidia/charts/kamaji\n      version: 1.2.0\n      release: kamaji\n      namespace: kamaji\n      createNamespace: true\n      crds: upgrade\n") ||
		!strings.Contains(out, "release: other\n      namespace: other\n      createNamespace: true\n      crds: create\n") {
		t.Errorf("want kamaji with crds: upgrade and other with crds: create:\n%s", out)
	}
	for _, r := range res.Releases {
		if r.Verdict != Faithful {
			t.Errorf("release %s: %v %v", r.Resolved.Name, r.Verdict, r.NotCarried)
		}
	}
}

// A hook that applies another chart's crds/ is not the release's crds:
// upgrade: not carried, counted so, and no step's crds: changes.
func TestImportHookAppliesOtherChartCRDs(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"crds.sh": "#!/bin/bash\nset -e\nhelm pull oci://r.example/other --version 2.0.0 --untar -d /tmp/x\nkubectl apply -f /tmp/x/other/crds\n",
		"helmfile.yaml": `releases:
  - name: app
    namespace: app
    chart: oci://r.example/app
    version: 1.0.0
    hooks:
      - events: ["presync"]
        command: "./crds.sh"
`,
	})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict() != Partial || !strings.Contains(string(res.Spec), "which no step of this release installs") || strings.Contains(string(res.Spec), "crds: upgrade") ||
		!strings.Contains(string(res.Spec), "0 were folded into steps") {
		t.Errorf("want partial, the other chart's crds/ named, no crds: upgrade, nothing folded:\n%s", res.Spec)
	}
}
