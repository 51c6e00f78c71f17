package shscript

import (
	"fmt"
	"strings"
	"testing"
)

// What held-out trial 46zf (networking, identity, demo-app and
// multi-cluster installers, run once on ff49685) showed, each cut down.

// D1 (a Karmada lab): a file the script writes and then sources, and D2
// (a CloudLab profile): one of the machine the script runs on, are no
// bad input: named at the line, the rest carried. A file of the checkout
// that is not there still is (TestBadInput).
func TestSourcedFileNotOfTheCheckout(t *testing.T) {
	for name, src := range map[string]string{
		"written": "#!/bin/bash\nset -e\necho 'export KUBE_NS=\"demo\"' >> .bashrc && source .bashrc\nkubectl create namespace demo\n",
		"machine": "#!/bin/sh\nset -e\nOURDIR=/local/setup\n. $OURDIR/parameters\nkubectl create namespace demo\n",
	} {
		res := importScript(t, map[string]string{"install.sh": src})
		if len(res.Model.NotCarried) != 1 || !strings.Contains(res.Model.NotCarried[0].Why, "it sources") || !strings.Contains(string(res.Spec), "name: demo") {
			t.Errorf("%s: %v\n%s", name, res.Model.NotCarried, res.Spec)
		}
	}
}

// D3 (Kong Enterprise, Envoy Gateway): a guard on a file the README has
// the user place (a licence, an .env) asks for it, as for a required
// variable: the import goes on past it, and a source of it is named. A
// folder of the checkout that is missing still stops it (46k's guard).
func TestGuardOnAFileTheUserPlaces(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -euo pipefail
if [[ ! -f "./license.json" ]]; then
  echo "Error: license file not found"
  exit 1
fi
[ -f ./.env ] && echo found
if [ ! -f "./.env" ]; then echo ".env file is missing."; exit 1; fi
source ./.env
KUBECONFIG_STR=""
if [ "$KUBECONFIG_PATH" != "" ]; then
  KUBECONFIG_STR="--kubeconfig $KUBECONFIG_PATH"
fi
helm $KUBECONFIG_STR upgrade --install kong-cp kong -n kong --repo https://charts.konghq.com
`})
	if len(res.Model.NotCarried) != 1 || !strings.Contains(res.Model.NotCarried[0].Why, "which you place before the run (the script's guard at install.sh:8)") {
		t.Errorf("not carried %v", res.Model.NotCarried)
	}
	if fateAt(res.Model, 14) != "step" { // one line, counted once (46s68b D2)
		t.Errorf("line 14: %q\n%s", fateAt(res.Model, 14), res.Spec)
	}
}

// D4, D5 (MetalLB's strictARP, cert-manager's CRDs): a pipeline into
// kubectl diff is read-only; get | sed | apply names the edit; and
// --validate=false is said.
func TestDiffPipelineAndValidate(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
kubectl get configmap kube-proxy -n kube-system -o yaml | sed -e "s/strictARP: false/strictARP: true/" | kubectl diff -f - -n kube-system
kubectl get configmap kube-proxy -n kube-system -o yaml | sed -e "s/strictARP: false/strictARP: true/" | kubectl apply -f - -n kube-system
kubectl apply --validate=false -f https://example.com/crds.yaml
`})
	if fateAt(res.Model, 3) != "read-only,read-only" {
		t.Errorf("line 3: %q", fateAt(res.Model, 3))
	}
	var said []string
	for _, n := range append(res.Model.NotCarried, res.Model.Info...) {
		said = append(said, n.String())
	}
	text := strings.Join(said, "\n")
	for _, want := range []string{"the script edits the live object with sed", "--validate=false: khook's apply validates strictly"} {
		if !strings.Contains(text, want) {
			t.Errorf("want %q in\n%s", want, text)
		}
	}
}

// Left from stop 63: a loop that stops the script when a variable it names
// is empty (${!v}) makes each of them required.
func TestIndirectEmptinessInLoop(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
for v in DB_PASSWORD REGION; do
  if [ -z "${!v}" ]; then
    echo "$v is required"
    exit 1
  fi
done
helm upgrade --install app oci://r.example.com/app -n app --set db.password="$DB_PASSWORD" --set region="$REGION"
`})
	for _, want := range []string{"DB_PASSWORD: {type: string, secret: true, required: true", "REGION: {type: string, required: true"} {
		if !strings.Contains(string(res.Spec), want) {
			t.Errorf("want %q in\n%s", want, res.Spec)
		}
	}
}

// 46zh D5, 46zi D6: a condition only the run decides whose branches make
// no step (they only print) declares no variable and names none.
func TestChoiceWithoutStepsNamesNoVariable(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
INFO() { echo "[INFO] $@"; }
minikube status >/dev/null 2>&1
if [[ $? < 2 ]]; then
  INFO "minikube is running"
else
  INFO "starting minikube"
fi
kubectl create ns argo
`})
	said := fmt.Sprint(res.Model.Info, res.Model.NotCarried)
	if strings.Contains(said, "IF_") || strings.Contains(string(res.Spec), "IF_") {
		t.Errorf("a variable is named:\n%s\n%s", said, res.Spec)
	}
}

// 46zi D2 (k6 tests): a ConfigMap from a file holding ${…} of its own
// (a JavaScript template literal) keeps it literal; the import wrote
// nothing before, refusing its own spec.
func TestConfigMapFileWithDollarBrace(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/usr/bin/env bash\nset -euo pipefail\nkubectl -n k6 create configmap k6-script --from-file \"test.js=js/test.js\" --dry-run=client -o yaml | kubectl apply -f -\n",
		"js/test.js": "export default function () {\n  const name = `user_${__VU}`;\n}\n"})
	if !strings.Contains(string(res.Spec), "const name = `user_$${__VU}`;") {
		t.Errorf("spec:\n%s", res.Spec)
	}
}

// 46zi D3 (OpenCost, KEDA installers): run with no arguments, an option
// loop leaves the script's defaults: variables with those defaults, which
// the run may change as an option would, never required ones.
func TestOptionLoopKeepsDefaults(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
NAMESPACE="demo"
DRY_RUN=false
while [[ $# -gt 0 ]]; do
  case $1 in
    -n) NAMESPACE="$2"; shift 2 ;;
    --dry-run) DRY_RUN=true; shift ;;
    *) exit 1 ;;
  esac
done
if [ "$DRY_RUN" = false ]; then
  kubectl create namespace "$NAMESPACE"
fi
`})
	for _, want := range []string{`DRY_RUN: {type: string, default: "false"`, `NAMESPACE: {type: string, default: "demo"`, "name: ${NAMESPACE}"} {
		if !strings.Contains(string(res.Spec), want) {
			t.Errorf("want %q in\n%s", want, res.Spec)
		}
	}
}

// 46zi D4 (a KEDA installer): the verb from $([ "$UPGRADE" = true ] &&
// echo "upgrade --install" || echo install), its condition decided at
// import, makes the command one khook reads.
func TestEchoChoiceInCommandVariable(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/usr/bin/env bash
set -euo pipefail
UPGRADE=false
helm repo add kedacore https://kedacore.github.io/charts
HELM_CMD="helm $([ "$UPGRADE" = true ] && echo "upgrade --install" || echo "install") keda kedacore/keda"
HELM_ARGS=("--namespace" "keda" "--wait")
${HELM_CMD} "${HELM_ARGS[@]}"
`})
	if fateAt(res.Model, 7) != "step" || !strings.Contains(string(res.Spec), "release: keda\n      namespace: keda") {
		t.Errorf("line 7 %q:\n%s", fateAt(res.Model, 7), res.Spec)
	}
}

// 46zh D1 (BinderHub): a called ./x.bash is followed as ./x.sh is; D2
// (Argo's setup): kubectl create role makes the Role kubectl makes, a
// rule per API group in the groups' order.
func TestBashSuffixAndCreateRole(t *testing.T) {
	res := importScript(t, map[string]string{
		"install.sh":                "#!/bin/bash\nset -e\n./certbot/install-cert.bash\nkubectl -n argo create role argo-user --verb=list,get --resource=workflows.argoproj.io,pods --dry-run=client -o yaml | kubectl apply -f -\n",
		"certbot/install-cert.bash": "#!/bin/bash\nkubectl create namespace certs\n",
	})
	if fateAt(res.Model, 2) != "step" && !strings.Contains(string(res.Spec), "name: certs") {
		t.Errorf("the .bash script is not followed:\n%s", res.Spec)
	}
	want := "rules:\n              - apiGroups:\n                  - \"\"\n                resources:\n                  - pods\n                verbs:\n                  - list\n                  - get\n              - apiGroups:\n                  - argoproj.io\n                resources:\n                  - workflows\n"
	if !strings.Contains(string(res.Spec), want) {
		t.Errorf("want %q in\n%s", want, res.Spec)
	}
}

// 46zh D4 (Volcano's installer): a check of a value read from the cluster
// that stops the script is named, not dropped under a faithful verdict.
func TestPostInstallCheckNamed(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/usr/bin/env bash
set -euo pipefail
kubectl apply -f https://example.com/app.yaml -n app
cfg=$(kubectl -n app get configmap app-config -o jsonpath='{.data.conf}')
if [[ "$cfg" != *"name: priority"* ]]; then
  echo "priority plugin not enabled" >&2
  exit 1
fi
`})
	if len(res.Model.NotCarried) != 1 || res.Model.NotCarried[0].Line != 5 || !strings.Contains(res.Model.NotCarried[0].Why, "a check of what the script read from the cluster") {
		t.Errorf("not carried %v", res.Model.NotCarried)
	}
}

// 46zi D1 (a Chaos Mesh installer): -f "$INGRESS_FILE" with a file's path
// as its default applies that file, never a step per directory.
func TestFileVariableWithDefaultIsNoDirectoryChoice(t *testing.T) {
	res := importScript(t, map[string]string{
		"scripts/install.sh": "#!/usr/bin/env bash\nset -euo pipefail\nINGRESS_FILE=\"${INGRESS_FILE:-cfg/ingress.yaml}\"\nkubectl apply -f \"$INGRESS_FILE\" -n demo\n",
		"install.sh":         "#!/bin/bash\nset -e\nbash scripts/install.sh\n",
		"cfg/ingress.yaml":   configMap,
	})
	if !strings.Contains(string(res.Spec), "- file: ${INGRESS_FILE}") || res.Model.Verdict() != "faithful" {
		t.Errorf("%v\n%s", res.Model.NotCarried, res.Spec)
	}
}

// 46zi D6 (a LitmusChaos installer): a fallback after || that applies
// other manifests is not run after a success; one that installs the same
// release (helm upgrade x || helm install x) folds into its step.
func TestFallbackAfterOr(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
curl -sL https://example.org/crds-v1.yaml | kubectl apply -f - || {
  curl -sL https://example.org/crds-master.yaml | kubectl apply -f -
}
helm upgrade app oci://r.example.com/app -n app || helm install app oci://r.example.com/app -n app --create-namespace
`})
	if fateAt(res.Model, 4) != "not carried" || fateAt(res.Model, 6) != "step,folded" {
		t.Errorf("fates %v\n%s", res.Model.Commands, res.Spec)
	}
	if strings.Contains(string(res.Spec), "crds-master") || !strings.Contains(string(res.Spec), "createNamespace: true") {
		t.Errorf("spec:\n%s", res.Spec)
	}
}

// 46zj D1 (Harbor, Gitea installers): a credential literal in values the
// script writes from a here-document becomes a secret variable, as one
// given with --set does; never written.
func TestLiteralCredentialInValuesHeredoc(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
cat > /tmp/vals.yaml <<'VALS'
harborAdminPassword: "c4nary-harbor-admin"
externalURL: http://harbor.example
gitea:
  config:
    security:
      SECRET_KEY: c4nary-gitea-secret
      INSTALL_LOCK: true
env:
  - name: DB_PASSWORD
    value: c4nary-db-pass
VALS
helm install harbor harbor --repo https://helm.goharbor.io -f /tmp/vals.yaml -n harbor --create-namespace
`})
	spec := string(res.Spec)
	said := fmt.Sprint(res.Model.Info, res.Model.NotCarried)
	if strings.Contains(spec+said, "c4nary") {
		t.Errorf("a literal is written:\n%s\n%s", spec, said)
	}
	for _, want := range []string{"harborAdminPassword: ${HARBORADMINPASSWORD | toJson}", "SECRET_KEY: ${GITEA_CONFIG_SECURITY_SECRET_KEY | toJson}", "value: ${DB_PASSWORD | toJson}", "externalURL: http://harbor.example"} {
		if !strings.Contains(spec, want) {
			t.Errorf("want %q in\n%s", want, spec)
		}
	}
}

// 46zk D1 (Dagster in kind): set-context kind-kind --namespace X after
// kind create cluster --name kind sets the namespace of what follows.
func TestSetContextOfCreatedCluster(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
kind create cluster --name kind
kubectl create namespace dinkind
kubectl config set-context kind-kind --namespace dinkind
helm upgrade --install dinkind dagster --repo https://dagster-io.github.io/helm
`})
	if !strings.Contains(string(res.Spec), "release: dinkind\n      namespace: dinkind") || fateAt(res.Model, 5) != "folded" {
		t.Errorf("line 5 %q:\n%s", fateAt(res.Model, 5), res.Spec)
	}
}

// 46zk D2 (an OpenSearch deploy): a kubectl command find runs from a
// string is a kubectl command of the script, named at its line.
func TestToolInFindExecString(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nfind ./stacks/ -name '*.yaml' -exec sh -c 'kubectl apply -f \"$1\" --namespace demo' _ {} \\;\n"})
	if fateAt(res.Model, 3) != "not carried" {
		t.Errorf("line 3: %q", fateAt(res.Model, 3))
	}
}

// 46zj D4 (a Harbor playground): values read with jq from a JSON file of
// the checkout are computed at import, never required secrets; kubectl
// create service clusterip makes kubectl's Service.
func TestJQFromCheckoutFileAndCreateService(t *testing.T) {
	res := importScript(t, map[string]string{
		"install.sh":  "#!/bin/bash\nset -e\nNAMESPACE=\"$(jq -r '.services[] | select(.name==\"web\") | .namespace' config.json)\"\nPORT=\"$(jq -r '.services[0].port' config.json)\"\nkubectl create namespace ${NAMESPACE}\nkubectl -n ${NAMESPACE} create service clusterip web --tcp=${PORT}:8080\n",
		"config.json": `{"services": [{"name": "web", "namespace": "webns", "port": 8443}]}`,
	})
	spec := string(res.Spec)
	for _, want := range []string{"name: webns", "- name: 8443-8080\n                  port: 8443\n                  protocol: TCP\n                  targetPort: 8080", "type: ClusterIP"} {
		if !strings.Contains(spec, want) {
			t.Errorf("want %q in\n%s", want, spec)
		}
	}
	if strings.Contains(spec, "vars:") || res.Model.Verdict() != "faithful" {
		t.Errorf("%s %v\n%s", res.Model.Verdict(), res.Model.NotCarried, spec)
	}
}

// 46zj D2 (a media lab): envsubst < a file the checkout does not have (its
// name's case wrong) says so, not "made by a command".
func TestEnvsubstOfMissingFile(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nenvsubst < app/Two-Lower.yaml | kubectl apply -f -\n", "app/two-lower.yaml": configMap})
	if len(res.Model.NotCarried) == 0 || !strings.Contains(res.Model.NotCarried[0].Why, "is not in the checkout, so the script fails to read it as well") {
		t.Errorf("not carried %v", res.Model.NotCarried)
	}
}

// 46zj D3 (a Harbor playground): a condition the spec takes as not
// holding where its branch exits is taken so again later, never as
// holding; the later branch's commands are named.
func TestSameUndecidedConditionAgain(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
is_darwin() { [ "$(uname)" == 'Darwin' ]; }
if is_darwin ; then
  echo "not supported on macOS"
  exit 0
fi
kubectl apply -f https://example.com/a.yaml -n x
if is_darwin ; then
  kubectl apply -f https://example.com/b.yaml -n x
fi
`})
	if fateAt(res.Model, 10) != "not carried" || strings.Contains(string(res.Spec), "url: https://example.com/b.yaml") {
		t.Errorf("line 10 %q:\n%s", fateAt(res.Model, 10), res.Spec)
	}
}

// 46zl D1 (Open edX on K3s): kubectl delete --all of a comma list of
// types deletes each type, as kubectl does.
func TestDeleteAllOfTypeList(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nkubectl delete -n demo --all jobs,configmaps\n"})
	if !strings.Contains(string(res.Spec), "resource: jobs\n") || !strings.Contains(string(res.Spec), "resource: configmaps\n") || res.Model.Verdict() != "faithful" {
		t.Errorf("%v\n%s", res.Model.NotCarried, res.Spec)
	}
}

// 46zl D2 (OpenHIE's core): a file of a kustomization the script edits
// with sed -i before kubectl apply -k is named, never applied unedited.
func TestKustomizationFileEditedFirst(t *testing.T) {
	res := importScript(t, map[string]string{
		"install.sh":                  "#!/bin/bash\nset -e\nhost=$(kubectl get service core -o=jsonpath='{.spec.clusterIP}')\nsed -i -E \"s/(\\\"host\\\": \\\")\\S*(\\\")/\\1${host}\\2/\" openhim/volume/default.json\nkubectl apply -k openhim\n",
		"openhim/kustomization.yaml":  "configMapGenerator:\n  - name: openhim\n    files:\n      - volume/default.json\n",
		"openhim/volume/default.json": "{\"host\": \"x\"}\n",
	})
	if fateAt(res.Model, 5) != "not carried" {
		t.Errorf("line 5 %q:\n%s", fateAt(res.Model, 5), res.Spec)
	}
}

// 46zn D5 (an IoT stack): the password given to mosquitto_passwd -b (or
// htpasswd -b) on its command line is never quoted in a note.
func TestPasswdToolArgumentsMasked(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nmosquitto_passwd -c -b passwd iot c4nary-mq-pass\nhtpasswd -bc auth admin c4nary-ht-pass\nkubectl create namespace mq\n"})
	said := fmt.Sprint(res.Model.Info, res.Model.NotCarried, res.Model.Commands)
	if strings.Contains(said+string(res.Spec), "c4nary") {
		t.Errorf("a password is quoted:\n%s", said)
	}
}

// A jq program whose output is an object is not run at import: it could
// carry a credential a plain path would not name.
func TestJQObjectOutputNotCopied(t *testing.T) {
	res := importScript(t, map[string]string{
		"install.sh":  "#!/bin/bash\nset -e\nDB=$(jq -r '.services[] | select(.name==\"db\") | .conf' config.json)\nkubectl create configmap db -n x --from-literal=conf=\"$DB\"\n",
		"config.json": `{"services": [{"name": "db", "conf": {"user": "app", "pass": "c4nary-jq-pass"}}]}`,
	})
	if strings.Contains(string(res.Spec)+fmt.Sprint(res.Model.Info, res.Model.NotCarried), "c4nary") {
		t.Errorf("written:\n%s", res.Spec)
	}
}
