package helmfile

import (
	"strings"
	"testing"
)

// What held-out trial 46zt (helmfiles of project and infrastructure repos,
// run once on e1c4ecb) showed, cut down.

// winguse: a secret read with env "X" | default "y" is a secret variable
// without the default, and required: unset, khook would render "" where
// helmfile takes the default.
func TestSecretWithDefaultIsRequired(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl": "releases:\n  - name: db\n    namespace: db\n    chart: oci://r.example/db\n    version: 1.0.0\n    values:\n      - auth:\n          password: {{ env \"DB_PASSWORD\" | default \"changeme-default\" | quote }}\n",
	})
	res, err := Import(dir, "helmfile.yaml.gotmpl", Options{Env: lookupOf(map[string]string{})})
	if err != nil {
		t.Fatal(err)
	}
	if spec := string(res.Spec); !strings.Contains(spec, "DB_PASSWORD: {type: string, secret: true, required: true") || strings.Contains(spec, "changeme-default") {
		t.Errorf("spec:\n%s", spec)
	}
}

// mbilan1, 46zq's mmoreiradj: needs: [nats] of a release in another
// namespace than nats's is one helmfile v1 refuses; the warning says so
// and how to write it.
func TestNeedInAnotherNamespaceSaysHelmfileRefusesIt(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml": "releases:\n  - name: nats\n    namespace: nats\n    chart: oci://r.example/nats\n    version: 1.0.0\n  - name: fluentbit\n    namespace: fluent-bit\n    chart: oci://r.example/fb\n    version: 1.0.0\n    needs: [nats]\n",
	})
	res, err := Import(dir, "helmfile.yaml", Options{Env: lookupOf(map[string]string{})})
	if err != nil {
		t.Fatal(err)
	}
	if all := everything(res); !strings.Contains(all, "helmfile v1 refuses the helmfile") || !strings.Contains(all, "write needs: [nats/nats]") {
		t.Errorf("notes:\n%s", all)
	}
}
