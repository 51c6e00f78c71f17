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
		// mothertree's scripts/lib/config.sh (46s69h's D1): config set by eval "$(yq …)", then
		// `[ -z "$X" ] && missing+=(…)` and an exit on a non-empty missing: not decided
		{name: "eval of yq's output, then a missing-config check", script: "eval \"$(yq '\"DOMAIN=\" + (.domain | @sh) + \"\\n\" +\n  \"DB_PASSWORD=\" + (.db | @sh)' c.yaml)\"\nmissing=()\n[ -z \"$DOMAIN\" ] || [ \"$DOMAIN\" = null ] && missing+=(\"dns.domain\")\nif [ ${#missing[@]} -gt 0 ]; then\n  echo \"missing: ${missing[*]}\" >&2; exit 1\nfi\nkubectl create configmap web -n demo --from-literal=domain=\"$DOMAIN\" --from-literal=db=\"$DB_PASSWORD\"\n",
			files:      map[string]string{"c.yaml": "domain: example.org\ndb: s3cr3t\n"},
			want:       []string{"name: configmap-web", "DOMAIN: {type: string, required: true, description: \"the script computes it at install.sh:3", "DB_PASSWORD: {type: string, secret: true, required: true, description: \"a secret the script sets with eval"},
			notCarried: []string{"an eval: the command it runs is built when the script runs"}, never: []string{"s3cr3t", "bash never runs it"}},
		// the same import's _mt_load_turn_server_ip: a function that returns where a variable
		// is set, and exits after that if: the script goes on where it returned
		{name: "return under an if, then exit 1", script: "load_ip() {\n  if [ -n \"${TURN_SERVER_IP:-}\" ]; then\n    return 0\n  fi\n  echo \"no outputs file\" >&2\n  exit 1\n}\nload_ip\nkubectl create namespace demo\n",
			want: []string{"name: namespace-demo"}},
		// mothertree's common.sh:307 and config.sh:447 (46s69h's D2): after an exit decided
		// at import, the commands of a function called later, and of the rest of the
		// function the exit is in, are named at their lines
		{name: "commands through a call after a decided exit", script: "detect() { kubectl get service pgbouncer -n db; }\nvalidate() {\n  missing=(x)\n  if [ ${#missing[@]} -gt 0 ]; then exit 1; fi\n}\nload() {\n  validate\n  detect\n}\nrestart_web() { kubectl rollout restart \"$@\"; }\nload\nrestart_web deployment/web -n demo\nkubectl create namespace demo\n",
			want: []string{"helm/kubectl commands: 3, of which 0 became steps"},
			// detect's get is read-only there: nothing lost (trial 46s70w's D2)
			notCarried: []string{"decided at import",
				"bash never runs it: the script stops before it, at install.sh:13 (load) (in restart_web, called at install.sh:14)", "bash never runs it"}},
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
