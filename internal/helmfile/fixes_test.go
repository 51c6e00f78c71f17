package helmfile

import (
	"strings"
	"testing"
)

// Each hook's steps cite the hook's own line, not the hooks: key (#46).
func TestImportHookStepsCiteTheirHook(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml": `releases:
  - name: app
    namespace: apps
    chart: ./charts/app
    hooks:
      - events: [presync]
        command: kubectl
        args: [create, namespace, infra]
      - events: [postsync]
        showlogs: true
        command: kubectl
        args: [label, namespace, infra, team=platform, --overwrite]
`,
		"charts/app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
	})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := string(res.Spec)
	for _, want := range []string{
		"# from helmfile.yaml:6\n  - name: app-pre-1",
		"# from helmfile.yaml:9\n  - name: app-post-2",
	} {
		if !strings.Contains(spec, want) {
			t.Errorf("spec lacks %q\n%s", want, spec)
		}
	}
}
