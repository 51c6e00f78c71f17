package shscript

import (
	"strings"
	"testing"
)

// bash's operations on a value the script set (${1#*=} in an option
// parser, ${F##*/}, ${F%.yaml}, ${X:+--wait}, ${T^^}) are bash's own
// expansion of them; one over a value only the run knows names that
// value at the command's line, and declares no variable for it.
func TestParamOperationsOnKnownValues(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
VALUES=values/prod.yaml
FILE=${VALUES##*/}
ENVNAME=${FILE%.yaml}
WAIT=1
install() {
  local ns="${1#--namespace=}"
  helm upgrade --install "app-${ENVNAME}" ./app -n "$ns" ${WAIT:+--wait} ${NOWAIT:+--atomic} ${2:+--timeout "$2"} --set tag="${TAG^^}" --set n=${#ENVNAME}
}
NOWAIT=
TAG=v1
install --namespace=apps 7m
helm upgrade --install other ./app -n "${NS%-ns}"
`, "app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n"})
	st := res.Model.Steps
	if len(st) != 1 {
		t.Fatalf("steps %v, not carried %v", res.Model.Commands, res.Model.NotCarried)
	}
	h := st[0].Out.Helm
	if h.Release != "app-prod" || h.Namespace != "apps" || !h.Wait || h.Atomic || st[0].Out.Timeout != "7m" {
		t.Errorf("helm %+v timeout %q", h, st[0].Out.Timeout)
	}
	if got := toJSON(h.Values); got != `{"n":4,"tag":"V1"}` {
		t.Errorf("values %s", got)
	}
	if len(res.Model.NotCarried) != 1 || res.Model.NotCarried[0].Line != 14 || !strings.Contains(res.Model.NotCarried[0].Why, "$NS is only known when the script runs") {
		t.Errorf("not carried %v", res.Model.NotCarried)
	}
	if res.Model.Var("NS") != nil {
		t.Errorf("NS declared for an expansion not carried")
	}
}

// An option loop's `--name=value` branch reads its value with ${1#*=}.
func TestOptionLoopEqualsValue(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
VERSION=1.0.0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --version=*) VERSION="${1#*=}"; shift ;;
    --namespace=*) NS="${1#*=}"; shift ;;
    *) shift ;;
  esac
done
helm upgrade --install app app --repo https://charts.example.com --version "$VERSION" -n "${NS:-apps}"
`}, "--version=2.3.4", "--namespace=web")
	st := res.Model.Steps
	if len(st) != 1 {
		t.Fatalf("steps %v, not carried %v", res.Model.Commands, res.Model.NotCarried)
	}
	if h := st[0].Out.Helm; h.Version != "2.3.4" || h.Namespace != "web" {
		t.Errorf("helm %+v", h)
	}
}

// `if $FLAG; then` runs the variable's value as a command: decided when
// the script set it, when: on it when the environment gives it. A
// variable first read by a test is empty when unset, as in bash, unless
// set -u makes that an error.
func TestFlagCommandsAndTestedVariables(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
INSTALL_CRDS=true
if $INSTALL_CRDS; then
  kubectl apply -f m.yaml -n crds
fi
if ${DRY_RUN:-false}; then
  exit 0
fi
if [ "$SKIP" = "1" ]; then
  kubectl apply -f m.yaml -n skip
fi
set -u
if [ "$STRICT" = "1" ]; then
  kubectl apply -f m.yaml -n strict
fi
`, "m.yaml": configMap})
	st := res.Model.Steps
	if len(st) != 3 || len(res.Model.NotCarried) != 0 {
		t.Fatalf("steps %v, not carried %v", res.Model.Commands, res.Model.NotCarried)
	}
	if st[0].Out.When != "" || st[1].Out.When != `!(vars.get("DRY_RUN", "false") == "true" || vars.get("DRY_RUN", "false") == "") && vars.get("SKIP", "") == "1"` {
		t.Errorf("when %q, %q", st[0].Out.When, st[1].Out.When)
	}
	if v := res.Model.Var("SKIP"); v == nil || v.Required || v.Default == nil || *v.Default != "" {
		t.Errorf("SKIP %+v", v)
	}
	if v := res.Model.Var("STRICT"); v == nil || !v.Required {
		t.Errorf("STRICT %+v", v)
	}
}

// An unquoted glob is bash's pathname expansion over the files there at
// import, said at its line; kubectl apply -f over a glob of two files
// fails in the script (kubectl: Unexpected args), so it is not carried.
func TestGlobs(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
for f in manifests/*.yaml; do kubectl apply -f "$f" -n apps; done
kubectl apply -f manifests/a*.yaml -n apps
kubectl apply -f manifests/*.yaml -n apps
kubectl apply -f "manifests/*.yaml" -n apps
`, "manifests/a.yaml": configMap, "manifests/b.yaml": strings.ReplaceAll(configMap, "name: ", "name: b")})
	var files []string
	for _, st := range res.Model.Steps {
		files = append(files, st.Out.Apply.Manifests[0].File)
	}
	if strings.Join(files, " ") != "./manifests/a.yaml ./manifests/b.yaml ./manifests/a.yaml" {
		t.Errorf("steps %v", files)
	}
	// (line 5's is moot: the command is not carried)
	if got := infoLines(res.Model, "files it matched at import"); len(got) != 2 {
		t.Errorf("glob notes at %v", got)
	}
	nc := res.Model.NotCarried
	if len(nc) != 2 || nc[0].Line != 5 || !strings.Contains(nc[0].Why, "Unexpected args: manifests/b.yaml") || nc[1].Line != 6 || !strings.Contains(nc[1].Why, "does not exist") {
		t.Errorf("not carried %v", nc)
	}
}

// A command of a function that is not carried names the call it was
// walked for: a function called twice gives two lines to look at.
func TestNotCarriedNamesTheCall(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
deploy() {
  helm upgrade --install "$1" ./app $EXTRA
}
EXTRA=$(cat extra-args)
deploy one
deploy two
`, "app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n"})
	nc := res.Model.NotCarried
	if len(nc) != 2 || nc[0].Line != 4 || !strings.HasSuffix(nc[0].Why, "(in deploy, called at install.sh:7 as `deploy one`)") || !strings.HasSuffix(nc[1].Why, "(in deploy, called at install.sh:8 as `deploy two`)") {
		t.Errorf("not carried %v", nc)
	}
}

// {{EC2PrivateDNSName}} (eksctl's template in an argument) is no brace
// expansion: one word, itself; it was expanded again without end, until
// the import ran out of memory (trial 46f, tchangkiat's install-karpenter.sh).
func TestBracesThatAreOneWord(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
eksctl create iamidentitymapping --username system:node:{{EC2PrivateDNSName}} --group {a}
kubectl annotate ns apps --overwrite note=system:node:{{EC2PrivateDNSName}}
`})
	if len(res.Model.Steps) != 1 || !strings.Contains(toJSON(res.Model.Steps[0].Out), "system:node:{{EC2PrivateDNSName}}") {
		t.Errorf("steps %s, not carried %v", toJSON(res.Model.Steps), res.Model.NotCarried)
	}
}

// A sourced path under a variable only the run knows is named not carried
// (the import goes on, exit 1), not bad input; $GITHUB_WORKSPACE and
// $CI_PROJECT_DIR are the checkout the import runs from; a called
// script's unquoted $* with no arguments given is followed as "$@" is.
func TestSourcedPathsAndCIVariables(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
source "${GITHUB_WORKSPACE}/shared/lib.sh"
source "${LIB_DIR}/other.sh"
kubectl apply -f "${CI_PROJECT_DIR}/m.yaml" -n "$NS"
./hack/up.sh apply $*
`, "shared/lib.sh": "NS=apps\n", "m.yaml": configMap, "hack/up.sh": "#!/bin/bash\nkubectl $1 -f m.yaml -n \"${2:-web}\"\n"})
	st := res.Model.Steps
	if len(st) != 2 || st[0].Out.Apply.Namespace != "apps" || st[0].Out.Apply.Manifests[0].File != "./m.yaml" || st[1].Out.Apply.Namespace != "${ARG1}" {
		t.Fatalf("steps %s, not carried %v", toJSON(res.Model.Steps), res.Model.NotCarried)
	}
	if nc := res.Model.NotCarried; len(nc) != 1 || nc[0].Line != 4 || !strings.Contains(nc[0].Why, "only known when the script runs") {
		t.Errorf("not carried %v", nc)
	}
}

// A loop whose turns make the same steps (a retry: for i in {1..10}; do
// kubectl "$@" && return 0; sleep 1; done) is carried once, said once; a
// loop over values the steps use is unrolled.
func TestRetryLoopCarriedOnce(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
retry() {
  for i in {1..10}; do
    kubectl "$@" && return 0
    echo "retrying ${i}"
    sleep 1
  done
}
retry wait --for=condition=Ready --timeout=30s pods -l app=etcd -n karmada-system
for ns in a b; do kubectl create namespace $ns; done
`})
	var names []string
	for _, st := range res.Model.Steps {
		names = append(names, st.Out.Name)
	}
	if strings.Join(names, " ") != "wait-pods namespace-a namespace-b" || res.Model.Steps[1].Out.Needs[0] != "wait-pods" || res.Model.Steps[0].Out.Timeout != "5m" {
		t.Errorf("steps %v", names)
	}
	if got := infoLines(res.Model, "10 times (a retry): carried once"); len(got) != 1 || got[0] != 4 {
		t.Errorf("retry notes at %v", got)
	}
	if n := len(res.Model.Commands); n != 3 {
		t.Errorf("%d commands: %v", n, res.Model.Commands)
	}
}

// A manifest or values file under a directory the script makes when it
// runs (mktemp -d) is named not carried when nothing of the script says
// what is in it: the file is not in the repository the spec reads; one
// the script cp's from the repository is that file (sed.go).
func TestFilesUnderComputedPaths(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
TEMP_PATH=$(mktemp -d)
cp m.yaml "${TEMP_PATH}/x.yaml"
kubectl apply -f "${TEMP_PATH}/x.yaml" -n apps
helm upgrade --install app ./app -n apps -f "$TEMP_PATH/values.yaml"
kubectl apply -f "${ENV_DIR}/x.yaml" -n apps
`, "m.yaml": configMap, "app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n"})
	// the cp'd file is the repository's m.yaml, unchanged: the step reads
	// it; the helm command is not carried, no step of the chart's defaults
	// (trial 46s69b's D5)
	if st := res.Model.Steps; len(st) != 2 || st[0].Out.Apply.Manifests[0].File != "./m.yaml" || st[1].Out.Apply.Manifests[0].File != "${ENV_DIR}/x.yaml" {
		t.Errorf("steps %s", toJSON(res.Model.Steps))
	}
	var lines []int
	for _, n := range res.Model.NotCarried {
		if strings.Contains(n.Why, "under $TEMP_PATH, which the script computes when it runs (install.sh:3)") || strings.Contains(n.Why, "it is under $TEMP_PATH") {
			lines = append(lines, n.Line)
		}
	}
	if len(lines) != 1 || lines[0] != 6 {
		t.Errorf("not carried %v", res.Model.NotCarried)
	}
}

// `if [ -z $X ]; then X=${X:=v}; fi` and `[ -z "$NS" ] && NS=apps` are
// bash's ${X:-v}: a variable with default v (kuadrant's quickstart took
// the branch for an empty SAIL, where bash installs Sail).
func TestDefaultingIf(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
if [ -z $SAIL ]; then
  SAIL=${SAIL:=true}
fi
[ -z "$NS" ] && NS=apps
if [ "$SAIL" = true ]; then
  kubectl apply -f m.yaml -n "$NS"
fi
`, "m.yaml": configMap})
	st := res.Model.Steps
	if len(st) != 1 || st[0].Out.When != `vars.get("SAIL", "true") == "true"` || st[0].Out.Apply.Namespace != "${NS}" {
		t.Fatalf("steps %s, not carried %v", toJSON(st), res.Model.NotCarried)
	}
	for name, d := range map[string]string{"SAIL": "true", "NS": "apps"} {
		if v := res.Model.Var(name); v == nil || v.Required || v.Default == nil || *v.Default != d {
			t.Errorf("%s %+v", name, v)
		}
	}
}

// `if eval "$cmd"; then return 0; fi` in a retry function runs the
// command whatever it returns: carried (once), where it was dropped and
// the import said "faithful" with nothing written (zalando's retry).
func TestEvalInCondition(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
function retry(){
    local -r retry_cmd="$1"
    for i in {1..3}; do
        if eval "$retry_cmd"; then
            return 0
        fi
        sleep 3
    done
    return 1
}
retry "kubectl create -f m.yaml -n apps"
`, "m.yaml": configMap})
	if st := res.Model.Steps; len(st) != 1 || st[0].Out.Apply == nil || st[0].Out.Apply.Namespace != "apps" {
		t.Errorf("steps %s, not carried %v", toJSON(st), res.Model.NotCarried)
	}
}

// An if whose condition reads a variable set under a when: (USE=true
// under [[ -n $VALUES_FILE ]]) is walked once per value: each branch
// under its when:. It took the last value's branch unconditionally and
// never saw the else (nvidia's gpu-operator install); and --generate-name
// is a release without a name, not a chart named by the next word.
func TestIfOnVariableWithValuesPerBranch(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -euo pipefail
USE_VALUES_FILE=false
if [[ -n "${VALUES_FILE:-}" ]]; then
	USE_VALUES_FILE=true
fi
if [[ "${USE_VALUES_FILE}" == "true" ]]; then
	kubectl create namespace a
else
	kubectl create namespace b
fi
helm install ./app --generate-name -n ns
`, "app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n"})
	st := res.Model.Steps
	if len(st) != 2 || st[0].Out.When != `vars.get("VALUES_FILE", "") != ""` || st[1].Out.When != `!(vars.get("VALUES_FILE", "") != "")` {
		t.Fatalf("steps %s", toJSON(st))
	}
	if nc := res.Model.NotCarried; len(nc) != 1 || nc[0].Line != 12 || !strings.Contains(nc[0].Why, "--generate-name") {
		t.Errorf("not carried %v", nc)
	}
}

// Quote removal as bash does it: \" in double quotes is ", unquoted \x is
// x, "a\.b" keeps its backslash (helm's escaped dot), a here-document
// keeps \d and \n for the YAML in it, and <<'EOF' is taken as written.
// zalando's retry "kubectl create -f manifests/\"$file\"" named
// manifests/"configmap.yaml" missing.
func TestQuoteRemoval(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
file=m.yaml
eval "kubectl apply -n apps -f \"$file\""
helm upgrade --install app ./app -n apps --set "a\.b=1" --set c\.d=2
kubectl apply -n apps -f - <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: re
data:
  re: "\d+\n\$x"
EOF
kubectl apply -n apps -f - <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: raw
data:
  re: "\$x"
EOF
`, "m.yaml": configMap, "app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n"})
	st := res.Model.Steps
	if len(st) != 4 || st[0].Out.Apply == nil || st[0].Out.Apply.Manifests[0].File != "./m.yaml" {
		t.Fatalf("steps %s, not carried %v", toJSON(st), res.Model.NotCarried)
	}
	if got := toJSON(st[1].Out.Helm.Values); got != `{"a.b":1,"c":{"d":2}}` {
		t.Errorf("values %s", got)
	}
	if in := st[2].Out.Apply.Manifests[0].Inline; !strings.Contains(in, `re: "\d+\n$x"`) {
		t.Errorf("heredoc %q", in)
	}
	if in := st[3].Out.Apply.Manifests[0].Inline; !strings.Contains(in, `re: "\$x"`) {
		t.Errorf("quoted heredoc %q", in)
	}
}

// A loop's turns that repeat the first's commands without making a step
// (a check run sixty times) are counted and said once.
func TestRepeatedTurnsCountedOnce(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
for i in {1..60}; do
  kubectl get crd foos.example.com && break
  mystery-tool --check
  sleep 3
done
`})
	if n, nc := len(res.Model.Commands), len(res.Model.NotCarried); n != 1 || nc != 1 {
		t.Errorf("%d commands %v, %d not carried %v", n, res.Model.Commands, nc, res.Model.NotCarried)
	}
}

// The jsonpath poll with an unquoted $(…) and a label selector (chaos
// mesh's web-show deploy) is the wait it stands for; it was dropped
// without a word.
func TestPollOnSelector(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
while [[ $(kubectl get pods -l app=web-show -n demo -o 'jsonpath={..status.conditions[?(@.type=="Ready")].status}') != "True" ]]; do echo "Waiting" && sleep 10; done
`})
	st := res.Model.Steps
	if len(st) != 1 || st[0].Out.Wait == nil || st[0].Out.Wait.Selector != "app=web-show" || st[0].Out.Wait.On != "pods" || st[0].Out.Wait.For != `jsonpath={..status.conditions[?(@.type=="Ready")].status}=True` {
		t.Errorf("steps %s, not carried %v", toJSON(st), res.Model.NotCarried)
	}
}
