package helmfile

import (
	"strings"
	"testing"
)

// No secret the import read is written: a secret-looking environment
// variable (set, or with the helmfile's default) becomes a secret
// variable, so does the content of a private key read with readFile, and
// a hook's --from-literal; a .gotmpl values file that renders a key into a
// generated file refuses the import rather than writing it.
func TestImportSecretsNeverWritten(t *testing.T) {
	key := "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\n"
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl": `releases:
  - name: app
    namespace: app
    chart: oci://r.example/app
    version: 1.0.0
    set:
      - name: auth.token
        value: {{ env "API_TOKEN" | default "dflt-token-111" }}
    values:
      - db:
          password: {{ requiredEnv "DB_PASSWORD" }}
        header: Bearer {{ requiredEnv "DB_PASSWORD" }}
      - key: {{ readFile "tls.key" | quote }}
    hooks:
      - events: [presync]
        command: sh
        args:
          - -c
          - kubectl create secret generic x -n app --from-literal=password=hook-literal-pw-222 --dry-run=client -o yaml | kubectl apply -f -
`,
		"tls.key": key,
	})
	env := map[string]string{"API_TOKEN": "env-token-value-333", "DB_PASSWORD": "env-db-pw-444"}
	lookup := func(n string) (string, bool) { v, ok := env[n]; return v, ok }
	res, err := Import(dir, "helmfile.yaml.gotmpl", Options{Env: lookup})
	if err != nil {
		t.Fatal(err)
	}
	var notes strings.Builder
	for _, r := range res.Releases {
		for _, n := range append(append([]Note{}, r.NotCarried...), r.Info...) {
			notes.WriteString(n.String() + "\n")
		}
	}
	for _, n := range append(append([]Note{}, res.NotCarried...), res.Info...) {
		notes.WriteString(n.String() + "\n")
	}
	for _, secret := range []string{"hook-literal-pw-222", "env-token-value-333", "env-db-pw-444", "MIIEvQIBADAN", "dflt-token-111"} {
		if strings.Contains(string(res.Spec), secret) || strings.Contains(notes.String(), secret) {
			t.Errorf("%s written:\n%s\n%s", secret, res.Spec, notes.String())
		}
	}
	for _, want := range []string{"token: ${API_TOKEN}", "password: ${DB_PASSWORD}", "header: Bearer ${DB_PASSWORD}", "${TLS_KEY}",
		"API_TOKEN: {type: string, secret: true", "DB_PASSWORD: {type: string, secret: true", "TLS_KEY: {type: string, secret: true", "X_PASSWORD: {type: string, secret: true"} {
		if !strings.Contains(string(res.Spec), want) {
			t.Errorf("spec lacks %q\n%s", want, res.Spec)
		}
	}

	// Rendered into a generated values file, the key would be written: refused.
	write(t, dir, map[string]string{
		"helmfile.yaml":      "releases:\n  - name: app\n    chart: oci://r.example/app\n    values: [values.yaml.gotmpl, plain.yaml]\n",
		"values.yaml.gotmpl": "tls:\n  key: {{ readFile \"tls.key\" | quote }}\n",
		"plain.yaml":         "a: 1\n",
	})
	_, err = Import(dir, "helmfile.yaml", Options{Env: lookup})
	if err == nil || !strings.Contains(err.Error(), "the content of tls.key would be written in plaintext") || strings.Contains(err.Error(), "MIIEvQ") {
		t.Errorf("got %v, want a refusal naming tls.key without its content", err)
	}
}

// A value computed from a secret variable (MinBZK's derivePassword of a
// master password, here its sha1sum) does not contain the secret, so no
// search finds it; the import refuses instead of writing it, and says how
// to import (without the variable set).
func TestImportRefusesAValueDerivedFromASecret(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml":      "releases:\n  - name: app\n    chart: oci://r.example/app\n    values: [values.yaml.gotmpl]\n",
		"values.yaml.gotmpl": "oidc:\n  clientSecret: {{ env \"MASTER_PASSWORD\" | sha1sum }}\n",
	})
	lookup := func(name string) (string, bool) {
		if name == "MASTER_PASSWORD" {
			return "correct-horse-battery", true
		}
		return "", false
	}
	_, err := Import(dir, "helmfile.yaml", Options{Env: lookup})
	if err == nil || !strings.Contains(err.Error(), "reads the secret environment variable MASTER_PASSWORD") || !strings.Contains(err.Error(), "import with MASTER_PASSWORD unset") || strings.Contains(err.Error(), "correct-horse") {
		t.Errorf("got %v, want a refusal naming MASTER_PASSWORD without its value", err)
	}
	// Unset, nothing secret is rendered: the import goes through.
	if _, err := Import(dir, "helmfile.yaml", Options{Env: func(string) (string, bool) { return "", false }}); err != nil {
		t.Errorf("without MASTER_PASSWORD set: %v", err)
	}
}
