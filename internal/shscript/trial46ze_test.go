package shscript

import (
	"strings"
	"testing"
)

// What held-out trial 46ze (storage, backup and CI-runner installers,
// run once on 5afae75) showed, each cut down.

// D1 (OpenEBS on EKS): set-context "$KUBE_CTX", KUBE_CTX the current
// context's name, sets the namespace of the helm install after it.
func TestSetContextOfCurrentContextVariable(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/sh
KUBE_CTX=$(kubectl config current-context)
kubectl config set-context "$KUBE_CTX" --namespace=openebs
helm repo add openebs https://openebs.github.io/charts
helm install openebs openebs/openebs --version 3.10.0
`})
	if want := "      release: openebs\n      namespace: openebs\n"; !strings.Contains(string(res.Spec), want) || fateAt(res.Model, 3) != "folded" {
		t.Errorf("line 3 %s:\n%s", fateAt(res.Model, 3), res.Spec)
	}
}

// gpuNodes is cut from an Akash provider's installer (46ze D4): a label
// per node of an array an option fills with read -a.
const gpuNodes = `#!/usr/bin/env bash
set -e
gpu_nodes=()
while getopts ":w:" opt; do
  case ${opt} in
    w ) IFS=',' read -r -a gpu_nodes <<< "$OPTARG" ;;
  esac
done
for node in "${gpu_nodes[@]}"; do
  kubectl label nodes "$node" allow-nvdp=true
done
`

// D4: without the script's arguments the loop is carried once, named (its
// kubectl label was missing from the spec, the header and stderr); with
// the trial's (-w n1,n2) it is unrolled, a label per node.
func TestLoopOverReadArray(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": gpuNodes})
	if got := fateAt(res.Model, 10); got != "step" {
		t.Errorf("kubectl label in the loop: %q\n%s", got, res.Spec)
	}
	res = importScript(t, map[string]string{"install.sh": gpuNodes}, "-w", "n1,n2")
	spec := string(res.Spec)
	if !strings.Contains(spec, "target: nodes/n1") || !strings.Contains(spec, "target: nodes/n2") || res.Model.Verdict() != "faithful" {
		t.Errorf("%s: %v\n%s", res.Model.Verdict(), res.Model.NotCarried, spec)
	}
}

// D6 (ARC's install-arc.sh): a Secret from a token a command prints is
// never "committed"; D9 (Kasten): a typed Secret's literals are never
// quoted in the note that names it.
func TestSecretsFromCommandsAndTypedLiterals(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/usr/bin/env bash
set -euo pipefail
gh auth token | tr -d '\n' | kubectl --namespace arc-runners create secret generic arc-github --from-file=github_token=/dev/stdin --dry-run=client --output=yaml | kubectl apply --filename=-
kubectl create secret generic s -n k --type kubernetes.io/basic-auth --from-literal=password=c4nary-full-9
`})
	var all []string
	for _, n := range append(res.Model.NotCarried, res.Model.Info...) {
		all = append(all, n.String())
	}
	text := strings.Join(all, "\n")
	if strings.Contains(text+string(res.Spec), "c4nary") {
		t.Errorf("a literal is quoted:\n%s", text)
	}
	if !strings.Contains(text, "never commit the value") || strings.Contains(text, "commit them and apply the file") {
		t.Errorf("the advice for the token Secret:\n%s", text)
	}
}

// D3 (an Akash provider installer): cd ~/provider is $HOME's folder, only
// known when the script runs, never a folder named ~ under the checkout.
func TestTildeIsHome(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/usr/bin/env bash
set -e
cd ~/provider
helm install akash-provider provider --repo https://akash-network.github.io/helm-charts --version 1.0.0 -n akash -f ~/provider/provider.yaml
`})
	_, steps, _ := strings.Cut(string(res.Spec), "\nsteps:")
	if steps == "" || strings.Contains(steps, "~") {
		t.Errorf("a ~ path is written:\n%s", res.Spec)
	}
}

// D7 (ARC's visibility guard, Velero's bucket check): a check the script
// stops on, which khook cannot run, is named at its line; a look-up of a
// tool (command -v helm) or the machine's docker is not.
func TestOutsideChecksAreNamed(t *testing.T) {
	res := importScript(t, map[string]string{"ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n", "install.sh": `#!/usr/bin/env bash
set -euo pipefail
if ! command -v helm >/dev/null; then echo "install helm" >&2; exit 1; fi
if ! docker info >/dev/null 2>&1; then echo "start docker" >&2; exit 1; fi
if ! s5cmd --endpoint-url "$S3_ENDPOINT" ls "s3://$BUCKET" &>/dev/null; then
  echo "bucket not reachable" >&2
  exit 1
fi
S5="${S5CMD} --endpoint-url ${S3_ENDPOINT}"
if ! ${S5} ls "s3://${BUCKET}" &>/dev/null; then exit 1; fi
kubectl apply -f ns.yaml
`})
	var lines []int
	for _, n := range res.Model.NotCarried {
		lines = append(lines, n.Line)
	}
	if len(lines) != 2 || lines[0] != 5 || lines[1] != 10 {
		t.Errorf("not carried at lines %v, want [5 10]: %v", lines, res.Model.NotCarried)
	}
}

// D11 (the Akash installer run with -g -w worker): a getopts loop runs over
// the arguments the import is given, so the flags it sets are decided.
func TestGetoptsOverGivenArguments(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/usr/bin/env bash
set -e
install_gpu_support=false
while getopts ":gw:" opt; do
  case ${opt} in
    g ) install_gpu_support=true ;;
    w ) NODES=$OPTARG ;;
  esac
done
if [ "$install_gpu_support" = true ]; then
  kubectl label nodes "$NODES" allow-nvdp=true
fi
`}, "-g", "-w", "worker")
	spec := string(res.Spec)
	if strings.Contains(spec, "install_gpu_support") || !strings.Contains(spec, "target: nodes/worker") {
		t.Errorf("spec:\n%s", spec)
	}
}

// D10 (a Jenkins installer): pod=/usr/local/bin/kubectl -n jenkins get …,
// a $( ) missing, runs -n as a command: said so, not "an image that has -n".
func TestMissingCommandSubstitution(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\npod_name=/usr/local/bin/kubectl -n jenkins get pods\nkubectl create namespace jenkins\n"})
	var all []string
	for _, n := range res.Model.NotCarried {
		all = append(all, n.String())
	}
	if text := strings.Join(all, "\n"); !strings.Contains(text, "is a $( ) missing") {
		t.Errorf("not carried:\n%s", text)
	}
}

// D2 (Tekton's installer): a branch on what the cluster serves runs one
// branch or the other, never both: each is carried under a when: on a
// required variable the user sets, not both unconditionally.
func TestBranchOnClusterCapability(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/usr/bin/env bash
set -e
if [[ "$(kubectl api-versions)" == *"openshift.io"* ]]; then
  kubectl apply -f https://example.com/olm-subscription.yaml
else
  kubectl apply -f https://example.com/release.yaml
fi
`})
	spec := string(res.Spec)
	for _, want := range []string{
		"IF_OPENSHIFT_IO: {type: string, required: true",
		"when: vars.IF_OPENSHIFT_IO == \"true\"\n    apply:\n      manifests:\n        - url: https://example.com/olm-subscription.yaml",
		"when: '!(vars.IF_OPENSHIFT_IO == \"true\")'\n    apply:\n      manifests:\n        - url: https://example.com/release.yaml",
	} {
		if !strings.Contains(spec, want) {
			t.Errorf("want %q in:\n%s", want, spec)
		}
	}
	if got := fateAt(res.Model, 3); got != "read-only" || res.Model.Verdict() != "faithful" {
		t.Errorf("line 3 %q, %s: %v", got, res.Model.Verdict(), res.Model.NotCarried)
	}
}

// D8 (Velero on Garage): a Secret's text built from two secret variables
// keeps its form, with the variables in it, never one opaque variable the
// user must fill with the whole INI text; a literal credential in such a
// text still is never written.
func TestSecretTextOfSecretVariables(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/usr/bin/env bash
set -e
kubectl create secret generic velero-credentials -n velero --from-literal=cloud="[default]
aws_access_key_id=${GARAGE_ACCESS_KEY}
aws_secret_access_key=${GARAGE_SECRET_KEY}" --dry-run=client -o yaml | kubectl apply -f -
kubectl create secret generic other -n velero --from-literal=cloud="[default]
aws_access_key_id=${GARAGE_ACCESS_KEY}
aws_secret_access_key=c4nary-literal" --dry-run=client -o yaml | kubectl apply -f -
`})
	spec := string(res.Spec)
	if want := `cloud: "[default]\naws_access_key_id=${GARAGE_ACCESS_KEY}\naws_secret_access_key=${GARAGE_SECRET_KEY}"`; !strings.Contains(spec, want) {
		t.Errorf("want %s in\n%s", want, spec)
	}
	if !strings.Contains(spec, "GARAGE_SECRET_KEY: {type: string, secret: true") || strings.Contains(spec, "c4nary") {
		t.Errorf("variables:\n%s", spec)
	}
}

// D5 (Akash's GPU option): a fixed text the script writes under a flag's
// branch is read, inline, by the apply under the same when:, also when
// the flag is not given to the import; read outside it, it stays unknown.
func TestFileWrittenUnderWhen(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/usr/bin/env bash
set -e
gpu=false
while getopts ":g" opt; do
  case ${opt} in
    g ) gpu=true ;;
  esac
done
if [ "$gpu" = true ]; then
  cat > rc.yaml <<'EOF'
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: nvidia
handler: nvidia
EOF
  kubectl apply -f rc.yaml
fi
kubectl apply -f rc.yaml
`})
	spec := string(res.Spec)
	if !strings.Contains(spec, "when: vars.get(\"gpu\", \"false\") == \"true\"\n    apply:\n      manifests:\n        - inline: |\n            apiVersion: node.k8s.io/v1") || fateAt(res.Model, 17) != "step" {
		t.Errorf("line 17 %q:\n%s", fateAt(res.Model, 17), spec)
	}
	if fateAt(res.Model, 19) != "not carried" {
		t.Errorf("line 19: %q", fateAt(res.Model, 19))
	}
}
