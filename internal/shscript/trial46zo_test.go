package shscript

import (
	"fmt"
	"strings"
	"testing"
)

// What held-out trial 46zo (Pulsar/Redpanda and team-chat installers, run
// once on d6b8935) showed, each cut down.

// D1 (Rocket.Chat): --set a=$(openssl rand …),b=$(openssl rand …) is two
// generated secrets, as one pair is; a repo add whose only user is not
// carried is not "folded" either.
func TestGeneratedSetPairsAndUnusedRepo(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/sh
set -e
helm repo add rc https://charts.example.com/rc
helm repo add other https://charts.example.com/other
helm repo add gone https://charts.example.com/gone
helm -n rc upgrade --install rc rc/app --set db.password=$(echo -n $(openssl rand -base64 32)),db.rootPassword=$(openssl rand -base64 32)
helm install x gone/chart --set "a=$(date)-$(hostname)"
`})
	spec := string(res.Spec)
	for _, want := range []string{"DB_PASSWORD: {type: string, secret: true", "DB_ROOT_PASSWORD: {type: string, secret: true", "password: ${DB_PASSWORD}", "rootPassword: ${DB_ROOT_PASSWORD}"} {
		if !strings.Contains(spec, want) {
			t.Errorf("no %q in\n%s", want, spec)
		}
	}
	if fateAt(res.Model, 3) != "folded" || fateAt(res.Model, 4) != "read-only" || fateAt(res.Model, 5) != "not carried" {
		t.Errorf("repo adds: %q %q %q", fateAt(res.Model, 3), fateAt(res.Model, 4), fateAt(res.Model, 5))
	}
}

// D2 (Redpanda): alias helm=/usr/local/bin/helm is not expanded, and helm
// runs as written: the commands are carried.
func TestAliasOfTheToolItself(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nalias helm=/usr/local/bin/helm\nhelm upgrade --install op operator --repo https://charts.example.com/rp -n rp\n"})
	if fateAt(res.Model, 3) != "step" {
		t.Errorf("line 3: %q %v", fateAt(res.Model, 3), res.Model.NotCarried)
	}
}

// D3 (Mattermost): sed -i "s/$OLD/$NEW/" of a pattern the script computes
// replaces what only the run knows: the file's text is not known.
func TestSedPatternOnlyTheRunKnows(t *testing.T) {
	res := importScript(t, map[string]string{"template.yaml": "kind: ConfigMap\napiVersion: v1\nmetadata: {name: mm}\ndata: {host: mm.example.com}\n", "install.sh": `#!/bin/sh
read DOMAIN_NAME
cp template.yaml app.yaml
OLD_DOMAIN=$(grep host app.yaml | cut -d":" -f2)
sed -i "s/$OLD_DOMAIN/$DOMAIN_NAME/g" app.yaml
kubectl apply -n app -f app.yaml
`})
	if fateAt(res.Model, 6) != "not carried" || !strings.Contains(res.Model.NotCarried[0].Why, "the text sed replaces is ${OLD_DOMAIN}") {
		t.Errorf("line 6: %q %v", fateAt(res.Model, 6), res.Model.NotCarried)
	}
}

// D4 (Redpanda): cat < values.yaml of a file nobody makes, where << EOF
// was meant, fails under set -e: said once, the YAML lines after it
// (bash's commands not found) with it.
func TestCatFromAMissingFile(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\ncat < values.yaml\nreplicas: 1\nEOF\nkubectl create namespace rp\n"})
	nc := res.Model.NotCarried
	if len(nc) != 1 || !strings.Contains(nc[0].Why, "a here-document whose << is mistyped?") || !strings.Contains(nc[0].Why, "bash never runs the 1 helm/kubectl command(s) after it") {
		t.Errorf("not carried %v", nc)
	}
}

// D5 (Jitsi): a script the script runs is a new process: the variables it
// sets are not the caller's after it.
func TestCalledScriptKeepsItsVariables(t *testing.T) {
	res := importScript(t, map[string]string{"base/app.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\n",
		"scripts/gen.sh": "#!/usr/bin/env bash\nif [ -n \"${X:-}\" ]; then BASE_DIR=$(mktemp -d); fi\n",
		"install.sh":     "#!/usr/bin/env bash\nset -euo pipefail\nBASE_DIR=./base\nbash scripts/gen.sh\nkubectl apply -f \"$BASE_DIR/app.yaml\"\n"})
	if fateAt(res.Model, 5) != "step" {
		t.Errorf("line 5: %q %v", fateAt(res.Model, 5), res.Model.NotCarried)
	}
}

// N1, N4, N5: $(helm repo list) is a read; watch kubectl get is a read
// that never returns; a poll on kubectl get | grep is in the count.
func TestPollsAndReadsAccounted(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
kubectl create namespace rp
while ! kubectl get pod -n rp -l app=rp | grep -w Running; do
  sleep 1
done
repo_exists=$(helm repo list -o json | yq ".[]")
watch -n 5 kubectl get deployments.apps -A
kubectl create namespace zz
`})
	if fateAt(res.Model, 3) != "not carried" || fateAt(res.Model, 6) != "read-only" || fateAt(res.Model, 7) != "read-only" {
		t.Errorf("fates %q %q %q", fateAt(res.Model, 3), fateAt(res.Model, 6), fateAt(res.Model, 7))
	}
	if all := fmt.Sprint(res.Model.Info); !strings.Contains(all, "watch repeats it until it is stopped") || !strings.Contains(all, "(the first at install.sh:8)") {
		t.Errorf("info %v", res.Model.Info)
	}
}

// N3 (Mattermost): wget URL, then kubectl apply -f of the file, is the
// apply of the URL (curl -o, curl > f, a values file alike); a download
// the script edits is the file the run makes, its makers named.
func TestDownloadedManifestIsItsURL(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
wget https://example.com/docs/minio-operator.yaml
kubectl apply -n minio -f minio-operator.yaml
curl -sLo values.yaml https://example.com/charts/values.yaml
helm upgrade --install app app --repo https://charts.example.com -n app -f values.yaml
curl -sL https://example.com/edited.yaml > edited.yaml
sed -i "s/foo/bar/" edited.yaml
kubectl apply -n edit -f edited.yaml
`})
	spec := string(res.Spec)
	for _, want := range []string{"- url: https://example.com/docs/minio-operator.yaml", "valuesFrom:\n        - url: https://example.com/charts/values.yaml"} {
		if !strings.Contains(spec, want) {
			t.Errorf("no %q in\n%s", want, spec)
		}
	}
	if fateAt(res.Model, 9) != "not carried" || !strings.Contains(fmt.Sprint(res.Model.NotCarried), "the script makes it earlier (install.sh:7 curl, install.sh:8 sed)") {
		t.Errorf("line 9: %q %v", fateAt(res.Model, 9), res.Model.NotCarried)
	}
}

// 46zl's D5, left since: export $(cat .env | xargs) sets the file's
// variables, as a source of it does; a secret among them stays a secret
// variable. A .env not there sets none.
func TestExportOfAnEnvFile(t *testing.T) {
	script := "#!/bin/bash\nset -e\nexport $(grep -v '^#' .env | xargs)\nkubectl create namespace $NS\nhelm upgrade --install db db --repo https://charts.example.com -n $NS --set auth.password=$DB_PASSWORD\n"
	res := importScript(t, map[string]string{".env": "# the shop\nNS=shop\nDB_PASSWORD=Sup3rS3cretPw\n", "install.sh": script})
	spec := string(res.Spec)
	if !strings.Contains(spec, "name: shop") || strings.Contains(spec, "Sup3rS3cretPw") || !strings.Contains(spec, "DB_PASSWORD: {type: string, secret: true") {
		t.Errorf("spec:\n%s", spec)
	}
	res = importScript(t, map[string]string{"install.sh": script})
	if spec := string(res.Spec); !strings.Contains(spec, "NS: {type: string, required: true") {
		t.Errorf("without .env:\n%s", spec)
	}
}

// D6 (Redpanda): a variable that is a repository's URL is declared
// format: url, so the inputs' schema says what validate checks.
func TestRepoURLVariableHasFormat(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nREPO=\"${REPO:-https://charts.example.com/rp}\"\nhelm repo add rp \"${REPO}\"\nhelm upgrade --install rp rp/redpanda -n rp\nhelm upgrade --install other other --repo \"${OTHER_REPO}\" -n rp\n"})
	spec := string(res.Spec)
	for _, want := range []string{"REPO: {type: string, format: url,", "OTHER_REPO: {type: string, format: url,"} {
		if !strings.Contains(spec, want) {
			t.Errorf("no %q in\n%s", want, spec)
		}
	}
}

// A .env that is no shell syntax (KEY=a(b)) is read as xargs reads it,
// never bad input.
func TestExportOfAnEnvFileXargsReads(t *testing.T) {
	res := importScript(t, map[string]string{".env": "NS=shop\nWEIRD=a(b)\n", "install.sh": "#!/bin/bash\nexport $(cat .env | xargs)\nkubectl create namespace $NS\n"})
	if !strings.Contains(string(res.Spec), "name: shop") {
		t.Errorf("spec:\n%s", res.Spec)
	}
}
