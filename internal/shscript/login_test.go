package shscript

import (
	"os"
	"strings"
	"testing"

	"github.com/khook/khook/test/chartsrc"
)

// A registry login or a private repository's credentials go into auth: of
// the steps that install from it, the password a secret variable, never
// its value. The idioms are those of public install scripts and guides:
// `printf '%s' "$NGC_API_KEY" | helm registry login nvcr.io --username
// '$oauthtoken' --password-stdin` (NVIDIA NGC), `echo "$AC_PASS" | helm
// registry login "$AC_REGISTRY" -u "$AC_USER" --password-stdin` (SUSE
// Application Collection), `helm registry login -u $USER localhost:5000 -p
// $PWD` (a local registry for e2e), an interactive login (NGINX App Protect).
func TestRegistryLoginBecomesAuth(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -euo pipefail
AC_REGISTRY=${AC_REGISTRY:-dp.apps.rancher.io}
printf '%s' "$NGC_API_KEY" | helm registry login nvcr.io --username '$oauthtoken' --password-stdin
echo "$AC_PASS" | helm registry login "$AC_REGISTRY" -u "$AC_USER" --password-stdin
helm registry login -u foo localhost:5000 -p c4nary-local-pwd
helm registry login private-registry.nginx.com
helm repo add corp https://charts.corp.example --username "$CORP_USER" --password "$CORP_TOKEN"
helm upgrade --install mosaic oci://nvcr.io/0948643769302270/afoa-release/mosaic-stack --version 1.0.0 -n mosaic
helm upgrade --install obs oci://dp.apps.rancher.io/charts/opentelemetry --version 1.0.0 -n obs
helm upgrade --install podinfo oci://localhost:5000/charts/podinfo --version 6.1.5 -n podinfo
helm upgrade --install nap oci://private-registry.nginx.com/nap/nginx-app-protect --version 5.9.0 -n nap
helm upgrade --install app corp/app --version 1.0.0 -n app
helm registry logout nvcr.io
helm upgrade --install later oci://nvcr.io/x/later --version 1.0.0 -n later
helm upgrade --install direct web --repo https://charts.example.org --username bob --password "$DIRECT_TOKEN" --version 1.0.0 -n direct
`})
	spec := string(res.Spec)
	if strings.Contains(spec, "c4nary-local-pwd") {
		t.Fatalf("the password is written:\n%s", spec)
	}
	auth := func(step string) string {
		i := strings.Index(spec, "\n  - name: "+step+"\n")
		if i < 0 {
			t.Fatalf("no step %s:\n%s", step, spec)
		}
		rest := spec[i+1:]
		if j := strings.Index(rest[1:], "\n  - name: "); j >= 0 {
			rest = rest[:j+1]
		}
		a := strings.Index(rest, "      auth:\n")
		if a < 0 {
			return ""
		}
		lines := strings.SplitN(rest[a:], "\n", 4)
		return strings.TrimSpace(lines[1]) + " " + strings.TrimSpace(lines[2])
	}
	for step, want := range map[string]string{
		"mosaic":  "username: $oauthtoken password: ${NGC_API_KEY}",
		"obs":     "username: ${AC_USER} password: ${AC_PASS}",
		"podinfo": "username: foo password: ${REGISTRY_LOCALHOST_5000_PASSWORD}",
		"app":     "username: ${CORP_USER} password: ${CORP_TOKEN}",
		"nap":     "",
		"later":   "",
		"direct":  "username: bob password: ${DIRECT_TOKEN}",
	} {
		if got := auth(step); got != want {
			t.Errorf("step %s: auth %q, want %q", step, got, want)
		}
	}
	for _, want := range []string{
		"NGC_API_KEY: {type: string, secret: true, required: true",
		"AC_PASS: {type: string, secret: true, required: true",
		"REGISTRY_LOCALHOST_5000_PASSWORD: {type: string, secret: true, required: true",
		"CORP_TOKEN: {type: string, secret: true, required: true",
	} {
		if !strings.Contains(spec, want) {
			t.Errorf("no %q in:\n%s", want, spec)
		}
	}
	for line, want := range map[int]string{4: "folded", 5: "folded", 6: "folded", 7: "not carried", 8: "folded", 14: "folded"} {
		if got := fateAt(res.Model, line); got != want {
			t.Errorf("line %d: %s, want %s", line, got, want)
		}
	}
}

// helm --verify --keyring K is the step's verify.provenance.keyring; a
// --verify with the machine's keyring, or of a chart folder, is not carried.
func TestVerifyKeyringBecomesVerify(t *testing.T) {
	ring, err := os.ReadFile(chartsrc.NewSigner(t, "Chart Signer").PublicRing)
	if err != nil {
		t.Fatal(err)
	}
	res := importScript(t, map[string]string{
		"keys/pubring.gpg": string(ring),
		"chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
		"install.sh": `#!/bin/bash
helm upgrade --install signed signed --repo https://charts.example.com --version 1.0.0 -n a --verify --keyring ./keys/pubring.gpg
helm upgrade --install home home --repo https://charts.example.com --version 1.0.0 -n a --verify
helm upgrade --install local ./chart -n a --verify --keyring keys/pubring.gpg
`})
	spec := string(res.Spec)
	if want := "      verify:\n        provenance:\n          keyring: ./keys/pubring.gpg\n"; strings.Count(spec, want) != 1 {
		t.Errorf("want one step with %q:\n%s", want, spec)
	}
	var why []string
	for _, n := range res.Model.NotCarried {
		why = append(why, n.String())
	}
	all := strings.Join(why, "\n")
	for _, want := range []string{"install.sh:3: --verify: helm verifies with ~/.gnupg/pubring.gpg", "install.sh:4: --verify: helm verifies only a packaged chart"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in:\n%s", want, all)
		}
	}
}
