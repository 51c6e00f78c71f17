package helmfile

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	specpkg "github.com/khook/khook/spec"
)

// set/setString come over as helmfile v1.8.0 passes them to helm (pkg/state
// setFlags, setStringFlags) and helm merges them (pkg/cli/values: --set,
// then --set-string, then --set-file): an empty value passes nothing; a
// file is read as --set-file reads it, backslashes and all, after every
// --set-string; setString has no file form; a secret file (a private key,
// a registry's docker config, one set under a secret-looking name) is a
// secret variable, never its content (#46, cloudfoundry/kind-deployment's
// `set: [{name: caKey, file: …/ca.key}]`).
func TestImportSetValuesAsHelmfile(t *testing.T) {
	key := "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAtrialkeybody0123456789\n-----END RSA PRIVATE KEY-----\n"
	auth := `{"auths":{"registry.example":{"auth":"dXNlcjpyZWdpc3RyeS1wdy01NTU="}}}` + "\n"
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl": `releases:
  - name: app
    namespace: app
    chart: oci://r.example/app
    version: 1.0.0
    set:
      - name: caCert
        file: certs/ca.crt
      - name: caKey
        file: certs/ca.key
      - name: pullSecret.dockerConfigJson
        file: auth.json
      - name: empty
        value: {{ env "UNSET_IN_TEST" }}
      - name: order
        file: order.txt
      - name: none
        values: []
    setString:
      - name: order
        value: from-set-string
      - name: asText
        file: certs/ca.crt
`,
		"certs/ca.crt": "-----BEGIN CERTIFICATE-----\nMIIBca\\nline\n-----END CERTIFICATE-----\n",
		"certs/ca.key": key,
		"auth.json":    auth,
		"order.txt":    "from-set-file",
	})
	res, err := Import(dir, "helmfile.yaml.gotmpl", Options{Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Releases[0].Resolved.Values
	want := map[string]any{
		"caCert":     "-----BEGIN CERTIFICATE-----\nMIIBca\\nline\n-----END CERTIFICATE-----\n",
		"caKey":      key,
		"pullSecret": map[string]any{"dockerConfigJson": auth},
		"order":      "from-set-file",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("values (-helm +import):\n%s", d)
	}
	spec := string(res.Spec)
	for _, secret := range []string{"trialkeybody", "dXNlcjpy"} {
		if strings.Contains(spec, secret) {
			t.Errorf("%s written:\n%s", secret, spec)
		}
	}
	for _, want := range []string{`caKey: ${CA_KEY|printf "%s\n"|toJson}`, `dockerConfigJson: ${AUTH_JSON|printf "%s\n"|toJson}`, "CA_KEY: {type: string, secret: true", "AUTH_JSON: {type: string, secret: true",
		"setString asText file certs/ca.crt: helmfile passes no --set-string for a file"} {
		if !strings.Contains(spec, want) {
			t.Errorf("spec lacks %q\n%s", want, spec)
		}
	}

	// Loaded as khook loads it, with the variables set as a user sets them
	// ("$(cat FILE)", no final newline), the values are helm's.
	loaded, err := specpkg.Load(specpkg.LoadOptions{Files: []string{"-"}, Stdin: strings.NewReader(spec),
		Environ: []string{"KHOOK_SECRET_CA_KEY=" + strings.TrimSpace(key), "KHOOK_SECRET_AUTH_JSON=" + strings.TrimSpace(auth)}})
	if err != nil {
		t.Fatalf("%v\n%s", err, spec)
	}
	if d := cmp.Diff(want, loaded.Steps[0].Helm.Values); d != "" {
		t.Errorf("values loaded (-helm +khook):\n%s", d)
	}

	// A secret file rendered base64-encoded (b64enc, as a Secret's data)
	// into a generated values file moves into the step's values as the
	// variable, b64enc'd by khook: the file is never written.
	write(t, dir, map[string]string{
		"helmfile.yaml":      "releases:\n  - name: app\n    chart: oci://r.example/app\n    values: [values.yaml.gotmpl, plain.yaml]\n",
		"values.yaml.gotmpl": "registry:\n  dockerconfigjson: {{ readFile \"auth.json\" | b64enc }}\n",
		"plain.yaml":         "a: 1\n",
	})
	res, err = Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `dockerconfigjson: ${AUTH_JSON|printf "%s\n"|b64enc}`; !strings.Contains(string(res.Spec), want) || res.Verdict() != Faithful {
		t.Errorf("spec lacks %q (verdict %s)\n%s", want, res.Verdict(), res.Spec)
	}
}
