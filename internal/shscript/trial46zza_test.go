package shscript

import (
	"slices"
	"strings"
	"testing"

	"github.com/khook/khook/spec"
)

// What held-out trial 46zza (home-automation and KubeVirt installers, run
// once on dd3bb3d) showed, cut down.

// 46zza D8: an existence check whose branch asks and exits on the default
// answer before it deletes: a fresh cluster never takes it, and a re-run
// of the spec must not delete what the script keeps; named, not carried.
func TestCheckBranchThatMayExitIsNotCarried(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
if kubectl get deployment -n gadgets gadget-operator > /dev/null 2>&1; then
    read -p "Again? (y/N): " -n 1 -r
    if [[ ! $REPLY =~ ^[Yy]$ ]]; then
        exit 0
    fi
    kubectl delete gadget -n gadgets main || true
    kubectl delete deployment -n gadgets gadget-operator
fi
kubectl apply -f https://example.invalid/gadget-operator.yaml
`})
	if fateAt(res.Model, 8) != "not carried" || fateAt(res.Model, 9) != "not carried" || fateAt(res.Model, 11) != "step" || strings.Contains(string(res.Spec), "delete:") {
		t.Errorf("fates %q %q %q\n%s", fateAt(res.Model, 8), fateAt(res.Model, 9), fateAt(res.Model, 11), res.Spec)
	}
}

// 46zza D9: if ! <apply>; then <the same from a mirror>; fi: bash applies
// the mirror's copy only when the first apply fails, as after ||: the
// fallback is named not carried, never a second step of every run (also
// through a retrying function, whose mirror's own exit check is moot).
func TestIfNotApplyThenMirrorIsAFallback(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
fetch() {
    local n=0
    while [ $n -lt 3 ]; do
        if kubectl create -f "$1"; then return 0; fi
        n=$((n + 1))
    done
    return 1
}
U=https://example.invalid/widget-operator.yaml
if ! fetch "$U"; then
    echo "trying the mirror"
    if ! fetch "https://mirror.example.invalid/$U"; then
        exit 1
    fi
fi
if kubectl apply -f https://example.invalid/widget-cr.yaml; then
    echo applied
else
    kubectl apply -f https://mirror.example.invalid/widget-cr.yaml
fi
kubectl wait -n widgets deployment/widget-operator --for condition=Available --timeout=300s
`})
	spec := string(res.Spec)
	if steps := spec[strings.Index(spec, "\nsteps:"):]; strings.Contains(steps, "mirror.example.invalid") || len(res.Model.Steps) != 3 || fateAt(res.Model, 21) != "not carried" || strings.Contains(spec, "ignores its failure") {
		t.Errorf("steps %d, line 21 %q, not carried %v\n%s", len(res.Model.Steps), fateAt(res.Model, 21), res.Model.NotCarried, spec)
	}
	for _, n := range res.Model.NotCarried {
		if n.Line == 14 {
			t.Errorf("the mirror's exit check is said: %v", n)
		}
	}
}

// 46zza D1: a function's $2 given as "$(cat <<EOF … EOF)" is the
// here-document's text, which the function's own here-document expands;
// a $2 only the run computes is a variable the step names, never "".
func TestFunctionArgumentFromACatHeredoc(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -euo pipefail
make_box() {
  local name=$1 body=$2
  kubectl apply -f - <<EOT
apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
  namespace: boxes
data:
${body}
EOT
}
make_box box-a "$(cat <<EOT
  size: small
  colour: red
EOT
)"
make_box box-b "$(generate-box-data --big)"
`})
	spec := string(res.Spec)
	if !strings.Contains(spec, "  size: small\n") || !strings.Contains(spec, "  colour: red\n") || fateAt(res.Model, 5) != "step,not carried" || !strings.Contains(spec, "MAKE_BOX_ARG2") {
		t.Errorf("line 5 %q\n%s", fateAt(res.Model, 5), spec)
	}
}

// 46zza D2: for d in "$A" "$B" over values made of a variable with a
// default is one turn per quoted word (bash splits none of them): a wait
// per item, not one over a required loop variable.
func TestForOverQuotedVariablesIsUnrolled(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -euo pipefail
BOX="${BOX:-crate}"
A="${BOX}-lid"
B="${BOX}-base"
for d in "$A" "$B"; do
  kubectl -n store wait "pvc/$d" --for=jsonpath='{.status.phase}'=Bound --timeout=300s
done
for d in $A $B; do
  kubectl -n store wait "pvc/$d" --for=jsonpath='{.status.phase}'=Bound --timeout=300s
done
`})
	spec := string(res.Spec)
	if fateAt(res.Model, 7) != "step,step" || !strings.Contains(spec, "pvc/${BOX}-lid") || !strings.Contains(spec, "pvc/${BOX}-base") || res.Model.Var("d") == nil {
		t.Errorf("line 7 %q\n%s", fateAt(res.Model, 7), spec)
	}
}

// 46zza D3: --timeout="${WAIT}s" of WAIT="${WAIT:-3600}" is 3600s, the
// default with the unit the script adds, not "not a duration".
func TestTimeoutOfAVariableWithAUnit(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -euo pipefail
WAIT="${WAIT:-3600}"
kubectl -n store wait crate/big --for=condition=Ready --timeout="${WAIT}s"
`})
	if len(res.Model.Steps) != 1 || res.Model.Steps[0].Out.Timeout != "3600s" || len(res.Model.NotCarried) != 0 {
		t.Errorf("not carried %v\n%s", res.Model.NotCarried, res.Spec)
	}
}

// 46zza D4: for i in "${!A[@]}" runs over A's indexes, and ${A[$i]},
// ${B[$i]} are the elements at i (bash's arithmetic on the index); "${A[1]}"
// alone is one element, not the whole array.
func TestLoopOverArrayIndexes(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/usr/bin/env bash
set -euo pipefail
check() {
    local parts=("lid" "base")
    local waits=("60s" "180s")
    for i in "${!parts[@]}"; do
        local part="${parts[$i]}"
        kubectl wait --for=condition=Ready pod -l "app.kubernetes.io/name=${part}" -n store --timeout="${waits[$i]}"
    done
    kubectl -n store delete configmap "${parts[1]}"
}
check
`})
	spec := string(res.Spec)
	for _, want := range []string{"selector: app.kubernetes.io/name=lid\n", "timeout: 60s", "selector: app.kubernetes.io/name=base\n", "timeout: 180s", "resource: configmap/base\n"} {
		if !strings.Contains(spec, want) {
			t.Errorf("no %q in\n%s", want, spec)
		}
	}
}

// 46zza D7: helm install x charts/gone, where charts/ holds the script's
// other local charts and no repository charts is added: helm finds no such
// folder and no such repository, and fails; named, no repository made up
// (a sed -i of its values file before makes no chart: sed fails there too;
// Helm 2's --name is not said to make a step that is not written).
func TestMissingChartBesideLocalChartsIsNotARepository(t *testing.T) {
	res := importScript(t, map[string]string{"charts/here/Chart.yaml": "apiVersion: v2\nname: here\nversion: 1.0.0\n",
		"install.sh": "#!/bin/bash\nset -e\nsed -i 's/a/b/' charts/gone/values.yaml\nhelm install here charts/here -n box\nhelm install --name gone charts/gone --values charts/gone/values.yaml --namespace box\n"})
	if fateAt(res.Model, 4) != "step" || fateAt(res.Model, 5) != "not carried" || res.Model.Var("HELM_REPO_CHARTS") != nil || strings.Contains(string(res.Spec), "the step installs the release gone") {
		t.Errorf("fates %q %q\n%s", fateAt(res.Model, 4), fateAt(res.Model, 5), res.Spec)
	}
}

// 46zza D6: a values file the script edits with sed -i, with a key written
// twice (Helm's parser takes the last), is its edited text inline with the
// last key, said; not "not YAML", with the release left without values.
func TestEditedValuesWithADuplicateKey(t *testing.T) {
	res := importScript(t, map[string]string{"chart/Chart.yaml": "apiVersion: v2\nname: box\nversion: 1.0.0\n",
		"values.yaml": "svc:\n  ip: 192.0.2.1\n  port: 80\n  ip: \"\"\n",
		"install.sh":  "#!/bin/bash\nset -e\nsed -i \"s/\\(port: \\)\\(.*\\)/\\18080/\" values.yaml\nhelm install box ./chart --values ./values.yaml -n box\n"})
	if len(res.Model.Steps) != 1 || len(res.Model.NotCarried) != 0 {
		t.Fatalf("not carried %v\n%s", res.Model.NotCarried, res.Spec)
	}
	svc, _ := res.Model.Steps[0].Out.Helm.Values["svc"].(map[string]any)
	if svc["ip"] != "" || svc["port"] != 8080 || len(infoLines(res.Model, "written twice")) != 1 {
		t.Errorf("values %v\n%s", svc, res.Spec)
	}
}

// 46zza D5: DIR=$(echo ${0} | sed 's/\(.*\)\/.*/\1/') in a script run as
// ./vol/make.sh is vol, known at import: its committed files are applied,
// an absent one named as absent, not "made when the script runs".
func TestFolderFromDollarZeroThroughSed(t *testing.T) {
	pv := "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: crate-lid}\nspec:\n  capacity: {storage: 1Gi}\n  accessModes: [ReadWriteOnce]\n  hostPath: {path: /srv/lid}\n"
	res := importScript(t, map[string]string{"vol/crate-lid-pv.yaml": pv,
		"vol/make.sh": "#!/bin/bash\nDIR=$(echo ${0} | sed 's/\\(.*\\)\\/.*/\\1/')\nfor part in lid base; do\n  kubectl create -f \"${DIR}/crate-${part}-pv.yaml\"\ndone\n",
		"install.sh":  "#!/bin/bash\n./vol/make.sh\n"})
	if fateAt(res.Model, 4) != "step,not carried" || strings.Contains(string(res.Spec), "computes when it runs") {
		t.Errorf("line 4 %q\n%s", fateAt(res.Model, 4), res.Spec)
	}
}

// 46zza N9: a delete under a test of what the cluster holds that khook
// cannot decide (pods not Running) is the script's only where it holds:
// under a when: on a required variable, never every run's delete.
func TestDeleteUnderAnUndecidedStateTestIsAChoice(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
if ! kubectl -n kube-system get pod -l app=net -o jsonpath='{.items[0].status.phase}' | grep -q Running; then
  kubectl -n kube-system delete pod -l app=net --force --grace-period=0 || true
fi
kubectl apply -f https://example.invalid/box.yaml
`})
	if len(res.Model.Steps) != 2 || res.Model.Steps[0].Out.Delete == nil || res.Model.Steps[0].Out.When != `vars.IF_NOT_RUNNING == "true"` || res.Model.Steps[1].Out.When != "" {
		t.Errorf("spec:\n%s", res.Spec)
	}
}

// 46zza N6: kubectl delete --force --grace-period=0 is a delete step
// without them, said at the line, not dropped silently.
func TestForcedDeleteIsSaid(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nkubectl -n box delete pod -l app=crate --force --grace-period=0 --ignore-not-found\n"})
	if len(res.Model.Steps) != 1 || len(infoLines(res.Model, "grace period")) != 1 {
		t.Errorf("spec:\n%s", res.Spec)
	}
}

// 46zza N-haayap: command -v kubectl || missing+=(kubectl) adds nothing
// where the tools are there, as the import takes them: the check of the
// array decides no exit, and nothing says the script stops there.
func TestToolLookupFallbackDoesNotRun(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/usr/bin/env bash
set -euo pipefail
need() {
    local missing=()
    command -v kubectl >/dev/null 2>&1 || missing+=("kubectl")
    if [[ ${#missing[@]} -gt 0 ]]; then
        exit 1
    fi
}
need
kubectl apply -f https://example.invalid/box.yaml
`})
	if len(res.Model.Steps) != 1 || len(res.Model.NotCarried) != 0 {
		t.Errorf("not carried %v\n%s", res.Model.NotCarried, res.Spec)
	}
}

// 46zza N2: while ! kubectl get PLURAL.GROUP; do sleep; done waits until
// the API serves the kind: the wait for its CRD to be Established.
func TestPollOnAGroupedKindWaitsForItsCRD(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nkubectl apply -f https://example.invalid/operator.yaml\nwhile ! kubectl get crates.boxes.example.com; do sleep 10; done\nkubectl apply -f https://example.invalid/crate.yaml\n"})
	if len(res.Model.Steps) != 3 || res.Model.Steps[1].Out.Wait == nil || res.Model.Steps[1].Out.Wait.On != "crd/crates.boxes.example.com" {
		t.Errorf("spec:\n%s", res.Spec)
	}
}

// 46zza N8: V=$(curl …), then if [ -z "$V" ]; then echo …; V=v1.2.0; fi
// is a variable with the script's fallback as its default, not a
// required one with every step doubled under when: V == "".
func TestComputedVersionWithAFallback(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
export BOX_VERSION=$(curl -s https://example.invalid/releases | grep tag_name | head -1)
if [ -z "$BOX_VERSION" ]; then
    echo "cannot fetch the version, using v1.2.0"
    export BOX_VERSION=v1.2.0
fi
kubectl apply -f "https://example.invalid/${BOX_VERSION}/box.yaml"
`})
	v := res.Model.Var("BOX_VERSION")
	if len(res.Model.Steps) != 1 || res.Model.Steps[0].Out.When != "" || v == nil || v.Required || v.Default == nil || *v.Default != "v1.2.0" {
		t.Errorf("var %+v\n%s", v, res.Spec)
	}
}

// 46zza N1: applies of URLs without -n (operator bundles, whose objects
// mostly name their namespace) are said once, not at every line.
func TestURLAppliesWithoutNamespaceSaidOnce(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nkubectl apply -f https://example.invalid/a.yaml\nkubectl apply -f https://example.invalid/b.yaml\nkubectl apply -f https://example.invalid/c.yaml\n"})
	if n := infoLines(res.Model, "said once"); len(res.Model.Steps) != 3 || len(n) != 1 || n[0] != 3 {
		t.Errorf("notes at %v\n%s", n, res.Spec)
	}
}

// 46zza N3: rm makes no file to commit, and sudo mv x /usr/local/bin/
// installs a command on the machine, which no job: step can do.
func TestRemoveAndInstallAdvice(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nrm crate.yaml\nsudo mv boxctl /usr/local/bin/\nkubectl create ns box\n"})
	for _, n := range res.Model.NotCarried {
		if strings.Contains(n.Why, "commit the file it makes") || strings.Contains(n.Why, "job: step") {
			t.Errorf("line %d: %s", n.Line, n.Why)
		}
	}
}

// 46zza N7: a removed API version the check finds in a step that reads a
// required variable is the chart's own, even where a second stand-in set
// stops the chart rendering: refused, as for a step without variables,
// not written with a warning that the values decide it.
func TestRemovedAPIWithARequiredValueIsRefused(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "install.sh", "#!/bin/bash\nset -e\nkubectl apply -f - <<EOF\napiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: crate, namespace: box}\nspec: {replicas: $BOX_REPLICAS}\nEOF\nkubectl create ns other\n")
	check := func(s *spec.Spec) spec.Problems {
		// with the stand-in "x" only, as where "1" stops the chart rendering
		i := slices.IndexFunc(s.Steps, func(st *spec.Step) bool {
			return st.Apply != nil && strings.Contains(st.Apply.Manifests[0].Inline, "replicas: x")
		})
		if i < 0 {
			return nil
		}
		return spec.Problems{{Path: s.Steps[i].Path + ".apply.manifests.0", Message: "deployment.extensions/crate: extensions/v1beta1 Deployment was removed in v1.16"}}
	}
	res, err := Import("install.sh", Options{Dir: dir, Check: check})
	if err != nil {
		t.Fatal(err)
	}
	if fateAt(res.Model, 3) != "not carried" || len(res.Model.Steps) != 1 {
		t.Errorf("line 3 %q\n%s", fateAt(res.Model, 3), res.Spec)
	}
}

// 46zza N4: timeout 600 bash -c 'until kubectl get X -o jsonpath=P | grep
// -q V; do sleep 5; done' is the string's lines: a wait for P=V, 600s.
func TestTimeoutBashCPollIsAWait(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
kubectl apply -f https://example.invalid/crate.yaml
timeout 600 bash -c 'until kubectl get crate big -n box -o jsonpath="{.status.phase}" | grep -q "Packed"; do sleep 5; done'
`})
	if len(res.Model.Steps) != 2 || res.Model.Steps[1].Out.Wait == nil || res.Model.Steps[1].Out.Wait.For != "jsonpath={.status.phase}=Packed" || res.Model.Steps[1].Out.Timeout != "600s" {
		t.Errorf("spec:\n%s", res.Spec)
	}
}

// 46zza (seen with N-haayap): an exit decided at import inside a function
// ends the script, as bash's exit does, not only the function: nothing
// after the call is carried, as the note at the test says, and each
// helm or kubectl command after it is named (trial 46s67j's D2).
func TestExitDecidedInAFunctionEndsTheScript(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
need() {
    if [ ! -d envs/crate ]; then
        echo "no envs/crate"
        exit 1
    fi
}
kubectl create ns box
need
kubectl apply -f https://example.invalid/crate.yaml
`})
	if len(res.Model.Steps) != 1 || fateAt(res.Model, 11) != "not carried" || len(res.Model.NotCarried) != 2 {
		t.Errorf("line 11 %q, not carried %v\n%s", fateAt(res.Model, 11), res.Model.NotCarried, res.Spec)
	}
}
