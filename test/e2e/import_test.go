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
	for _, f := range []string{"values/cert-manager.yaml", "values/app.yaml", "values/monitoring.yaml.gotmpl", "env/default.yaml", "secrets/app.yaml"} {
		b, err := os.ReadFile(testdata("helmfile", f))
		must(t, err)
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}

	// The smoke-test hook has no khook form: a partial import, written,
	// exit 1, the hook named at its line.
	imp := khook(t, invocation{Dir: dir, Args: []string{"import", "helmfile", "helmfile.yaml", "--out", "khook.yaml"}})
	if imp.Code != 1 {
		t.Fatalf("import: exit %d, want 1 (partial)\n%s", imp.Code, imp.Stderr)
	}
	for _, want := range []string{
		"helmfile.yaml:46: not carried over: release ingress: hooks[0] (./scripts/smoke.sh): ./scripts/smoke.sh: it runs scripts/smoke.sh, which is not there at import",
		"helmfile.yaml:20: warning: helmDefaults.kubeContext: khook runs against the --context",
		"5 releases: 4 faithful, 1 partial, 0 refused; import partial",
	} {
		if !strings.Contains(imp.Stderr, want) {
			t.Errorf("import did not report %q:\n%s", want, imp.Stderr)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "monitoring.values-1.yaml")); err != nil || !strings.Contains(string(b), "message: hello-monitoring") {
		t.Errorf("the rendered .gotmpl values: %s %v", b, err)
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
