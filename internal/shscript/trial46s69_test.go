package shscript

import (
	"testing"

	"github.com/khook/khook/internal/importer"
)

// What held-out trials 46s68r and 46s69d showed, each cut down.
func TestTrial46s69Idioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// 46s68r D6: a guard in an else carried as a when: stops the script there
		{name: "a stop-if-empty guard in an else branch", script: "set -e\nLOCAL=${LOCAL:-1}\nif [[ \"$LOCAL\" == \"1\" ]]; then kubectl create namespace demo\nelse\n  if [[ -z \"${EFS_ID}\" ]]; then echo \"EFS_ID not set\"; exit 1; fi\n  kubectl create namespace \"$EFS_ID\"\nfi\n",
			want: []string{"EFS_ID: {type: string, required: true", "EFS_ID: the script stops where it is empty and !("}},
		// 46s69d D2: Helm 2's --name without helm init; Helm 2 makes the namespace
		{name: "helm install --name without helm init", script: "set -e\nhelm repo add bitnami https://charts.bitnami.com/bitnami\nhelm install --name kubeapps --namespace kubeapps bitnami/kubeapps\n",
			want: []string{"createNamespace: true", "Helm 2 (whose form the command is) creates the namespace"}, notCarried: []string{"Helm 3 and 4 have no --name"}},
		// 46s68r D1: $HELM_OPTIONS never set, without set -u, is empty as ${HELM_OPTIONS:-} is
		{name: "an unquoted unset variable among helm's arguments", script: "helm repo add nvidia https://helm.ngc.nvidia.com/nvidia\nhelm install gpu-operator -n gpu-operator --create-namespace nvidia/gpu-operator $HELM_OPTIONS --set driver.enabled=false\n",
			want: []string{"release: gpu-operator", "repo: https://helm.ngc.nvidia.com/nvidia", "${HELM_OPTIONS}: empty unless set"}, never: []string{"HELM_OPTIONS: {"}},
		// minecraft-k3s.sh (regression over the trials): a value read from the
		// cluster, checked in a case branch, is a check, not a required input
		{name: "a guard on a cluster read in a case branch", script: "set -e\nlogs() {\n  POD=$(kubectl -n x get pods -l app=a -o jsonpath='{.items[0].metadata.name}' || true)\n  [[ -n \"${POD}\" ]] || { echo none; exit 1; }\n  kubectl -n x delete pod \"$POD\"\n}\ncase \"${1:-}\" in\n  logs) logs ;;\nesac\n",
			notCarried: []string{"a check of what the script read from the cluster, which it stops on"}, never: []string{"so it is a required variable"}},
		// 46s69g N4: sts, kubectl's short name, ends in s
		{name: "kubectl delete sts,deploy", script: "set -e\nkubectl delete -n x sts,deploy -l app=y\n",
			want: []string{"step delete-sts: khook's delete step keeps a StatefulSet"}},
		// odoo (regression over the trials): a password equal to the namespace
		{name: "a secret literal equal to the object's name and namespace", script: "set -e\ncat <<EOF | kubectl apply -f -\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: odoo\n  namespace: odoo\n  labels:\n    app: odoo\nspec:\n  selector:\n    matchLabels:\n      app: odoo\n  template:\n    metadata:\n      labels:\n        app: odoo\n    spec:\n      containers:\n        - name: odoo\n          image: odoo:17\n          env:\n            - name: PASSWORD\n              value: odoo\nEOF\n",
			want: []string{"namespace: odoo\n", "app: odoo\n", "- name: odoo\n"}, never: []string{"value: odoo", "namespace: ${"}},
		// copy_cm_func.sh (regression over the trials): a variable set in if and
		// elif, the else failing the script, is never "" after it
		{name: "if/elif setting a variable, else exit 1", script: "if [ $1 = \"configmap\" ]; then\n  RESOURCE=configmap\nelif [ $1 = \"secret\" ]; then\n  RESOURCE=secret\nelse\n  echo \"Incorrect\"; exit 1\nfi\nkubectl -n x delete --ignore-not-found=true $RESOURCE $2\n",
			want: []string{"resource: configmap/${ARG2}", "resource: secret/${ARG2}", "else … exit 1: the script stops here where none of the conditions before it hold"}, never: []string{"RESOURCE"}},
		// 46s69l D8: a device is never read (tr -dc … </dev/urandom ran out of memory)
		{name: "tr -dc … </dev/urandom", script: "P=\"$(tr -dc a-z0-9 </dev/urandom | head -c 16)\"\nkubectl -n x create secret generic s --from-literal=password=\"$P\"\n",
			want: []string{"P: {type: string, secret: true, required: true"}},
		// 46s69p D2: a sleep after an apply whose objects take time to come up
		{name: "sleep after kubectl apply of a URL", script: "kubectl apply -f https://github.com/cert-manager/cert-manager/releases/download/v1.17.0/cert-manager.yaml\nsleep 2m\nhelm install app oci://e.com/app -n cert-manager\n",
			want: []string{"sleep 2m: the script gives what step apply-cert-manager applied this long to come up; the step does not wait for it"}},
		// 46s69p D3: a probe of a local tool's flags changes nothing
		{name: "base64 -w0 /dev/null >/dev/null", script: "base64 -w0 /dev/null > /dev/null 2>&1\nif [ $? -eq 0 ]; then b64=\"base64 -w0\"; else b64=base64; fi\nkubectl create namespace vpn\n",
			want: []string{"0 not carried", "a probe of its flags"}},
		// 46s69p D1: BASH_REMATCH of a =~ decided at import
		{name: "BASH_REMATCH after [[ known =~ re ]]", script: "if [[ \"tcp://vpn.example.com:1195\" =~ ^((udp|tcp)(4|6)?://)?([0-9a-zA-Z.-]+)(:([0-9]+))?$ ]]; then PORT=${BASH_REMATCH[6]}; else exit 1; fi\nPORT=\"${PORT:-1194}\"\nkubectl -n x create service clusterip vpn --tcp=${PORT}:1194\n",
			want: []string{"port: 1195"}, never: []string{"BASH_REMATCH"}},
		// 46s68r D2: an unquoted namespace variable after -n is one word
		{name: "kubectl -n ${NS} with NS computed", script: "set -e\nNS=$(kubectl config view -o jsonpath='{..namespace}')\nK=\"kubectl -n $NS\"\n$K create configmap a --from-literal=x=1\n$K create configmap b --from-literal=x=1 -n ${NS}\n",
			want: []string{"name: b\n", "3, of which 2 became steps, 0 were folded into steps, 1 are read-only, 0 not carried"}},
		// 46s68r D3: xargs running a kubectl a variable holds
		{name: "xargs -I {} $K delete", script: "K=\"kubectl -n demo\"\n$K get deployments -o name | grep x | xargs -I {} $K delete {}\n",
			notCarried: []string{"a kubectl command xargs runs for each line"}},
		// 46s68r D5: a cluster check a function makes, failing through a fail function
		{name: "if ! check; then fail; fi with fail a function", script: "set -e\nfail() { echo $1; exit 1; }\nconflict() {\n  d=$(kubectl get pv \"$1\" -o json 2>/dev/null)\n  if [[ -z \"$d\" ]]; then return 0; fi\n  return 1\n}\nif [[ \"${L:-1}\" == \"1\" ]]; then\n  if ! conflict data local-sc; then fail \"conflict\"; fi\n  kubectl create namespace demo\nfi\n",
			notCarried: []string{"a check the script stops on when it fails, which khook does not run"}},
		// 46s68t D2: a pasted shell prompt ends the script under set -e
		{name: "a pasted shell prompt", script: "set -e\nkubectl create namespace a\nroot@host:/home/app# cat setup.sh\nkubectl create namespace b\n",
			notCarried: []string{"root@host:/home/app# is a shell prompt pasted into the script, not a command: bash finds no such command, and fails here (exit 127); under set -e that failure ends the script"}},
		// 46s69d D1: kubectl create token stores nothing and has no --dry-run
		{name: "kubectl create token", script: "set -e\nkubectl create serviceaccount admin-sa -n kube-system\nkubectl -n kube-system create token admin-sa\n",
			want: []string{"1 became steps, 0 were folded into steps, 1 are read-only, 0 not carried"}, never: []string{"--dry-run=client"}},
	})
}

// 46s69g N5: a mkdir alone changes nothing the cluster gets: a note, not
// a difference
func TestMkdirIsANote(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nmkdir -p tmp\nkubectl create namespace a\n"})
	differences, notes := importer.SplitInfo(res.Model.Info)
	if len(differences) != 0 || len(notes) != 1 {
		t.Errorf("differences %v, notes %v", differences, notes)
	}
}

// 46s69t D1: a values file the script writes under a variable's folder is
// said to be made by the script, never read silently as a committed file
func TestValuesFileWrittenUnderAVariable(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "echo > $DIR/values.yaml; helm -f $DIR/values.yaml", script: "echo \"a: {b: $1}\" > $DIR/values.yaml\nhelm install z oci://e.com/z -n z -f $DIR/values.yaml\n",
			want: []string{"values file ${DIR}/values.yaml: made by install.sh:3 echo, which khook does not run"}},
	})
}
