package shscript

import (
	"strings"
	"testing"
)

// What held-out trial 46zzc (GPU-node and student-course installers, run
// once on dd3bb3d) showed, cut down.

// 46zzc D2: a variable set in one arm of a case on a value only the run
// knows (PLATFORM=$(uname …), then PLATFORM=other under win*) is not that
// arm's value after the case: the exit a test of it takes for that arm
// ends that arm's path only, and bash on the other values goes on.
func TestCaseArmValueDoesNotDecideAnExit(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
PLATFORM=$(uname | tr '[:upper:]' '[:lower:]')
case "$PLATFORM" in
  win*|msys*) PLATFORM='other';;
esac
if [ "${PLATFORM}" != "linux" ]; then
  echo "linux only"
  exit 1
fi
kubectl create namespace shop
`})
	if fateAt(res.Model, 11) != "step" || len(res.Model.NotCarried) != 0 {
		t.Errorf("line 11 %q, not carried %v\n%s", fateAt(res.Model, 11), res.Model.NotCarried, res.Spec)
	}
}

// 46zzc D2 (the same through an argument): LANE=blue, set to green under
// case "$1" in g); a test whose branch exits 0 for green leaves what
// follows under the other values' when:, and says no stop at import.
func TestCaseArmExitEndsOnlyItsPath(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
LANE=blue
case "${1:-}" in
  g) LANE=green;;
esac
if [ "$LANE" = green ]; then
  echo "green is managed elsewhere"
  exit 0
fi
kubectl create namespace lane-a
`})
	if fateAt(res.Model, 11) != "step" || len(res.Model.NotCarried) != 0 {
		t.Fatalf("line 11 %q, not carried %v\n%s", fateAt(res.Model, 11), res.Model.NotCarried, res.Spec)
	}
	if w := res.Model.Steps[0].Out.When; !strings.Contains(w, `!(`) || !strings.Contains(w, `"g"`) {
		t.Errorf("when %q\n%s", w, res.Spec)
	}
}

// 46zzc D2: a variable set in the arms of a case khook cannot decide at
// all (case "$(uname -m)") is a required variable, not the last arm's.
func TestCaseOnRunTimeValueSetsNoValue(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
case "$(uname -m)" in
  x86_64) CPU=amd64;;
  *) CPU=arm64;;
esac
kubectl create namespace "build-$CPU"
`})
	if s := string(res.Spec); !strings.Contains(s, "build-${CPU}") || res.Model.Var("CPU") == nil || !res.Model.Var("CPU").Required {
		t.Errorf("spec:\n%s", s)
	}
}

// 46zzc D1: source "$CFG" of CFG="${SHOP_CFG:-$ROOT/conf/shop.env}" reads
// the default file, as bash does with SHOP_CFG unset: what it sets is
// known below, and the line says a run that sets SHOP_CFG reads another.
// A default that is not there stays named not carried.
func TestSourceOfAVariablesDefault(t *testing.T) {
	files := map[string]string{"conf/shop.env": "SHOP_NS=storefront\n", "install.sh": `#!/bin/bash
set -euo pipefail
ROOT="$(cd "$(dirname "$0")" && pwd)"
CFG="${SHOP_CFG:-$ROOT/conf/shop.env}"
source "$CFG"
kubectl create namespace "$SHOP_NS"
`}
	res := importScript(t, files)
	if s := string(res.Spec); !strings.Contains(s, "name: storefront") || len(res.Model.NotCarried) != 0 || len(infoLines(res.Model, "SHOP_CFG unset")) != 1 {
		t.Errorf("not carried %v, info %v\n%s", res.Model.NotCarried, res.Model.Info, s)
	}
	delete(files, "conf/shop.env")
	files["install.sh"] = strings.Replace(files["install.sh"], "$SHOP_NS", "shop", 1)
	res = importScript(t, files)
	if len(res.Model.NotCarried) != 1 || !strings.Contains(res.Model.NotCarried[0].Why, "only known when the script runs") {
		t.Errorf("not carried %v", res.Model.NotCarried)
	}
}

// 46zzc D3 (no defect of its own): `: ${CHECK_SIGS:="false"}` is bash's
// default for a variable of the environment, as CHECK_SIGS=${CHECK_SIGS:-
// false}: a branch on it is under a when: on that default (a run with
// CHECK_SIGS=true takes it), and an exit inside it, on a value a case arm
// set, is not decided at import (D2).
func TestColonAssignDefaultIsAVariable(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
: ${CHECK_SIGS:="false"}
SYS=linux
case "${1:-}" in
  w) SYS=windows;;
esac
if [ "${CHECK_SIGS}" == "true" ]; then
  if [ "${SYS}" != "linux" ]; then
    exit 1
  fi
  kubectl delete namespace unsigned
fi
kubectl create namespace signed
`})
	if len(res.Model.NotCarried) != 0 || len(res.Model.Steps) != 2 {
		t.Fatalf("not carried %v\n%s", res.Model.NotCarried, res.Spec)
	}
	if w := res.Model.Steps[0].Out.When; !strings.Contains(w, `vars.get("CHECK_SIGS", "false") == "true"`) || res.Model.Steps[1].Out.When != "" {
		t.Errorf("when %q\n%s", w, res.Spec)
	}
}

// 46zzc N1: minikube's image load, addons enable and service --url are
// no cluster creation: an image for the nodes, a component of the
// cluster, and a URL printed (nothing to carry, and since trial 46s68d's
// N5 nothing said: it only prints, as echo does).
func TestMinikubeCommandsSayWhatTheyDo(t *testing.T) {
	res := importScript(t, map[string]string{"web.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: web}\n", "install.sh": `#!/bin/bash
set -e
minikube image load shop/web:dev
minikube addons enable metrics-server
kubectl apply -f web.yaml
minikube service web -n web --url
`})
	why := map[int]string{}
	for _, n := range append(res.Model.NotCarried, res.Model.Info...) {
		why[n.Line] += n.Why
	}
	if !strings.Contains(why[3], "image") || !strings.Contains(why[4], "metrics-server add-on") || why[6] != "" || len(res.Model.NotCarried) != 2 {
		t.Errorf("%v", why)
	}
}

// 46zzc N2: the no-namespace warning of a patch of a kind that is no
// built-in one (a cluster-scoped custom resource, maybe) and of an apply
// of a URL (whose manifests may name their namespace) says it is an if;
// a Deployment's stays as it was.
func TestNoNamespaceWarningWhenTheScopeIsUnknown(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
kubectl apply -f https://example.invalid/plugin/v1/plugin.yml
kubectl patch widgetrule gpu-rule --type merge -p '{"spec":{"on":true}}'
kubectl patch deployment web --type merge -p '{"spec":{"replicas":2}}'
`})
	why := map[int]string{}
	for _, n := range res.Model.Info {
		why[n.Line] += n.Why
	}
	if !strings.HasPrefix(why[3], "if the manifests at its URL") || !strings.HasPrefix(why[4], "if widgetrule is namespaced") || !strings.HasPrefix(why[5], "kubectl without -n") {
		t.Errorf("%v", why)
	}
}

// 46zzc N3: a Secret manifest the script edits in place (sed -i) is
// named as edited there, not copied.
func TestSecretEditedInPlaceIsNotCopied(t *testing.T) {
	res := importScript(t, map[string]string{"k8s/creds.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: shop}\ndata:\n  apiKey: PLACEHOLDER\n", "install.sh": `#!/bin/bash
set -e
KEY_B64=$(echo -n "abc" | base64)
sed -i "s/PLACEHOLDER/${KEY_B64}/" k8s/creds.yaml
kubectl apply -f k8s/creds.yaml
`})
	if len(res.Model.NotCarried) != 1 || !strings.Contains(res.Model.NotCarried[0].Why, "edited in place at install.sh:4 (sed -i)") {
		t.Errorf("not carried %v", res.Model.NotCarried)
	}
}

// 46zzc N4: sleep after two helm installs that do not wait gives both
// their time: wait: true on each, not on the last alone (the step after
// may need the first).
func TestSleepAfterTwoReleasesWaitsForBoth(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
helm install store oci://r.example/charts/store -n store
helm install viewer oci://r.example/charts/viewer -n viewer
echo "Waiting for the store..."
sleep 30
kubectl create namespace app
`})
	if len(res.Model.Steps) != 3 || !res.Model.Steps[0].Out.Helm.Wait || !res.Model.Steps[1].Out.Helm.Wait {
		t.Errorf("%s", res.Spec)
	}
}

// 46zzc N5: main "$@" where main reads no argument says nothing of the
// arguments the import was not given; where it (or a function it passes
// them to) reads them, it still does.
func TestMainOfAllArgumentsThatReadsNone(t *testing.T) {
	script := `#!/bin/bash
set -e
setup() {
  kubectl create namespace lab
}
main() {
  setup
}
main "$@"
`
	res := importScript(t, map[string]string{"install.sh": script})
	if lines := infoLines(res.Model, noArgs); len(lines) != 0 {
		t.Errorf("noArgs at %v", lines)
	}
	res = importScript(t, map[string]string{"install.sh": strings.Replace(strings.Replace(script, "  setup\n}", "  setup \"$@\"\n}", 1), "create namespace lab", "create namespace \"${1:-lab}\"", 1)})
	if lines := infoLines(res.Model, noArgs); len(lines) != 1 {
		t.Errorf("noArgs at %v\n%s", lines, res.Spec)
	}
}

// 46zzc N6: a for loop over {1..N} that reads the cluster and breaks on
// a test of what it read is a poll: its read is named (add a wait:), and
// the guard after it that stops the script on that value is named too.
func TestForLoopPollWithBreakIsNamed(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -euo pipefail
fail() { echo "$1" >&2; exit 1; }
kubectl create namespace lab
for _ in {1..20}; do
  ready="$(kubectl -n lab get pods -l app=db -o json | jq '.items | length')"
  [[ "${ready}" -ge 1 ]] && break
  sleep 5
done
[[ "${ready}" -ge 1 ]] || fail "no db pod"
`})
	if fateAt(res.Model, 6) != "not carried" || len(res.Model.NotCarried) != 2 || res.Model.NotCarried[1].Line != 10 {
		t.Errorf("line 6 %q, not carried %v", fateAt(res.Model, 6), res.Model.NotCarried)
	}
	// kubectl get crd X && break is the wait for X, as its if form is
	res = importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nfor i in {1..30}; do\n  kubectl get crd gadgets.example.com && break\n  sleep 2\ndone\n"})
	if len(res.Model.Steps) != 1 || res.Model.Steps[0].Out.Wait == nil {
		t.Errorf("%s", res.Spec)
	}
}

// 46zzc N7: a script the script runs that has no helm or kubectl command
// (a tool installer) is named once, at its call, not line by line.
func TestToolInstallerScriptNamedOnce(t *testing.T) {
	res := importScript(t, map[string]string{"get_tool.sh": `#!/bin/bash
set -e
curl -sSLo /tmp/tool.tgz https://example.invalid/tool.tgz
tar xf /tmp/tool.tgz -C /tmp
sudo install /tmp/tool /usr/local/bin/tool
`, "install.sh": `#!/bin/bash
set -e
./get_tool.sh
kubectl create namespace app
`})
	if len(res.Model.NotCarried) != 1 || res.Model.NotCarried[0].Line != 3 || !strings.Contains(res.Model.NotCarried[0].Why, "(curl, tar, sudo)") {
		t.Errorf("not carried %v", res.Model.NotCarried)
	}
}
