package shscript

import (
	"fmt"
	"strings"
	"testing"
)

// What held-out trials 46zzf, 46zzg and 46zzh (bootstrap scripts of
// repositories no script trial had read, run once on 059c4d1) showed, cut
// down.

// 46zzg D1: a poll whose timeout branch calls a function that scales back
// and exits (the break after the call never runs) is the wait it stands
// for; the scale-back is that failure path, named, not a step.
func TestPollTimeoutCallsFunctionThatExits(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
giveUp() {
  kubectl -n shop scale deployment/cart-blue --replicas=0
  exit 1
}
waitReady() {
  SECONDS=0
  while [[ "$(kubectl -n shop get deployment cart-blue -o jsonpath='{.status.readyReplicas}')" != "2" ]]; do
    if [ $SECONDS -gt 60 ]; then
      giveUp
      break
    fi
    sleep 2
  done
}
kubectl -n shop scale deployment/cart-blue --replicas=2
waitReady
kubectl -n shop patch service cart -p '{"spec":{"selector":{"color":"blue"}}}'
`})
	spec := string(res.Spec)
	if strings.Contains(spec, "replicas: 0") || !strings.Contains(spec, "jsonpath={.status.readyReplicas}=2") || fateAt(res.Model, 3) != "not carried" {
		t.Errorf("line 3 %q\n%s", fateAt(res.Model, 3), spec)
	}
}

// 46zzf D1: a password generated in a script the script runs, and another
// generated after it, are two values: two secret variables, each
// described at its own line.
func TestTwoGeneratedPasswordsAreTwoVariables(t *testing.T) {
	res := importScript(t, map[string]string{"gen.sh": "#!/bin/bash\nset -e\nPW=$(openssl rand -hex 16)\nkubectl -n a create secret generic a-admin --from-literal=password=\"$PW\"\n",
		"install.sh": "#!/bin/bash\nset -e\n./gen.sh\nPW=$(openssl rand -hex 16)\nkubectl -n b create secret generic b-admin --from-literal=password=\"$PW\"\n"})
	spec := string(res.Spec)
	if !strings.Contains(spec, `password: ${PW | toJson}`) || !strings.Contains(spec, `password: ${PW_2 | toJson}`) || !strings.Contains(spec, "(install.sh:4)") {
		t.Errorf("spec:\n%s", spec)
	}
}

// 46zzf D2: sed "s|\${HOST}|${HOST}|g" tmpl > "$F" (a quoted $: the
// template's own ${HOST}) and sed "s#__URL__#…#" into a temporary file are
// traced as envsubst's are: the apply and the release read the text sed
// makes, the values khook variables.
func TestSedIntoTempFileIsTraced(t *testing.T) {
	res := importScript(t, map[string]string{"tpl/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: site\n  namespace: web\ndata:\n  host: \"${HOST}\"\n",
		"tpl/values.yaml": "ingress:\n  url: \"__URL__\"\n",
		"install.sh": `#!/bin/bash
set -e
HOST="${HOST:-shop.example.test}"
F=$(mktemp)
sed "s|\${HOST}|${HOST}|g" tpl/cm.yaml > "$F"
kubectl apply -f "$F"
V=$(mktemp)
sed "s#__URL__#https://${HOST}/#" tpl/values.yaml > "$V"
helm upgrade --install site oci://charts.example.test/site -n web -f "$V"
`})
	spec := string(res.Spec)
	if fateAt(res.Model, 6) != "step" || !strings.Contains(spec, `host: "${HOST}"`) || !strings.Contains(spec, "url: https://${HOST}/") {
		t.Errorf("line 6 %q, not carried %v\n%s", fateAt(res.Model, 6), res.Model.NotCarried, spec)
	}
}

// 46zzf D3: a Secret template whose values sed fills from the
// environment is a Secret step whose values are secret variables; a
// template with a value of its own is not copied, and the advice is never
// to commit it.
func TestSedSecretTemplate(t *testing.T) {
	tpl := "apiVersion: v1\nkind: Secret\nmetadata:\n  name: api-token\n  namespace: web\nstringData:\n  token: \"${API_TOKEN}\"\n"
	script := "#!/bin/bash\nset -e\nF=$(mktemp)\nsed \"s|\\${API_TOKEN}|${API_TOKEN}|g\" tpl/s.yaml > \"$F\"\nkubectl apply -f \"$F\"\n"
	res := importScript(t, map[string]string{"tpl/s.yaml": tpl, "install.sh": script})
	if v := res.Model.Var("API_TOKEN"); v == nil || !v.Secret || fateAt(res.Model, 5) != "step" {
		t.Errorf("var %+v, line 5 %q\n%s", v, fateAt(res.Model, 5), res.Spec)
	}
	res = importScript(t, map[string]string{"tpl/s.yaml": tpl + "  other: Hunter2Literal\n", "install.sh": script})
	for _, n := range res.Model.NotCarried {
		if strings.Contains(n.Why, "commit") {
			t.Errorf("advice to commit: %+v", n)
		}
	}
	if strings.Contains(string(res.Spec), "Hunter2Literal") || fateAt(res.Model, 5) != "not carried" {
		t.Errorf("line 5 %q\n%s", fateAt(res.Model, 5), res.Spec)
	}
}

// 46zzh D2: a function that wraps kubectl exec is named at each of its
// calls, also where a variable with a value per branch (a fallback when
// the cluster has none) splits the walk.
func TestExecWrapperNamedAtEachCall(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -euo pipefail
if [[ -z "${PG_PASS:-}" ]]; then
  PG_PASS="$(kubectl get secret -n shop pg -o jsonpath='{.data.password}' | base64 -d || true)"
  [[ -z "$PG_PASS" ]] && PG_PASS="shop"
fi
sql() {
  kubectl exec -i -n shop pg-0 -- env PGPASSWORD="$PG_PASS" psql -U shop "$@"
}
echo 'SELECT 1;' | sql
echo 'CREATE TABLE t (v int);' | sql
echo 'INSERT INTO t VALUES (1);' | sql
`})
	var calls []string
	for _, n := range res.Model.NotCarried {
		if n.Line == 8 {
			calls = append(calls, n.Why[strings.LastIndex(n.Why, "called at"):])
		}
	}
	if len(calls) != 3 {
		t.Errorf("calls named %q\n%v", calls, res.Model.NotCarried)
	}
}

// 46zzh D3: what a command prints piped into a function that runs
// kubectl exec -i is the container's input, not manifests: the command is
// named as the exec it is.
func TestPipeIntoExecFunctionIsNotManifests(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -euo pipefail
sql() {
  kubectl exec -i -n shop pg-0 -- psql -U shop "$@"
}
kubectl exec -n shop api-0 -- cat /m/001.sql | sql --single-transaction
kubectl create namespace done
`})
	for _, n := range res.Model.NotCarried {
		if strings.Contains(n.Why, "manifests made by") {
			t.Errorf("note %+v", n)
		}
	}
	if fateAt(res.Model, 6) != "not carried" || fateAt(res.Model, 4) != "not carried" {
		t.Errorf("fates %q %q\n%v", fateAt(res.Model, 6), fateAt(res.Model, 4), res.Model.NotCarried)
	}
}

// 46zzg D2: a repository added under one name and a chart installed from
// another the script never adds: the add is named with its URL, and the
// chart's line says bash's helm fails there unless the machine knows it.
func TestRepoAddedUnderAnotherName(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nhelm repo add shop-charts https://charts.example.test/shop\nhelm upgrade --install shop shop/shop -n shop\n"})
	said := fmt.Sprint(res.Model.Info)
	if !strings.Contains(said, "https://charts.example.test/shop is meant there") || !strings.Contains(said, "fails here") {
		t.Errorf("info %v", res.Model.Info)
	}
}

// 46zzg D4: a pod's name read from the cluster at run time (kubectl get
// pods | grep | cut) is a generated name nobody can give before the run:
// a wait on it is named not carried, not a required variable.
func TestWaitOnPodNameReadAtRunTime(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
kubectl create namespace shop
cart=$(kubectl get pods --namespace shop | grep cart | cut -d " " -f1)
while [[ $(kubectl get pods "$cart" -n shop -o 'jsonpath={.status.phase}') != "Running" ]]; do sleep 1; done
kubectl wait --for=condition=Ready pod/$cart -n shop
`})
	if res.Model.Var("cart") != nil || fateAt(res.Model, 5) != "not carried" || fateAt(res.Model, 6) != "not carried" {
		t.Errorf("fates %q %q\n%s", fateAt(res.Model, 5), fateAt(res.Model, 6), res.Spec)
	}
}

// 46zzg D7: a file kubectl get … -o yaml > f writes is made by that
// command, not by the mkdir of its folder; and a dump of a live object is
// not something to generate and commit.
func TestFileMadeByKubectlGetNotMkdir(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
mkdir -p out/shop
kubectl get configmap base -n shop -o yaml > out/shop/copy.yaml
sed -i 's/base/copy/' out/shop/copy.yaml
kubectl apply -n shop -f out/shop/copy.yaml
`})
	said := fmt.Sprint(res.Model.NotCarried)
	if strings.Contains(said, "mkdir") || !strings.Contains(said, "install.sh:4 kubectl get") || strings.Contains(said, "commit it") {
		t.Errorf("not carried %v", res.Model.NotCarried)
	}
}

// 46zzg D8: PASS=${1:-$default_pass} with a secret default: the step
// holds the secret variable, so the note does not say the script's
// default is written in the step.
func TestSecretDefaultOfAnArgument(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\ndefault_pass=\"s3cr3t-Default\"\nPASS=${1:-$default_pass}\nkubectl create secret generic db -n shop --from-literal=password=\"$PASS\"\n"})
	said := fmt.Sprint(res.Model.Info)
	if strings.Contains(said, "written in the step") || strings.Contains(string(res.Spec)+said, "s3cr3t-Default") || !strings.Contains(said, "its default is a secret") {
		t.Errorf("info %v\n%s", res.Model.Info, res.Spec)
	}
}

// 46zzg D6: a credential key in a commented-out line is no credential:
// the file goes into the ConfigMap; a live one is still refused, named.
func TestCommentedCredentialIsNone(t *testing.T) {
	script := "#!/bin/bash\nset -e\nkubectl create configmap shop-ini -n shop --from-file=shop.ini\n"
	res := importScript(t, map[string]string{"shop.ini": "[main]\nsite = http://shop.example.test\n# mail.password = example\n", "install.sh": script})
	if fateAt(res.Model, 3) != "step" {
		t.Errorf("line 3 %q %v", fateAt(res.Model, 3), res.Model.NotCarried)
	}
	res = importScript(t, map[string]string{"shop.ini": "[main]\n# mail.password = example\ndb.password = Zq8vLiveOne\n", "install.sh": script})
	if said := fmt.Sprint(res.Model.NotCarried); !strings.Contains(said, "(db.password)") {
		t.Errorf("not carried %v", said)
	}
}

// 46zzg N2: a select menu is a person's answer: named at its line.
func TestSelectMenuIsNamed(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nselect go in \"Keep\" \"Drop\"; do\n  case $go in\n    Keep ) exit;;\n    Drop ) break;;\n  esac\ndone\nkubectl -n shop scale deployment/cart-old --replicas=0\n"})
	if lines := infoLines(res.Model, "asks a person to pick"); len(lines) != 1 || lines[0] != 3 {
		t.Errorf("info %v", res.Model.Info)
	}
}

// 46zzf N1: read -rsp "Password: " PW takes a value, it is no wait: said
// as the value the spec takes as a variable.
func TestReadPromptIsAValue(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nread -rsp \"Password: \" SHOP_PW\nkubectl create secret generic shop -n shop --from-literal=password=\"$SHOP_PW\"\nread -p \"Press enter to go on\"\n"})
	if a, w := infoLines(res.Model, "($SHOP_PW)"), infoLines(res.Model, "waits for a person"); len(a) != 1 || a[0] != 3 || len(w) != 1 || w[0] != 5 {
		t.Errorf("info %v", res.Model.Info)
	}
}

// 46zzf N2: $(date +%s), the time the script runs, is any value that
// changes: an optional variable, said, not a required one.
func TestTimeStampIsOptional(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nkubectl annotate deployment cart -n shop restarted-at=\"$(date +%s)\" --overwrite\n"})
	if v := res.Model.Var("RESTARTED_AT"); v == nil || v.Required || infoLines(res.Model, "a new value each run") == nil {
		t.Errorf("var %+v\n%s", v, res.Spec)
	}
}

// 46zzf D2 (after): rm of the temporary file a step read inline is
// nothing to carry, not a command to run by hand.
func TestRemoveTracedTempFile(t *testing.T) {
	res := importScript(t, map[string]string{"tpl/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: site\n  namespace: web\ndata:\n  host: \"__HOST__\"\n",
		"install.sh": "#!/bin/bash\nset -e\nF=$(mktemp)\nsed \"s|__HOST__|shop.example.test|\" tpl/cm.yaml > \"$F\"\nkubectl apply -f \"$F\"\nrm -f \"$F\"\n"})
	if len(res.Model.NotCarried) != 0 || infoLines(res.Model, "nothing to carry") == nil {
		t.Errorf("not carried %v, info %v", res.Model.NotCarried, res.Model.Info)
	}
}

// 46zzf D2 (after): the sed's note names the template as the repository
// has it, never this machine's absolute path ("$DIR/tpl/x.yaml").
func TestSedNoteNamesTheRepositoryFile(t *testing.T) {
	res := importScript(t, map[string]string{"tpl/v.yaml": "url: __URL__\n",
		"install.sh": "#!/bin/bash\nset -e\nDIR=\"$(cd \"$(dirname \"$0\")\" && pwd)\"\nV=$(mktemp)\nsed \"s|__URL__|https://shop.example.test|\" \"$DIR/tpl/v.yaml\" > \"$V\"\nhelm upgrade --install shop oci://charts.example.test/shop -n shop -f \"$V\"\n"})
	for _, n := range res.Model.Info {
		if strings.HasPrefix(n.What, "sed") && n.What != "sed … tpl/v.yaml" {
			t.Errorf("note %+v", n)
		}
	}
	if !strings.Contains(string(res.Spec), "url: https://shop.example.test") {
		t.Errorf("spec:\n%s", res.Spec)
	}
}

// 46zzf (the fixer's note): a value that goes into a Secret is a secret
// variable, and stays required where the script demands it (${X:?}) or
// had a default for it: unset, the Secret would hold "" where the script
// fails or writes its default. One the script may leave empty stays
// optional.
func TestSecretVariableKeepsItsRequiredness(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
TOKEN=${TOKEN:?set TOKEN}
PW=${PW:-changeme}
EXTRA=${EXTRA:-}
kubectl apply -n app -f - <<EOF
apiVersion: v1
kind: Secret
metadata: {name: app}
stringData:
  token: ${TOKEN}
  password: ${PW}
  extra: "${EXTRA}"
EOF
`})
	req := map[string]bool{}
	for _, v := range res.Model.Vars {
		if !v.Secret {
			t.Errorf("%s is not secret", v.Name)
		}
		req[v.Name] = v.Required
	}
	if !req["TOKEN"] || !req["PW"] || req["EXTRA"] || strings.Contains(string(res.Spec), "changeme") {
		t.Errorf("required %v\n%s", req, res.Spec)
	}
}

// 46zzj D1: a default the script builds from its own folder
// (${APP_FILE:-$SCRIPT_DIR/../argo/app.yaml}) is written from the spec's
// folder once, not twice, when the spec goes elsewhere.
func TestScriptDirDefaultRebasedOnce(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "deploy/scripts/x.sh", "#!/usr/bin/env bash\nset -euo pipefail\nSCRIPT_DIR=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)\"\nAPP_FILE=\"${APP_FILE:-$SCRIPT_DIR/../argo/app.yaml}\"\nkubectl apply -n argocd -f \"$APP_FILE\"\n")
	write(t, dir, "deploy/argo/app.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\n")
	res, err := Import("deploy/scripts/x.sh", Options{Dir: dir, SpecDir: "out"})
	if err != nil {
		t.Fatal(err)
	}
	if spec := string(res.Spec); !strings.Contains(spec, `APP_FILE: {type: string, default: "../deploy/argo/app.yaml"`) {
		t.Errorf("%s", spec)
	}
}

// 46zzj D2: kubectl wait --for=condition=Established -f SRC waits on the
// objects SRC holds: after kubectl apply -f SRC it is that step's waitFor;
// a file applied otherwise is a wait per object; a URL nothing applied
// before is named, not "no object named".
func TestWaitOnTheObjectsOfAFile(t *testing.T) {
	crds := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: gadgets.example.com}\n"
	res := importScript(t, map[string]string{"crds.yaml": crds, "install.sh": "#!/bin/bash\nset -e\nkubectl apply -f crds.yaml\nkubectl wait --for=condition=Established -f crds.yaml --timeout=120s\nkubectl apply -f https://example.invalid/v1/op.yaml\nkubectl wait --for=condition=Established -f https://example.invalid/v1/op.yaml\n"})
	if st := res.Model.Steps; len(st) != 2 || st[0].Out.Apply.WaitFor != "condition=Established" || st[1].Out.Apply.WaitFor != "condition=Established" || fateAt(res.Model, 4) != "folded" {
		t.Errorf("%s", res.Spec)
	}
	res = importScript(t, map[string]string{"crds.yaml": crds, "install.sh": "#!/bin/bash\nset -e\nhelm upgrade --install op oci://r.example/op --version 1.0.0 -n op\nkubectl wait --for=condition=Established -f crds.yaml\nkubectl wait --for=condition=Established -f https://example.invalid/v1/crds.yaml\n"})
	if st := res.Model.Steps; len(st) != 3 || st[1].Out.Wait == nil || st[1].Out.Wait.On != "crd/widgets.example.com" || fateAt(res.Model, 5) != "not carried" {
		t.Errorf("%v\n%s", res.Model.NotCarried, res.Spec)
	}
}
