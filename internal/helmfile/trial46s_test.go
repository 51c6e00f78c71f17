package helmfile

import (
	"strings"
	"testing"
)

// A set: with a list index over a values file that gives the list sets
// the field inside the element, as helm's --set does; the element's other
// keys stay (trial 46s's D3: llm-d's routing.parentRefs[0] lost group
// and kind, silently).
func TestImportSetListIndexKeepsTheElement(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml": `releases:
  - name: app
    namespace: demo
    chart: oci://r.example/app
    version: 1.0.0
    values:
      - values.yaml
    set:
      - name: "routing.parentRefs[0].name"
        value: gw-1
      - name: "routing.hosts[1]"
        value: b.example
`,
		"values.yaml": "routing:\n  parentRefs:\n    - group: gateway.networking.k8s.io\n      kind: Gateway\n      name: placeholder\n  hosts: [a.example, z.example, c.example]\n",
	})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"group: gateway.networking.k8s.io", "kind: Gateway", "name: gw-1", "- a.example", "- b.example", "- c.example"} {
		if !strings.Contains(string(res.Spec), want) {
			t.Errorf("the spec lacks %q:\n%s", want, res.Spec)
		}
	}
	if strings.Contains(string(res.Spec), "z.example") || strings.Contains(string(res.Spec), "placeholder") {
		t.Errorf("the set values are not over the file's:\n%s", res.Spec)
	}
}

// Two credential keys with the same literal are two secret variables:
// whoever gives real values may give different ones (trial 46s's D4: jx3's
// hmacToken and oauthToken shared one). The same key in two releases is
// one.
func TestImportEqualCredentialsUnderOtherKeysAreTwoVariables(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml": `releases:
  - name: app
    namespace: demo
    chart: oci://r.example/app
    version: 1.0.0
    values:
      - hmacToken: same-literal-91
        oauthToken: same-literal-91
  - name: other
    namespace: demo
    chart: oci://r.example/app
    version: 1.0.0
    values:
      - hmacToken: same-literal-91
`,
	})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := string(res.Spec)
	if strings.Count(spec, "${HMAC_TOKEN|toJson}") != 2 || !strings.Contains(spec, "oauthToken: ${OAUTH_TOKEN|toJson}") {
		t.Errorf("want hmacToken as HMAC_TOKEN in both releases and oauthToken as OAUTH_TOKEN:\n%s", spec)
	}
	if strings.Contains(everything(res), "same-literal-91") {
		t.Errorf("the literal is written:\n%s", everything(res))
	}
}

// A values template that puts an environment's literal credential inside
// a longer string writes a reference to its secret variable, never the
// literal (trial 46s's D5: jx3's <password> in mavenSettings).
func TestImportCredentialInsideAStringIsAReference(t *testing.T) {
	const pw = "c4nary-nexus-pw"
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl": `environments:
  default:
    values:
      - secrets:
          adminUser:
            username: admin
            password: ` + pw + `
---
releases:
  - name: app
    namespace: demo
    chart: oci://r.example/app
    version: 1.0.0
    values:
      - settings.yaml.gotmpl
`,
		"settings.yaml.gotmpl": "mavenSettings: |\n  <servers><server>\n    <username>{{ .Values.secrets.adminUser.username }}</username>\n    <password>{{ .Values.secrets.adminUser.password }}</password>\n  </server></servers>\n",
	})
	res, err := Import(dir, "helmfile.yaml.gotmpl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	all := everything(res)
	if strings.Contains(all, pw) {
		t.Fatalf("the credential is written in plain text:\n%s", all)
	}
	v := varNamed(res, "ADMIN_USER_PASSWORD")
	if v == nil || !v.Secret || !v.Required {
		t.Fatalf("ADMIN_USER_PASSWORD is %+v, want a required secret:\n%s", v, all)
	}
	if !strings.Contains(string(res.Spec), `${ADMIN_USER_PASSWORD|printf "<servers><server>\n  <username>admin</username>\n  <password>%s</password>\n</server></servers>\n"|toJson}`) {
		t.Errorf("mavenSettings is not the string with a reference in it:\n%s", res.Spec)
	}
	if len(res.NotCarried) > 0 {
		t.Errorf("want it carried, got not carried: %v", res.NotCarried)
	}
}

// A chart of a repository the helmfile never declares (helmfile leaves it
// to a `helm repo add` made before it) is carried with the repository's
// URL as a required variable, as the script import does, not dropped.
func TestImportUndeclaredRepositoryIsARequiredVariable(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml": "releases:\n  - name: redis\n    namespace: demo\n    chart: bitnami/redis\n    version: 20.1.0\n",
	})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := varNamed(res, "HELM_REPO_BITNAMI")
	if v == nil || !v.Required || !strings.Contains(string(res.Spec), "repo: ${HELM_REPO_BITNAMI}") || !strings.Contains(string(res.Spec), "chart: redis") {
		t.Fatalf("want chart redis from the required variable HELM_REPO_BITNAMI, got %+v:\n%s", v, res.Spec)
	}
	if len(res.NotCarried) > 0 || res.Releases[0].Verdict != Faithful {
		t.Errorf("want it carried: %v", res.NotCarried)
	}
}

// An inline value helmfile passes to helm as it read it, with YAML 1.2:
// on and yes stay strings (helm template gives the chart "on"), where a
// values file helm reads itself, with YAML 1.1, makes them booleans.
func TestImportYAML11WordsInline(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml": "releases:\n  - name: a\n    namespace: d\n    chart: oci://r.example/a\n    version: 1.0.0\n    values:\n      - v.yaml\n      - f: on\n        g: yes\n",
		"v.yaml":        "e: yes\n",
	})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Spec), `f: "on"`) || !strings.Contains(string(res.Spec), `g: "yes"`) || !strings.Contains(string(res.Spec), "- file: ./v.yaml") {
		t.Errorf("want the inline words quoted and the file read by path:\n%s", res.Spec)
	}
}
