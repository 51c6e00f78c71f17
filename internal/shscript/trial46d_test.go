package shscript

import (
	"strings"
	"testing"

	"github.com/khook/khook/internal/importer"
)

// The held-out trial of #46 (trial-46d).

// A function that wraps kubectl, on the right of a pipe or fed a heredoc
// (scylla's `kubectl kustomize … | kubectl_create -f=-`), is followed with
// what it is fed, as a direct `kubectl apply -f -` is; it was lost.
func TestFunctionOnRightOfPipe(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
ka() { kubectl apply "$@"; }
kubectl_create() {
  kubectl create "$@"
}
cat <<EOF | ka -f -
apiVersion: v1
kind: ConfigMap
metadata:
  name: a
EOF
kubectl kustomize ./op | kubectl_create -n=ops -f=-
ka -f - <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: b
EOF
`, "op/kustomization.yaml": "resources: []\n"})
	st := res.Model.Steps
	if len(st) != 3 {
		t.Fatalf("steps %d, fates %v, not carried %v", len(st), res.Model.Commands, res.Model.NotCarried)
	}
	if a := st[0].Out.Apply; a == nil || a.Manifests[0].Inline == "" || st[0].From.Line != 2 {
		t.Errorf("heredoc through ka: %+v at %v", st[0].Out, st[0].From)
	}
	if a := st[1].Out.Apply; a == nil || a.Manifests[0].Kustomize != "./op" || a.Namespace != "ops" {
		t.Errorf("kustomize through kubectl_create: %+v", st[1].Out)
	}
	if a := st[2].Out.Apply; a == nil || a.Manifests[0].Inline == "" {
		t.Errorf("heredoc to ka: %+v", st[2].Out)
	}
}

// `$(unset CDPATH && cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)` (tidb,
// pulsar) and `$(CDPATH= cd … && pwd)` resolve as the bare `cd … && pwd`
// idiom does: the sourced file and the manifest are read from there.
func TestUnsetCDPATHRoot(t *testing.T) {
	res := importScript(t, map[string]string{"hack/install.sh": `#!/bin/bash
ROOT=$(unset CDPATH && cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "${ROOT}/hack/lib.sh"
HERE=$(CDPATH= cd -- "$(dirname "$0")" && pwd)
kubectl apply -f "${ROOT}/m.yaml"
kubectl apply -f "${HERE}/n.yaml"
`, "hack/lib.sh": "NS=x\n", "m.yaml": configMap, "hack/n.yaml": configMap, "install.sh": "bash hack/install.sh\n"})
	st := res.Model.Steps
	if len(st) != 2 || st[0].Out.Apply.Manifests[0].File != "./m.yaml" || st[1].Out.Apply.Manifests[0].File != "./hack/n.yaml" {
		t.Fatalf("steps %v, not carried %v", res.Model.Commands, res.Model.NotCarried)
	}
}

// A helm or kubectl command built in a variable (dash0's
// `helm_install_command="helm install …"; … time $helm_install_command`)
// is read as that command, split where its text has spaces (a ${VAR} in
// it one word); it was named an unknown program, and the header's count
// missed it.
func TestToolCommandInVariable(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
install() {
  local cmd="helm upgrade --install app ./app --namespace apps"
  cmd+=" --wait"
  time $cmd
}
install
c2="helm upgrade --install b ./app"
if [[ -n "$EXTRA" ]]; then
  c2+=" --set x=$EXTRA"
fi
$c2
k="kubectl apply -f"
$k m.yaml
`, "app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n", "m.yaml": configMap})
	st := res.Model.Steps
	// c2's append is under when: (EXTRA set): one step per branch, the
	// words split where the script's text has spaces (--set x=${EXTRA}).
	if len(st) != 4 || st[0].Out.Helm == nil || st[0].Out.Helm.Namespace != "apps" || !st[0].Out.Helm.Wait || st[1].Out.When != `vars.get("EXTRA", "") != ""` || st[2].Out.When != `!(vars.get("EXTRA", "") != "")` || st[3].Out.Apply == nil {
		t.Fatalf("steps %v, not carried %v", res.Model.Commands, res.Model.NotCarried)
	}
	if !strings.Contains(string(res.Spec), "x: ${EXTRA}") || len(res.Model.NotCarried) != 0 {
		t.Errorf("not carried %v\n%s", res.Model.NotCarried, res.Spec)
	}
}

// `trap cleanup EXIT` (volcano) runs helm uninstall when the script ends:
// khook has no on-exit step, so the trap's helm and kubectl commands (in
// the functions it calls too) are named not carried at their lines; they
// were neither followed nor named.
func TestTrapExitNamed(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
uninstall() {
  helm uninstall app -n apps
}
cleanup() {
  uninstall
  kubectl delete ns apps
  kind delete cluster
}
trap cleanup EXIT
trap 'kubectl delete ns tmp' INT
kubectl apply -f m.yaml
`, "m.yaml": configMap})
	if len(res.Model.Steps) != 1 {
		t.Fatalf("steps %v", res.Model.Commands)
	}
	for _, line := range []int{3, 7, 11} {
		if f := fateAt(res.Model, line); f != string(importer.FateNotCarried) {
			t.Errorf("line %d: %q (commands %v)", line, f, res.Model.Commands)
		}
	}
	for _, n := range res.Model.NotCarried {
		if !strings.Contains(n.Why, "it runs when the script exits (trap at install.sh:") && !strings.Contains(n.Why, "it runs when the script is interrupted (trap at install.sh:11 on INT)") {
			t.Errorf("note %s", n)
		}
	}
}

// A negated probe (dash0's `if ! kubectl wait … --timeout=5s; then kubectl
// apply -k …; fi`) is not a wait step that must succeed before the install
// (on a fresh cluster it failed the run): the guarded apply is carried,
// the probe noted. A wait whose failure exits stays a step.
func TestNegatedProbeNotAStep(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
if ! kubectl wait -n ingress --for=condition=ready pod --selector=app=nginx --timeout=5s; then
  kubectl apply -f m.yaml
fi
if ! kubectl wait -n apps --for=condition=ready pod -l app=x --timeout=60s; then
  echo "not ready"; exit 1
fi
`, "m.yaml": configMap})
	st := res.Model.Steps
	if len(st) != 2 || st[0].Out.Apply == nil || st[1].Out.Wait == nil {
		t.Fatalf("steps %v", res.Model.Commands)
	}
	if f := fateAt(res.Model, 2); f != string(importer.FateReadOnly) {
		t.Errorf("probe: %q", f)
	}
	if lines := infoLines(res.Model, "a probe, not a step"); len(lines) != 1 || lines[0] != 2 {
		t.Errorf("notes %v", res.Model.Info)
	}
}

// An option loop that copies $1 first (pulsar's `key="$1"; case $key in`)
// takes the branches of the arguments given, as `case $1 in` does; it took
// branches not given.
func TestOptionLoopKeyCopy(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
symmetric=false
ns=default
while [[ $# -gt 0 ]]; do
  key="$1"
  case $key in
    -n|--namespace)
      ns="$2"
      shift; shift
      ;;
    -s|--symmetric)
      symmetric=true
      shift
      ;;
    *)
      shift
      ;;
  esac
done
if [[ "$symmetric" == "true" ]]; then
  kubectl create namespace sym
else
  kubectl create namespace "$ns"
fi
`}, "-n", "p")
	st := res.Model.Steps
	if len(st) != 1 || !strings.Contains(st[0].Out.Apply.Manifests[0].Inline, "name: p") || st[0].Out.When != "" {
		t.Fatalf("steps %v, %+v", res.Model.Commands, st[0].Out)
	}
}

// A value glued to a short flag is read as pflag reads it: -lproduct=aes is
// -l product=aes, -nfoo is -n foo (faces' `deploy -lproduct=aes` waited on
// every Deployment; `-nfoo` applied to default).
func TestGluedShortFlags(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
kubectl apply -nfoo -f m.yaml
kubectl wait deploy -lproduct=aes -n=bar --for=condition=available
kubectl delete pods -lapp=x -nfoo
`, "m.yaml": configMap})
	st := res.Model.Steps
	if len(st) != 3 {
		t.Fatalf("steps %v, not carried %v", res.Model.Commands, res.Model.NotCarried)
	}
	if a := st[0].Out.Apply; a.Namespace != "foo" {
		t.Errorf("apply %+v", a)
	}
	if w := toJSON(st[1].Out.Wait); !strings.Contains(w, `product=aes`) || !strings.Contains(w, `"bar"`) {
		t.Errorf("wait %s", w)
	}
	if d := toJSON(st[2].Out.Delete); !strings.Contains(d, `app=x`) || !strings.Contains(d, `"foo"`) {
		t.Errorf("delete %s", d)
	}
}

// Brace expansion is bash's: `cert-manager{,-cainjector,-webhook}` is three
// words, `crd/{a,b}.yaml` two files (scylla); they were one invalid name.
func TestBraceExpansion(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
for d in cert-manager{,-cainjector,-webhook}; do
  kubectl rollout status -n cert-manager "deployment/${d}"
done
kubectl apply -f=crd/{a,b}.yaml
`, "crd/a.yaml": configMap, "crd/b.yaml": configMap})
	st := res.Model.Steps
	if len(st) != 4 {
		t.Fatalf("steps %v, not carried %v", res.Model.Commands, res.Model.NotCarried)
	}
	if got := toJSON(st[2].Out.Rollout); !strings.Contains(got, "cert-manager-webhook") {
		t.Errorf("rollout %s", got)
	}
	if a := st[3].Out.Apply; len(a.Manifests) != 2 || a.Manifests[1].File != "./crd/b.yaml" {
		t.Errorf("apply %+v", a.Manifests)
	}
}
