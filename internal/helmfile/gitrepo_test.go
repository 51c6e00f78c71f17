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
