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
// keeps running is the Pod kubectl makes, applied.
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
	if fateAt(res.Model, 5) != "step" || !strings.Contains(spec, "restartPolicy: Always") || len(infoLines(res.Model, "the script went on without waiting")) != 1 {
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

// A wrapper runs the helm or kubectl command it is given: nohup, timeout
// N, command, env K=V, nice (46zc's D7: `nohup kubectl port-forward &` was
// named as a nohup command; `command kubectl …` was dropped without a
// word); `command -v kubectl` only looks it up.
func TestWrappersRunTheirCommand(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
command -v kubectl >/dev/null || exit 1
nohup kubectl -n web port-forward svc/web 8888:80 > /tmp/pf.log &
timeout 300 kubectl wait --for=condition=Available deployment/web -n web
command kubectl create namespace bar
env FOO=c4nary-env-value KUBECONFIG=/tmp/k kubectl create namespace foo
nice -n 10 helm upgrade --install a a --repo https://c.example.com --version 1.0.0 -n a
`})
	for line, want := range map[int]string{4: "not carried", 5: "step", 6: "step", 7: "step", 8: "step"} {
		if got := fateAt(res.Model, line); got != want {
			t.Errorf("line %d: %q, want %q", line, got, want)
		}
	}
	if fateAt(res.Model, 3) != "" {
		t.Errorf("command -v is counted: %s", fateAt(res.Model, 3))
	}
	var all []string
	for _, n := range append(res.Model.NotCarried, res.Model.Info...) {
		all = append(all, n.String())
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{"install.sh:4: nohup kubectl -n web port-forward", "it only opens a local connection", "install.sh:5: timeout 300: khook gives each step its own timeout", "install.sh:7: env FOO: khook runs its own kubectl without these variables", "install.sh:7: env KUBECONFIG: the script points"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}
	if strings.Contains(text+string(res.Spec), "c4nary-env-value") {
		t.Errorf("an env value is written")
	}
}
