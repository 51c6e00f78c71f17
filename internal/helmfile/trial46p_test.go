package helmfile

import (
	"testing"

	"github.com/khook/khook/internal/importer"
)

// varNamed is the import's variable name, or nil.
func varNamed(res *Result, name string) *importer.Var {
	for _, v := range res.Vars {
		if v.Name == name {
			return v
		}
	}
	return nil
}

// A secret read with requiredEnv is a required secret variable: helmfile
// refuses to render without it, so unset khook must not deploy "" (trial
// 46p's D5: ais-k8s's GRAFANA_PASSWORD was optional).
func TestImportRequiredEnvSecretIsRequired(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl": "releases:\n  - name: grafana\n    namespace: demo\n    chart: oci://r.example/grafana\n    version: 1.0.0\n    values:\n      - adminPassword: {{ requiredEnv \"GRAFANA_PASSWORD\" }}\n        viewerPassword: {{ env \"VIEWER_PASSWORD\" }}\n",
	})
	res, err := Import(dir, "helmfile.yaml.gotmpl", Options{Env: lookupOf(map[string]string{"GRAFANA_PASSWORD": "gpw-81c2", "VIEWER_PASSWORD": "vpw-11d0"})})
	if err != nil {
		t.Fatal(err)
	}
	if v := varNamed(res, "GRAFANA_PASSWORD"); v == nil || !v.Secret || !v.Required {
		t.Errorf("GRAFANA_PASSWORD is %+v, want a required secret:\n%s", v, res.Spec)
	}
	if v := varNamed(res, "VIEWER_PASSWORD"); v == nil || !v.Secret || v.Required {
		t.Errorf("VIEWER_PASSWORD is %+v, want an optional secret (env, not requiredEnv):\n%s", v, res.Spec)
	}
}
