package shscript

import (
	"strings"
	"testing"
)

// What held-out trial 46s69a (run once, on 9e31628) showed, each cut down.
func TestTrial46s69aIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// rancher/fleet's deploy-fleet.sh (D1): two --set-string on one list element
		{name: "two --set-string on fields of one list element", script: "helm upgrade --install fleet oci://e.com/fleet -n fleet --set-string extraEnv[0].name=EXPERIMENTAL_SCHEDULES --set-string extraEnv[0].value=true\n",
			want: []string{"- name: EXPERIMENTAL_SCHEDULES\n            value: \"true\"\n"}},
		// admiraltyio/admiralty's test/e2e/kind.sh (D5): a float-looking key of an associative array
		{name: "declare -A, then a[1.30]=…", script: "declare -A images\nimages[1.30]=\"kindest/node:v1.30.4\"\nkubectl create namespace demo\nkubectl label namespace demo k8s=\"${images[1.30]}\" --overwrite\n",
			want: []string{"k8s: kindest/node:v1.30.4"}},
		// rancher/fleet's deploy-fleet.sh (D4): a watch read through < <(…)
		{name: "{ grep; kill; } < <(kubectl get -w)", script: "kubectl create namespace demo\n{ grep -q -m 1 \"ready\"; kill $!; } < <(kubectl get bundles -n demo -w)\nkubectl label namespace demo ready=true\n",
			want:       []string{"helm/kubectl commands: 3, of which 2 became steps, 0 were folded into steps, 1 are read-only"},
			notCarried: []string{"khook runs no shell commands", "khook runs no shell commands"}},
		// rancher/fleet's deploy-fleet.sh (D3): a loop over a command's output that builds flags
		{name: "for x in $(… | jq -c '.[]') building --set flags", script: "s=\"\"; index=0\nfor shard in $(echo \"${SHARDS}\" | jq -c '.[]'); do\n  id=$(echo \"$shard\" | jq -r '.id'); s=\"$s --set shards[$index].id=$id\"; index=$((index + 1))\ndone\nhelm upgrade --install fleet oci://e.com/fleet -n fleet $s\n",
			want:       []string{"release: fleet"},
			notCarried: []string{"its list is only known when the script runs; its body is carried once, so $s after it holds what one turn adds"}},
		// …and one whose accumulator nothing reads after it is not named
		{name: "for x in $(…) counting, the count unread", script: "n=0\nfor p in $(kubectl get pods -o name); do n=$((n + 1)); done\nkubectl create namespace demo\n",
			want: []string{"name: namespace-demo"}},
		// rancher/fleet's dev/setup-fleet-managed-downstream (D7): a computed value into a Secret
		{name: "host=$(docker inspect …) into --from-literal", script: "host=$(docker inspect -f '{{.IPAddress}}' k3d-down-server-0)\nkubectl create namespace fleet-default\nkubectl create secret generic kbcfg -n fleet-default --from-literal=value=\"server: https://$host:6443\"\n",
			want: []string{"value: \"server: https://${host}:6443\"", "the script computes it at install.sh:3 (the output of $(docker inspect", "it goes into a Secret's data (install.sh:5)"}},
		// rancher/fleet's deploy-fleet.sh (D2): a value computed only where SHARDS is set
		{name: "computed under if [ -n \"$SHARDS\" ]", script: "SHARDS=${SHARDS-\"\"}; extra=\"\"\nif [ -n \"$SHARDS\" ]; then\n  id=$(echo \"$SHARDS\" | jq -r '.[0].id'); extra=\"--set shards[0].id=$id\"\nfi\nhelm upgrade --install fleet oci://e.com/fleet -n fleet $extra\n",
			want: []string{"id: {type: string, required_with: [SHARDS], "}, never: []string{"required: true"}},
		// dana-team/rcs-ocm-deployer's setup-rcs-deployer.sh (D6): two contexts, one variable, two defaults
		{name: "hub=${CLUSTER1:-hub}, c1=${CLUSTER1:-cluster1}", script: "hub=${CLUSTER1:-hub}\nc1=${CLUSTER1:-cluster1}\nkubectl config use-context \"kind-${hub}\"; kubectl create ns test\nkubectl config use-context \"kind-${c1}\"; kubectl wait --for=condition=ready pods -l app=x -n other\nkubectl config use-context \"kind-${hub}\"; kubectl create ns rcs\n",
			want:       []string{"name: namespace-test", "name: namespace-rcs"},
			notCarried: []string{"it works on context kind-${CLUSTER1} (kind-cluster1 by the script's defaults), and this spec's steps on context kind-${CLUSTER1} (kind-hub by the script's defaults)"},
			never:      []string{"CLUSTER1 is required: give it"}},
	})
}

// 46s69a D7: a computed value that goes into a Secret is said at the
// line that computes it, as any computed value is.
func TestComputedSecretSaid(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nca=$(kubectl config view --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')\nkubectl create namespace x\nkubectl apply -f - <<EOF\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: x\nstringData:\n  ca: $ca\nEOF\n"})
	for _, n := range res.Model.Info {
		if n.Line == 3 && n.What == "ca" && strings.Contains(n.Why, "a required secret variable (give it as KHOOK_SECRET_ca)") {
			return
		}
	}
	t.Errorf("no warning at line 3: %v\n%s", res.Model.Info, res.Spec)
}
