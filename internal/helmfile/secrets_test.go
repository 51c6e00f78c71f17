package helmfile

import (
	"encoding/base64"
	"strings"
	"testing"
	"text/template"

	"github.com/Masterminds/sprig/v3"

	"github.com/khook/khook/spec"
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
	for _, want := range []string{"token: ${API_TOKEN}", "password: ${DB_PASSWORD}", "header: Bearer ${DB_PASSWORD}", `key: ${TLS_KEY|printf "%s\n"|toJson}`,
		"API_TOKEN: {type: string, secret: true", "DB_PASSWORD: {type: string, secret: true", "TLS_KEY: {type: string, secret: true", "X_PASSWORD: {type: string, secret: true"} {
		if !strings.Contains(string(res.Spec), want) {
			t.Errorf("spec lacks %q\n%s", want, res.Spec)
		}
	}

	// Rendered into a generated values file (which khook reads as it is,
	// substituting nothing), the key moves into the step's values: as the
	// variable; tested in TestImportSecretFileInAGeneratedValuesFile.
}

// A value computed from a secret variable (MinBZK's derivePassword of a
// master password, then sha1sum) does not contain the secret, so no
// search of what is written finds it. The import renders a second time
// with the variable set otherwise: what changes is derived, and becomes a
// secret variable of its own in the step's values, never its value; what
// the secret decides (a key, a release) refuses the import (#46).
func TestImportWritesAValueDerivedFromASecretAsASecretVariable(t *testing.T) {
	master := "correct-horse-battery"
	derived := func(site string) string {
		var b strings.Builder
		if err := template.Must(template.New("").Funcs(sprig.TxtFuncMap()).Parse(`{{ derivePassword 1 "long" .M "keycloak" .S | sha1sum }}`)).Execute(&b, map[string]string{"M": master, "S": site}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	lookup := func(name string) (string, bool) {
		if name == "MASTER_PASSWORD" {
			return master, true
		}
		return "", false
	}
	files := map[string]string{
		"helmfile.yaml.gotmpl": `environments:
  default:
    values: [auth.yaml.gotmpl]
---
releases:
  - name: app
    namespace: apps
    chart: oci://r.example/app
    values:
      - values.yaml.gotmpl
      - plain.yaml
  - name: web
    namespace: apps
    chart: oci://r.example/web
    values:
      - meet:
          secret: {{ .Values.auth.meet }}
          issuer: https://id.example
`,
		"auth.yaml.gotmpl":   "auth:\n  meet: {{ derivePassword 1 \"long\" (requiredEnv \"MASTER_PASSWORD\") \"keycloak\" \"meet\" | sha1sum | quote }}\n  grist: {{ derivePassword 1 \"long\" (requiredEnv \"MASTER_PASSWORD\") \"keycloak\" \"grist\" | sha1sum | quote }}\n",
		"values.yaml.gotmpl": "oidc:\n  clientSecret: {{ .Values.auth.grist }}\n  clientId: grist\nextraDeploy:\n  - kind: Secret\n    stringData:\n      password: {{ .Values.auth.meet }}\n",
		"plain.yaml":         "replicas: 2\n",
	}
	dir := t.TempDir()
	write(t, dir, files)
	res, err := Import(dir, "helmfile.yaml.gotmpl", Options{Env: lookup})
	if err != nil {
		t.Fatal(err)
	}
	all := string(res.Spec)
	for _, f := range res.Files {
		all += string(f.Data)
	}
	for _, secret := range []string{master, derived("meet"), derived("grist")} {
		if strings.Contains(all, secret) {
			t.Errorf("%q is written:\n%s", secret, all)
		}
	}
	for _, want := range []string{"clientSecret: ${OIDC_CLIENT_SECRET}", "secret: ${MEET_SECRET}", "password: ${MEET_SECRET}", "OIDC_CLIENT_SECRET: {type: string, secret: true", "MEET_SECRET: {type: string, secret: true"} {
		if !strings.Contains(all, want) {
			t.Errorf("lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "\n  MASTER_PASSWORD:") {
		t.Errorf("the master password's variable is declared though nothing refers to it:\n%s", all)
	}
	if v := res.Verdict(); v != Faithful {
		t.Errorf("verdict %v, want faithful", v)
	}

	// A string holding the secret and a value derived from it: the whole
	// string is derived (replacing the secret alone would leave the hash).
	mixed := files["values.yaml.gotmpl"]
	files["values.yaml.gotmpl"] = "dsn: {{ printf \"%s:%s\" (env \"MASTER_PASSWORD\") (env \"MASTER_PASSWORD\" | sha1sum) }}\n"
	write(t, dir, files)
	res, err = Import(dir, "helmfile.yaml.gotmpl", Options{Env: lookup})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Spec), "dsn: ${DSN}") {
		t.Errorf("the mixed string is not one secret variable:\n%s", res.Spec)
	}
	files["values.yaml.gotmpl"] = mixed

	// The secret decides a key: left out, only that release partial,
	// named at its values, without the secret (trial 46n's D1).
	files["values.yaml.gotmpl"] = "{{ if hasPrefix \"correct\" (env \"MASTER_PASSWORD\") }}a{{ else }}b{{ end }}: 1\nkept: 2\n"
	write(t, dir, files)
	res, err = Import(dir, "helmfile.yaml.gotmpl", Options{Env: lookup})
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Releases[0].Verdict; v != Partial || len(res.Releases[0].NotCarried) == 0 || !strings.Contains(res.Releases[0].NotCarried[0].Why, "MASTER_PASSWORD") || res.Releases[1].Verdict != Faithful {
		t.Errorf("verdicts %v %v, notes %v; want app partial naming MASTER_PASSWORD, web faithful", v, res.Releases[1].Verdict, res.Releases[0].NotCarried)
	}
	for _, f := range res.Files {
		if strings.Contains(string(f.Data), "a: 1") || !strings.Contains(string(f.Data), "kept: 2") {
			t.Errorf("the key the secret decides is written, or the rest is not:\n%s", f.Data)
		}
	}

	// A hook's command carries a derived value: only a helm step's values
	// can refer to a variable, so refused.
	files["helmfile.yaml.gotmpl"] += `    hooks:
      - events: [presync]
        command: kubectl
        args: [create, configmap, meet, -n, apps, "--from-literal=token={{ .Values.auth.meet }}"]
`
	write(t, dir, files)
	_, err = Import(dir, "helmfile.yaml.gotmpl", Options{Env: lookup})
	if err == nil || !strings.Contains(err.Error(), "release web") || strings.Contains(err.Error(), derived("meet")) {
		t.Errorf("got %v, want a refusal naming the release without the value", err)
	}
	files["helmfile.yaml.gotmpl"] = strings.Split(files["helmfile.yaml.gotmpl"], "    hooks:")[0]

	// A later values file sets the derived key too: moved into values: it
	// would win where helm lets the later file win, so left out: only
	// that release is partial.
	files["values.yaml.gotmpl"] = "oidc:\n  clientSecret: {{ .Values.auth.grist }}\n"
	files["plain.yaml"] = "oidc:\n  clientSecret: from-plain\n"
	write(t, dir, files)
	res, err = Import(dir, "helmfile.yaml.gotmpl", Options{Env: lookup})
	if err != nil {
		t.Fatal(err)
	}
	if n := res.Releases[0].NotCarried; res.Releases[0].Verdict != Partial || len(n) == 0 || !strings.Contains(n[0].String(), "oidc.clientSecret") || !strings.Contains(n[0].Why, "the later values file ./plain.yaml sets it too") {
		t.Errorf("verdict %v, notes %v; want partial naming the later values file", res.Releases[0].Verdict, n)
	}
}

// A public key (edenlab's readFile of ~/.ssh/id_rsa.pub into a cluster's
// values) is not a secret: it is written, where id_rsa would refuse (#46).
func TestImportPublicKeyIsNotASecret(t *testing.T) {
	dir := t.TempDir()
	pub := "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 user@host"
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl": "releases:\n  - name: app\n    namespace: apps\n    chart: oci://r.example/app\n    values:\n      - sshKey: {{ readFile \"keys/id_rsa.pub\" | quote }}\n",
		"keys/id_rsa.pub":      pub,
	})
	res, err := Import(dir, "helmfile.yaml.gotmpl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Spec), pub) {
		t.Errorf("the public key is not written:\n%s", res.Spec)
	}
}

// A file of certificates is public whatever its name, and a private key a
// secret whatever its name: the content decides (trial 46m's D4, where
// wire-server's elasticsearch-ca.pem, a CA certificate read with readFile
// in a values template, refused the whole import for its .pem name).
func TestImportCertificateIsNotASecretWhateverItsName(t *testing.T) {
	cert := "# the test CA\n-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2VydGlmaWNhdGVCb2R5\n-----END CERTIFICATE-----\n-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUU2Vjb25kQ2VydGlm\n-----END CERTIFICATE-----\n"
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml":     "releases:\n  - name: certs\n    namespace: ns1\n    chart: oci://r.example/raw\n    version: 1.0.0\n    values: [certs.yaml.gotmpl]\n",
		"certs.yaml.gotmpl": "ca:\n  crt: {{ readFile \"./ca.pem\" | b64enc | quote }}\n  pem: {{ readFile \"./ca.pem\" | quote }}\n",
		"ca.pem":            cert,
	})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatalf("a certificate refused the import: %v", err)
	}
	if res.Verdict() != Faithful || len(res.Files) != 1 || !strings.Contains(string(res.Files[0].Data), "MIIBszCCAVmgAwIBAgIUQ2VydGlmaWNhdGVCb2R5") {
		t.Errorf("the certificate is not carried into the generated values file (verdict %s):\n%s", res.Verdict(), res.Files)
	}
	for _, tc := range []struct {
		text string
		want bool
	}{
		{cert, false},
		{"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----\n", false},
		{cert + "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkeyBody\n-----END EC PRIVATE KEY-----\n", true},
		{"password: hunter2\n" + cert, true}, // more than certificates: the name decides
		{"not a certificate at all", true},
	} {
		if got := secretRead(&fileRead{path: "/x/ca.pem", text: tc.text}); got != tc.want {
			t.Errorf("secretRead(ca.pem holding %q) = %v, want %v", tc.text, got, tc.want)
		}
	}
	// A private key is a secret whatever its name.
	if !secretRead(&fileRead{path: "/x/bundle.txt", text: "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkq\n-----END PRIVATE KEY-----\n"}) {
		t.Error("a private key in bundle.txt is not a secret")
	}
	if secretRead(&fileRead{path: "/x/server-chain.txt", text: cert}) {
		t.Error("a certificate in server-chain.txt is a secret")
	}
}

// A secret file rendered into a values file the import generates (wire-server's
// certs template: a CA certificate and its key, b64enc, trial 46m's D4)
// becomes the secret variable in the step's values:, since khook
// substitutes variables in the spec only, never in a values file; the
// certificate stays in the generated file. Where a later values file sets
// the same key (moved, the secret would override it), only that release is
// partial, at its line, never the whole import refused; the key is never
// written.
func TestImportSecretFileInAGeneratedValuesFile(t *testing.T) {
	cert := "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2VydGlmaWNhdGVCb2R5\n-----END CERTIFICATE-----\n"
	key := "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\n"
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml": `releases:
  - name: certs
    namespace: ns1
    chart: oci://r.example/raw
    version: 1.0.0
    values: [certs.yaml.gotmpl, plain.yaml]
  - name: pem
    namespace: ns1
    chart: oci://r.example/raw
    version: 1.0.0
    values: [pem.yaml.gotmpl]
  - name: shadowed
    namespace: ns1
    chart: oci://r.example/raw
    version: 1.0.0
    values: [certs.yaml.gotmpl, shadow.yaml]
`,
		"certs.yaml.gotmpl": "secret:\n  tls.crt: {{ readFile \"./ca.pem\" | b64enc | quote }}\n  tls.key: {{ readFile \"./ca-key.pem\" | b64enc | quote }}\n",
		"pem.yaml.gotmpl":   "key: {{ readFile \"./ca-key.pem\" | quote }}\nlabel: the key\n",
		"plain.yaml":        "replicas: 2\n",
		"shadow.yaml":       "secret:\n  tls.key: from-a-later-file\n",
		"ca.pem":            cert,
		"ca-key.pem":        key,
	})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatalf("one release's secret refused the whole import: %v", err)
	}
	var all strings.Builder
	all.Write(res.Spec)
	for _, f := range res.Files {
		all.WriteString(f.Path + "\n" + string(f.Data))
	}
	for _, r := range res.Releases {
		for _, n := range append(append([]Note{}, r.NotCarried...), r.Info...) {
			all.WriteString(n.String() + "\n")
		}
	}
	if strings.Contains(all.String(), "MIIEvQIBADAN") || strings.Contains(all.String(), base64.StdEncoding.EncodeToString([]byte(key))[:40]) {
		t.Fatalf("the key is written:\n%s", all.String())
	}
	verdicts := map[string]Verdict{}
	for _, r := range res.Releases {
		verdicts[r.Resolved.Name] = r.Verdict
	}
	if verdicts["certs"] != Faithful || verdicts["pem"] != Faithful || verdicts["shadowed"] != Partial {
		t.Errorf("verdicts %v, want certs and pem faithful, shadowed partial", verdicts)
	}
	for _, r := range res.Releases {
		if r.Resolved.Name == "shadowed" && (len(r.NotCarried) != 1 || !strings.Contains(r.NotCarried[0].String(), "helmfile.yaml:16: release shadowed: values secret.tls.key") ||
			!strings.Contains(r.NotCarried[0].String(), "the later values file ./shadow.yaml sets it too")) {
			t.Errorf("shadowed's note: %v", r.NotCarried)
		}
	}
	if !strings.Contains(all.String(), "MIIBszCCAVmgAwIBAgIUQ2VydGlmaWNhdGVCb2R5") && !strings.Contains(all.String(), base64.StdEncoding.EncodeToString([]byte(cert))) {
		t.Errorf("the certificate is not carried:\n%s", all.String())
	}

	// Loaded as khook loads it, with the variable set as a user sets it
	// ("$(cat ca-key.pem)", no final newline), the values are helmfile's.
	s, err := spec.Load(spec.LoadOptions{Files: []string{"-"}, Stdin: strings.NewReader(string(res.Spec)), Environ: []string{"KHOOK_SECRET_CA_KEY_PEM=" + strings.TrimSpace(key)}})
	if err != nil {
		t.Fatalf("%v\n%s", err, res.Spec)
	}
	got := map[string]map[string]any{}
	for _, st := range s.Steps {
		if st.Helm != nil {
			got[st.Helm.Release] = st.Helm.Values
		}
	}
	if v, _ := got["certs"]["secret"].(map[string]any); v == nil || v["tls.key"] != base64.StdEncoding.EncodeToString([]byte(key)) {
		t.Errorf("certs' secret.tls.key is not the key's base64: %v\n%s", got["certs"], res.Spec)
	}
	if got["pem"]["key"] != key {
		t.Errorf("pem's key is not the key: %q\n%s", got["pem"]["key"], res.Spec)
	}
}
