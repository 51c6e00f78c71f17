package shscript

import (
	"strings"
	"testing"
)

// Helm 4's --server-side and --force-conflicts are what khook's helm steps
// do (a warning); --no-hooks, --enable-dns and the TLS flags change what
// is installed or fetched, so the command is partial, each with why.
func TestHelmFlagsSaidAsTheyMatter(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
helm upgrade --install a a --repo https://charts.example.com --version 1.0.0 -n a --server-side=true --force-conflicts
helm upgrade --install b b --repo https://charts.example.com --version 1.0.0 -n b --no-hooks --enable-dns
helm upgrade --install c c --repo https://charts.example.com --version 1.0.0 -n c --ca-file ./ca.pem --insecure-skip-tls-verify
`})
	var notes []string
	for _, n := range res.Model.NotCarried {
		notes = append(notes, n.String())
	}
	all := strings.Join(notes, "\n")
	for _, want := range []string{"install.sh:3: --no-hooks: khook runs the chart's hooks", "install.sh:3: --enable-dns: khook renders charts", "install.sh:4: --ca-file: khook checks", "install.sh:4: --insecure-skip-tls-verify: khook checks"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in:\n%s", want, all)
		}
	}
	if strings.Contains(all, "install.sh:2") {
		t.Errorf("--server-side/--force-conflicts not carried:\n%s", all)
	}
	if got := len(infoLines(res.Model, "apply server-side")); got != 2 {
		t.Errorf("%d warnings for --server-side/--force-conflicts, want 2", got)
	}
}

// kubectl run --restart=Never is a pod that runs a command to its end: a
// job: step (a literal credential in --env a secret variable); a pod that
// keeps running is not.
func TestKubectlRunBecomesJob(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
kubectl run smoke --image=curlimages/curl:8.10.1 --restart=Never --rm -i -n app -- curl -fsS http://web
kubectl run migrate --image=ghcr.io/acme/migrate:1 --restart=Never -n app --env=MODE=online --env=DB_PASSWORD=c4nary-db-pw --command -- /migrate up
kubectl run web --image=nginx -n app
`})
	spec := string(res.Spec)
	for _, want := range []string{
		"    job:\n      image: curlimages/curl:8.10.1\n      args:\n        - curl\n        - -fsS\n        - http://web\n      namespace: app\n",
		"      command:\n        - /migrate\n        - up\n      env:\n        DB_PASSWORD: ${MIGRATE_DB_PASSWORD}\n        MODE: online\n",
	} {
		if !strings.Contains(spec, want) {
			t.Errorf("no %q in:\n%s", want, spec)
		}
	}
	if strings.Contains(spec, "c4nary-db-pw") {
		t.Errorf("the password is written:\n%s", spec)
	}
	if fateAt(res.Model, 5) != "not carried" || len(infoLines(res.Model, "the script went on without waiting")) != 1 {
		t.Errorf("kubectl run web: %s; warnings %v", fateAt(res.Model, 5), res.Model.Info)
	}
}

// A check that stops the script without a secret makes it required, as it
// does a plain variable (trial 46zc's D2: NVIDIA's RAG blueprint would
// have applied a pull Secret with an empty password).
func TestExitGuardMakesSecretRequired(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -euo pipefail
if [[ -z "${NGC_API_KEY:-}" ]]; then
  echo "NGC_API_KEY not set" >&2
  exit 1
fi
kubectl create secret docker-registry ngc-secret --namespace=rag \
  --docker-server=nvcr.io --docker-username='$oauthtoken' \
  --docker-password="$NGC_API_KEY" --dry-run=client -o yaml | kubectl apply -f -
`})
	if want := `NGC_API_KEY: {type: string, secret: true, required: true, description: "the script stops without it (install.sh:3)"}`; !strings.Contains(string(res.Spec), want) {
		t.Errorf("no %q in:\n%s", want, res.Spec)
	}
}
