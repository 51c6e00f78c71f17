package shscript

import "testing"

// What held-out trials 46s69g and 46s69h showed, each cut down.
func TestTrial46s69ghIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// crossplane-contrib/provider-helm's cluster/test/setup.sh (D2): ${KUBECTL} the
		// harness exports, never set by the script, also at the end of a pipe
		{name: "${KUBECTL} from the environment", script: "${KUBECTL} create namespace demo\ncat <<YAML | ${KUBECTL} apply -f -\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: demo, namespace: demo}\nYAML\n$HELM upgrade --install web oci://e.com/web -n demo\n",
			want:  []string{"helm/kubectl commands: 3, of which 3 became steps", "name: namespace-demo", "kind: ConfigMap", "release: web", "the script never sets KUBECTL, so it is the kubectl"},
			never: []string{"KUBECTL:", "HELM:"}},
		// the same line's --serviceaccount="${SA}": no namespace:name to split at import
		{name: "--serviceaccount of a value only the run knows", script: "SA=$(cat sa.txt)\nkubectl create clusterrolebinding b --clusterrole cluster-admin --serviceaccount=\"${SA}\"\n",
			notCarried: []string{"--serviceaccount ${SA} is not a NAMESPACE:NAME khook can read at import"}},
		// the same script's SA=$(${KUBECTL} … get sa …): read-only, counted at its line (D3)
		{name: "$(${KUBECTL} get …)", script: "kubectl create namespace demo\nSA=$(${KUBECTL} -n demo get sa -o name | grep demo)\necho \"$SA\"\n",
			want: []string{"helm/kubectl commands: 2, of which 1 became steps, 0 were folded into steps, 1 are read-only"}},
		// D4: $KUBECTL the script computes is a kubectl command of the count, not carried
		{name: "$KUBECTL set to a value only the run knows", script: "KUBECTL=$(command -v kubectl)\n$KUBECTL create namespace demo\nkubectl create namespace other\n",
			want:       []string{"helm/kubectl commands: 2, of which 1 became steps, 0 were folded into steps, 0 are read-only, 1 not carried"},
			notCarried: []string{"the command is the value of ${KUBECTL}, only known when the script runs: write kubectl in its place"}},
	})
}

// TestTrial46s69gDeleteNamedAcrossAll: bitpoke-config-connector's install.sh (46s69g's
// D1): kubectl delete --all-namespaces of a named cluster-scoped object deletes it.
func TestTrial46s69gDeleteNamedAcrossAll(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "a cluster-scoped kind", script: "DELETE=\"kubectl delete --all-namespaces --ignore-not-found --wait=true\"\n$DELETE validatingwebhookconfiguration abandon.cnrm\n$DELETE sts,svc -l cnrm=true\n",
			want:  []string{"resource: validatingwebhookconfiguration/abandon.cnrm\n      ignoreNotFound: true\n", "resource: sts\n      allNamespaces: true"},
			never: []string{"write this step by hand"}},
		{name: "a namespaced kind", script: "kubectl delete -A pod web\n",
			notCarried: []string{"kubectl refuses to delete pod/web by name across all namespaces"}},
		{name: "a kind khook does not know", script: "kubectl delete -A provider.pkg.crossplane.io p1\n",
			notCarried: []string{"khook cannot tell whether provider.pkg.crossplane.io is cluster-scoped"}},
	})
}
