package helmfile

import (
	"strings"
	"testing"
)

// A repository's credentials become auth: on the steps that install from
// it, each a ${VARIABLE}, the password a secret one. Cut down from
// replicatedhq/platform-examples (applications/wg-easy/helmfile.yaml.gotmpl:
// an OCI registry logged in with the license id as both username and
// password; its charts named oci://registry.replicated.com/… directly).
func TestImportRepositoryCredentials(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl": `environments:
  default:
    values:
      - username: '{{env "REPLICATED_LICENSE_ID"}}'
      - password: '{{env "REPLICATED_LICENSE_ID"}}'
---
repositories:
  - name: registry.replicated.com
    oci: true
    url: registry.replicated.com
    username: '{{ .Values.username }}'
    password: '{{ .Values.password }}'
  - name: private
    url: https://charts.example.com
    username: ci
    password: hunter2-literal
  - name: tokens
    url: https://tokens.example.com
    username: {{ requiredEnv "HELM_USER" }}
    password: {{ requiredEnv "HELM_PASSWORD" }}
  - name: half
    url: https://half.example.com
    username: only-me
releases:
  - name: wg-easy
    namespace: wg-easy
    chart: oci://registry.replicated.com/wg-easy-cre/unstable/wg-easy
    version: 1.0.0
  - name: app
    namespace: app
    chart: private/app
    version: 1.0.0
  - name: api
    namespace: api
    chart: tokens/api
    version: 1.0.0
  - name: half
    namespace: half
    chart: half/x
    version: 1.0.0
  - name: public
    namespace: public
    chart: oci://ghcr.io/example/public
    version: 1.0.0
`,
	})
	env := map[string]string{"REPLICATED_LICENSE_ID": "c4nary-license-id", "HELM_USER": "deployer", "HELM_PASSWORD": "c4nary-helm-password"}
	res, err := Import(dir, "helmfile.yaml.gotmpl", Options{Env: func(n string) (string, bool) { v, ok := env[n]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	spec := string(res.Spec)
	for _, secret := range []string{"c4nary-license-id", "hunter2-literal", "c4nary-helm-password"} {
		if strings.Contains(spec, secret) {
			t.Errorf("%s is written:\n%s", secret, spec)
		}
	}
	for _, want := range []string{
		"chart: oci://registry.replicated.com/wg-easy-cre/unstable/wg-easy\n      version: 1.0.0\n      auth:\n        username: ${REPLICATED_LICENSE_ID}\n        password: ${REPLICATED_LICENSE_ID}\n",
		"REPLICATED_LICENSE_ID: {type: string, secret: true, required: true,",
		"repo: https://charts.example.com\n      version: 1.0.0\n      auth:\n        username: ci\n        password: ${HELM_REPO_PRIVATE_PASSWORD}\n",
		"HELM_REPO_PRIVATE_PASSWORD: {type: string, secret: true, required: true,",
		"auth:\n        username: ${HELM_USER}\n        password: ${HELM_PASSWORD}\n",
		"HELM_PASSWORD: {type: string, secret: true, required: true,",
	} {
		if !strings.Contains(spec, want) {
			t.Errorf("no %q in:\n%s", want, spec)
		}
	}
	if n := strings.Count(spec, "      auth:\n"); n != 3 {
		t.Errorf("%d steps with auth:, want 3 (not the public registry, not the half-given one):\n%s", n, spec)
	}
	var notes []string
	for _, n := range res.NotCarried {
		notes = append(notes, n.String())
	}
	if all := strings.Join(notes, "\n"); len(notes) != 1 || !strings.Contains(all, "helmfile.yaml.gotmpl:23: repository half credentials: not both a username and a password") {
		t.Errorf("not carried: want only the half-given credentials at their line, got:\n%s", all)
	}
	// requiredEnv unset at import: its placeholder becomes the variable.
	delete(env, "HELM_PASSWORD")
	res, err = Import(dir, "helmfile.yaml.gotmpl", Options{Env: func(n string) (string, bool) { v, ok := env[n]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	if spec := string(res.Spec); !strings.Contains(spec, "password: ${HELM_PASSWORD}\n") || strings.Contains(spec, unsetPrefix) {
		t.Errorf("an unset requiredEnv password is not ${HELM_PASSWORD}:\n%s", spec)
	}
}

// A hook that logs in to a registry (`helm registry login`, helmfile's
// own way to reach a private OCI registry before v0.150's oci: true)
// gives the releases that install from that host its auth:.
func TestImportHookRegistryLogin(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml": `releases:
  - name: app
    namespace: app
    chart: oci://ghcr.io/example/charts/app
    version: 1.0.0
    hooks:
      - events: [prepare]
        command: bash
        args: [-c, 'echo "$GHCR_TOKEN" | helm registry login ghcr.io -u bot --password-stdin']
  - name: other
    namespace: other
    chart: oci://quay.io/example/other
    version: 1.0.0
`,
	})
	res, err := Import(dir, "helmfile.yaml", Options{Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	spec := string(res.Spec)
	for _, want := range []string{
		"chart: oci://ghcr.io/example/charts/app\n      version: 1.0.0\n      auth:\n        username: bot\n        password: ${GHCR_TOKEN}\n",
		"GHCR_TOKEN: {type: string, secret: true, required: true",
	} {
		if !strings.Contains(spec, want) {
			t.Errorf("no %q in:\n%s", want, spec)
		}
	}
	if n := strings.Count(spec, "      auth:\n"); n != 1 {
		t.Errorf("%d steps with auth:, want 1:\n%s", n, spec)
	}
	for _, r := range res.Releases {
		if len(r.NotCarried) > 0 {
			t.Errorf("release %s: not carried %v", r.Resolved.Name, r.NotCarried)
		}
	}
}
