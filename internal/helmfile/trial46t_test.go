package helmfile

import (
	"strings"
	"testing"
)

// An environment's credential that a key naming no credential holds too
// (db.name and db.pass both shopdb) is a name as well: where a template
// puts it under other keys it stays, and only the password is the secret
// variable (trial 46t's D1: the user name, the database and the host
// became the password's variable).
func TestImportCredentialThatIsAlsoANameStays(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl": `environments:
  default:
    values:
      - db:
          name: shopdb
          user: shopdb
          pass: shopdb
---
releases:
  - name: shop
    namespace: demo
    chart: oci://r.example/shop
    version: 1.0.0
    values:
      - values.yaml.gotmpl
    set:
      - name: auth.username
        value: {{ .Values.db.user }}
      - name: auth.password
        value: {{ .Values.db.pass }}
`,
		"values.yaml.gotmpl": "host: {{ .Values.db.name }}.test\ndatabase: {{ .Values.db.name }}\n",
	})
	res, err := Import(dir, "helmfile.yaml.gotmpl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	all := everything(res)
	for _, want := range []string{"username: shopdb", "password: ${DB_PASS|toJson}", "host: shopdb.test", "database: shopdb"} {
		if !strings.Contains(all, want) {
			t.Errorf("lacks %q:\n%s", want, all)
		}
	}
}

// One environment credential that two releases use is one secret
// variable named after it (trial 46t's D2: a database's password and its
// client's were two, which a user could set apart).
func TestImportOneEnvironmentCredentialOneVariable(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl": `environments:
  default:
    values:
      - db:
          pass: c4nary-dbpass
---
releases:
  - name: postgres
    namespace: db
    chart: oci://r.example/pg
    version: 1.0.0
    set:
      - name: auth.password
        value: {{ .Values.db.pass }}
  - name: app
    namespace: app
    chart: oci://r.example/app
    version: 1.0.0
    values:
      - database:
          secret:
            password: {{ .Values.db.pass }}
`,
	})
	res, err := Import(dir, "helmfile.yaml.gotmpl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := string(res.Spec)
	if strings.Count(spec, "${DB_PASS|toJson}") != 2 || len(res.Vars) != 1 {
		t.Errorf("want both as the one variable DB_PASS:\n%s", spec)
	}
	if v := varNamed(res, "DB_PASS"); v == nil || !strings.Contains(v.Description, "environment values db.pass") {
		t.Errorf("DB_PASS is %+v, want it described by its environment value", v)
	}
}

// A credential whose key is the parent of a {value: …} (xwiki's
// superadminpassword), and a jwtSecret, are credentials too (trial 46t's
// D3, D4: written in plain text).
func TestImportCredentialUnderValueAndJWTSecret(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml": `releases:
  - name: wiki
    namespace: demo
    chart: oci://r.example/wiki
    version: 1.0.0
    values:
      - values.yaml.gotmpl
`,
		"values.yaml.gotmpl": "customConfigsSecrets:\n  wiki.cfg:\n    wiki.superadminpassword:\n      value: c4nary-super\nauth:\n  jwtSecret: c4nary-jwt\n  allowAnonymous: true\n",
	})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	all := everything(res)
	if strings.Contains(all, "c4nary-super") || strings.Contains(all, "c4nary-jwt") {
		t.Errorf("a credential is written in plain text:\n%s", all)
	}
	if !strings.Contains(all, "jwtSecret: ${AUTH_JWT_SECRET|toJson}") {
		t.Errorf("jwtSecret is not its variable:\n%s", all)
	}
}

// An environment variable's value written where the helmfile has a
// string that reads as a number ("8080") stays a string: ${PORT}
// substituted would be the number 8080 (trial 46n's zen-watcher).
func TestImportReferenceKeepsAStringAString(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl": "{{ $port := env \"HTTP_PORT\" | default \"8080\" }}\nreleases:\n  - name: a\n    namespace: d\n    chart: oci://r.example/a\n    version: 1.0.0\n    values:\n      - annotations:\n          prometheus.io/port: \"{{ $port }}\"\n",
	})
	res, err := Import(dir, "helmfile.yaml.gotmpl", Options{Env: lookupOf(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Spec), "prometheus.io/port: ${HTTP_PORT|toJson}") {
		t.Errorf("want the string kept a string:\n%s", res.Spec)
	}
}
