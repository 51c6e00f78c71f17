package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/model"
	"github.com/khook/khook/test/chartsrc"
)

// TestImportHelmfile: a helmfile of two repositories (the harness's HTTP
// chart repository and OCI registry) and five releases with needs becomes
// a spec that validates and plans against the cluster; every construct
// without a khook form is listed with its line.
func TestImportHelmfile(t *testing.T) {
	ns := namespace(t)
	tgz := chartsrc.Package(t, "demo", t.TempDir())
	repo := chartsrc.NewHTTPRepoFromFiles(t, chartsrc.Auth{}, tgz)
	reg := chartsrc.NewOCIRegistry(t, chartsrc.Auth{})
	reg.PushFile(t, tgz)

	dir := t.TempDir()
	src, err := os.ReadFile(testdata("helmfile", "helmfile.yaml"))
	must(t, err)
	text := strings.NewReplacer("HTTP_REPO_URL", repo.URL, "OCI_HOST", reg.Host, "NS", ns).Replace(string(src))
	must(t, os.WriteFile(filepath.Join(dir, "helmfile.yaml"), []byte(text), 0o644))
	must(t, os.MkdirAll(filepath.Join(dir, "values"), 0o755))
	for _, f := range []string{"cert-manager.yaml", "app.yaml"} {
		b, err := os.ReadFile(testdata("helmfile", "values", f))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(dir, "values", f), b, 0o644))
	}

	imp := khook(t, invocation{Dir: dir, Args: []string{"import", "helmfile", "helmfile.yaml", "--out", "khook.yaml"}})
	if imp.Code != 0 {
		t.Fatalf("import: exit %d\n%s", imp.Code, imp.Stderr)
	}
	for _, want := range []string{
		"helmfile.yaml:5: environments: not converted",
		"helmfile.yaml:20: helmDefaults.kubeContext: not converted",
		"helmfile.yaml:32: release cert-manager: set extraArgs[0]: not converted",
		"helmfile.yaml:45: release ingress: hooks: not converted",
		"helmfile.yaml:57: release monitoring: values values/monitoring.yaml.gotmpl: not converted",
		"helmfile.yaml:65: release app: labels: not converted",
		"helmfile.yaml:67: release app: secrets: not converted",
	} {
		if !strings.Contains(imp.Stderr, want) {
			t.Errorf("import did not report %q:\n%s", want, imp.Stderr)
		}
	}
	spec, err := os.ReadFile(filepath.Join(dir, "khook.yaml"))
	must(t, err)
	t.Logf("khook.yaml:\n%s", spec)

	if out := khook(t, invocation{Dir: dir, Args: []string{"validate", "-f", "khook.yaml"}}); out.Code != 0 {
		t.Fatalf("validate: exit %d\n%s\n%s", out.Code, out.Stdout, out.Stderr)
	}
	out := khook(t, invocation{Dir: dir, Args: []string{"plan", "-f", "khook.yaml", "-o", "json"}})
	var p model.Plan
	if err := json.Unmarshal([]byte(out.Stdout), &p); err != nil || out.Code != 0 {
		t.Fatalf("plan: exit %d, %v\n%s\n%s", out.Code, err, out.Stdout, out.Stderr)
	}
	got := map[string]string{}
	for _, s := range p.Steps {
		got[s.Name] = string(s.Action) + " needs " + strings.Join(s.Needs, ",")
	}
	want := map[string]string{
		"cert-manager": "install needs ", "ingress": "install needs cert-manager",
		"monitoring": "install needs cert-manager", "app": "install needs ingress,monitoring",
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("plan of %s: %q, want %q", name, got[name], w)
		}
	}
	if len(p.Steps) != 5 || !strings.HasPrefix(got["legacy-dashboard"], "") || !strings.HasSuffix(got["legacy-dashboard"], "needs app") {
		t.Errorf("plan steps = %v, want five with legacy-dashboard (installed: false) after app", got)
	}
}
