package shscript

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/khook/khook/internal/importer"
)

// What held-out trials 46zza–46zzc (scripts: KubeVirt and home
// automation, blue-green and tenant provisioning, GPU setups and course
// projects; run once on dd3bb3d) showed, cut down.

// 46zzb D3: an if/elif on what the cluster holds whose branches patch the
// same Service to blue or to green: one runs, never both; each is carried
// under a when: on a required variable.
func TestRivalBranchesOnClusterState(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
if kubectl get deployment web-blue | grep "2/2" &> /dev/null; then
    kubectl patch service web -p '{"spec":{"selector":{"color":"green"}}}'
elif kubectl get deployment web-green | grep "2/2" &> /dev/null; then
    kubectl patch service web -p '{"spec":{"selector":{"color":"blue"}}}'
else
    exit 1
fi
`})
	st := res.Model.Steps
	if len(st) != 2 || st[0].Out.When != `vars.IF_WEB_BLUE == "true"` || st[1].Out.When != `!(vars.IF_WEB_BLUE == "true") && vars.IF_WEB_GREEN == "true"` {
		t.Errorf("%s", res.Spec)
	}
	if !strings.Contains(string(res.Spec), "IF_WEB_GREEN: {type: string, required: true") {
		t.Errorf("%s", res.Spec)
	}
}

// 46zzb D1: a function that scales the canary down and exits 1, called
// where a health check only the run decides fails: bash never comes back
// from it, so its steps are named not carried and the path on (the check
// passing) is the spec's; called under a test of a variable (in a loop's
// turn, in an if), its steps are under that when: and everything after
// it under the negation.
func TestFunctionThatExitsEndsTheBranch(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
undo() {
  kubectl scale deployment shop-next -n shop --replicas=0
  exit 1
}
healthy() {
  n=$(kubectl get deployment shop-next -n shop -o jsonpath='{.status.readyReplicas}')
  [ "$n" = "2" ]
}
kubectl create deployment shop-next -n shop --image=nginx
if ! healthy; then
  echo "unhealthy"
  undo
fi
kubectl patch service shop -n shop -p '{"spec":{"selector":{"track":"next"}}}'
for pct in 10 50; do
  if [ "$pct" -eq 50 ] && [ "${NO_ASK}" != "true" ]; then
    read -r -p "keep it? " ANSWER
    if [ "$ANSWER" != "yes" ]; then
      undo
    fi
  fi
done
kubectl delete deployment shop-old -n shop
`})
	var scales []string
	for _, st := range res.Model.Steps {
		if st.Out.Patch != nil && st.Out.Patch.Target == "deployment/shop-next" {
			scales = append(scales, st.Out.When)
		}
	}
	ask := `vars.get("NO_ASK", "") != "true"`
	no := `vars.get("ANSWER", "") != "yes"`
	last := res.Model.Steps[len(res.Model.Steps)-1].Out
	if fateAt(res.Model, 16) != "step" || len(scales) != 1 || scales[0] != ask+" && "+no || last.Delete == nil || last.When != "(!("+ask+") || (!("+no+")))" {
		t.Errorf("scales under %q\n%v\n%s", scales, res.Model.NotCarried, res.Spec)
	}
	if !slices.ContainsFunc(res.Model.NotCarried, func(n importer.Note) bool { return n.Line == 4 && strings.Contains(n.Why, "! healthy") }) {
		t.Errorf("not carried %v", res.Model.NotCarried)
	}
}

// 46zzb D5: a flag a loop over run-time pods clears where a pod is not
// Running, then if [ "$FLAG" != true ]; then scale to 0; exit 1; fi: the
// scale under when: a pod is not Running, the switch after it under the
// negation; nothing is "decided at import".
func TestExitOnAFlagSetInALoop(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -euo pipefail
mapfile -t NODES < <(kubectl get pods -n shop -l app=shop -o name)
FINE=true
for P in "${NODES[@]}"; do
  PHASE=$(kubectl get "$P" -n shop -o jsonpath='{.status.phase}')
  if [ "$PHASE" != "Running" ]; then
    FINE=false
  fi
done
if [ "$FINE" != "true" ]; then
  kubectl scale deployment shop -n shop --replicas=0
  exit 1
fi
kubectl patch service shop -n shop -p '{"spec":{"selector":{"track":"next"}}}'
`})
	st := res.Model.Steps
	bad := `vars.get("PHASE", "") != "Running"`
	if len(st) != 2 || st[0].Out.When != bad || st[1].Out.When != "!("+bad+")" || len(res.Model.NotCarried) != 0 {
		t.Errorf("not carried %v\n%s", res.Model.NotCarried, res.Spec)
	}
}

// 46zzh D1, 46zzg D3: a directory variable's default (K8S_DIR=${K8S_DIR:-
// ./k8s}) is written from the spec's folder, as literal paths are, for
// kubectl -f and helm -f alike.
func TestPathVariableDefaultFromTheSpecsFolder(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "install.sh", "#!/bin/bash\nset -e\nK8S_DIR=\"${K8S_DIR:-./k8s/kind}\"\nVALUES_FILE=${VALUES_FILE:-./values/app.yaml}\nkubectl apply -f \"$K8S_DIR/job.yaml\" -n demo\nhelm upgrade --install app oci://r.example/app --version 1.0.0 -n demo -f \"$VALUES_FILE\"\n")
	write(t, dir, "k8s/kind/job.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: seed}\n")
	write(t, dir, "values/app.yaml", "a: 1\n")
	res, err := Import("install.sh", Options{Dir: dir, SpecDir: "out"})
	if err != nil {
		t.Fatal(err)
	}
	spec := string(res.Spec)
	if !strings.Contains(spec, `K8S_DIR: {type: string, default: "../k8s/kind"`) || !strings.Contains(spec, `VALUES_FILE: {type: string, default: "../values/app.yaml"`) {
		t.Errorf("%s", spec)
	}
}

// 46zzb D4: for i in $(seq …); do if kubectl get namespace X; then
// kubectl apply …; break; fi; sleep 4; done: the wait for X, then the
// apply its branch runs once the check passes.
func TestPollThatAppliesBeforeItBreaks(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -euo pipefail
NS=shop-a
for i in $(seq 1 10); do
  if kubectl get namespace "$NS" >/dev/null 2>&1; then
    kubectl apply -f - <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: shop-config
  namespace: $NS
data:
  k: v
EOF
    break
  fi
  sleep 3
done
`})
	st := res.Model.Steps
	if len(st) != 2 || st[0].Out.Wait == nil || st[1].Out.Apply == nil || !strings.Contains(st[1].Out.Apply.Manifests[0].Inline, "namespace: shop-a") || fateAt(res.Model, 6) != "step" {
		t.Errorf("fates %v\n%s", res.Model.Commands, res.Spec)
	}
}

// 46zzb D2: kubectl scale … --replicas=${N}, N computed when the script
// runs: one named object, its count a required variable (a number once
// substituted), not "takes one named object"; computed in each turn of a
// loop over stages from the stage, a variable per turn.
func TestScaleToAComputedCount(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
FULL=$(kubectl get deployment shop -n shop -o jsonpath='{.spec.replicas}')
HALF=$((FULL / 2))
kubectl scale deployment shop-next -n shop --replicas=${HALF}
for pct in 20 60; do
  n=$(( FULL * pct / 100 ))
  kubectl scale deployment shop-next -n shop --replicas="$n"
done
`})
	var counts []any
	for _, st := range res.Model.Steps {
		if st.Out.Patch != nil {
			counts = append(counts, st.Out.Patch.Patch.(map[string]any)["spec"].(map[string]any)["replicas"])
		}
	}
	if !reflect.DeepEqual(counts, []any{"${HALF}", "${n}", "${n_2}"}) || len(res.Model.NotCarried) != 0 || !strings.Contains(string(res.Spec), "for pct=60") {
		t.Errorf("counts %v, not carried %v\n%s", counts, res.Model.NotCarried, res.Spec)
	}
}

// 46zzb N1: kubectl apply -f DIR of a folder that holds only sub-folders
// fails (kubectl reads them only with -R), and under set -e the script
// ends there: the note says so, and how many commands bash never runs.
func TestApplyOfAFolderOfFoldersFails(t *testing.T) {
	res := importScript(t, map[string]string{"k8s/common/cm/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"install.sh": "#!/bin/bash\nset -e\nkubectl apply -f k8s/common/\nkubectl create namespace shop\n"})
	if len(res.Model.NotCarried) != 1 || !strings.Contains(res.Model.NotCarried[0].Why, "only with -R") || !strings.Contains(res.Model.NotCarried[0].Why, "bash never runs the 1 helm/kubectl command(s) after it") {
		t.Errorf("not carried %v", res.Model.NotCarried)
	}
}

// 46zzb N2: k3d image import / kind load docker-image load an image into
// an existing cluster: the note says to load it before khook runs, not to
// create the cluster.
func TestImageLoadIsNoClusterCreation(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nk3d image import shop:dev -c previews\nkind load docker-image shop:dev\nkubectl create namespace shop\n"})
	if len(res.Model.NotCarried) != 2 {
		t.Errorf("%v", res.Model.NotCarried)
	}
	for _, n := range res.Model.NotCarried {
		if !strings.Contains(n.Why, "(or load it) before khook runs") {
			t.Errorf("%v", n)
		}
	}
}

// 46zzb N4: helm rollback $REL $REV with run-time words: the note names
// what they may be (flags, the release or the revision), not a chart.
func TestRollbackOfRunTimeWordsNamesNoChart(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nREV=$(helm history shop -n shop | tail -1 | awk '{print $1-1}')\nhelm rollback shop $REV -n shop\n"})
	if fateAt(res.Model, 4) != "not carried" || len(res.Model.NotCarried) != 1 || !strings.Contains(res.Model.NotCarried[0].Why, "flags, the release or the revision") {
		t.Errorf("%v", res.Model.NotCarried)
	}
}

// 46zzb N8: kubectl label … k="${PR}": the value is written quoted, so
// that once khook substitutes 42 it is still a string (a label's value).
func TestLabelOfAVariableStaysAString(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\n: \"${PR:?}\"\nkubectl label namespace shop pr=\"${PR}\" ready=true --overwrite\n"})
	if !strings.Contains(string(res.Spec), `pr: "${PR}"`) || !strings.Contains(string(res.Spec), `ready: "true"`) {
		t.Errorf("%s", res.Spec)
	}
}

// 46zzb N9: read -p "…? (y/N)" ANSWER asks a question whose answer picks
// a branch: the note says the answer is a variable, not that each step
// waits for what it needs.
func TestPromptAnswerIsAVariable(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nread -r -p \"Switch? (y/N) \" ANSWER\nif [ \"$ANSWER\" = y ]; then\n  kubectl patch service shop -n shop -p '{\"spec\":{\"selector\":{\"track\":\"next\"}}}'\nfi\nread -r -p \"press enter\"\n"})
	if got := infoLines(res.Model, "the answer ($ANSWER) is only known when the script runs"); len(got) != 1 || got[0] != 3 {
		t.Errorf("%v", res.Model.Info)
	}
	if got := infoLines(res.Model, "waits for a person"); len(got) != 1 || got[0] != 7 {
		t.Errorf("%v", res.Model.Info)
	}
}

// 46zzb D1, the exit in a function now followed: kubectl get nodes ||
// fail "…" (fail ending in exit 1) and command -v kubectl ||
// missing+=(kubectl), then a test of missing that exits: the spec follows
// the path where the tool is there and the check passes, and goes on.
func TestFailedCheckThatExitsDoesNotEndTheWalk(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -euo pipefail
fail() { echo "$*"; exit 1; }
missing=()
command -v kubectl >/dev/null 2>&1 || missing+=("kubectl")
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "missing: ${missing[*]}"
  exit 1
fi
kubectl get nodes >/dev/null 2>&1 || fail "no cluster"
kubectl create namespace shop
`})
	if len(res.Model.Steps) != 1 || len(res.Model.NotCarried) != 0 {
		t.Errorf("not carried %v\n%s", res.Model.NotCarried, res.Spec)
	}
}

// 46zzb D1, the other side: an exit in a pipeline's loop or a subshell
// ends only that subshell, so what follows is under no negation.
func TestExitInASubshellEndsOnlyIt(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
kubectl get ns -o name | while read ns; do if [ "$X" = y ]; then kubectl delete ns "$ns"; exit 0; fi; done
( if [ "$Y" = y ]; then kubectl delete ns old; exit 0; fi )
kubectl create namespace shop
`})
	st := res.Model.Steps
	if len(st) != 3 || st[2].Out.When != "" {
		t.Errorf("%s", res.Spec)
	}
}

// 46zzb D1, an else that exits after steps: what follows the if runs
// only where one of its conditions held.
func TestElseThatExitsGuardsWhatFollows(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
if [ "$TRACK" = "next" ]; then
  kubectl patch service shop -n shop -p '{"spec":{"selector":{"track":"next"}}}'
else
  kubectl scale deployment shop-next -n shop --replicas=0
  exit 1
fi
kubectl delete deployment shop-old -n shop
`})
	st := res.Model.Steps
	if len(st) != 3 || st[2].Out.When != `vars.get("TRACK", "") == "next"` {
		t.Errorf("%s", res.Spec)
	}
}
