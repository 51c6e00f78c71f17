package shscript

import (
	"testing"
)

// What held-out trials 46s69r and 46s69s showed (fixed in 46s70b), each cut down.
func TestTrial46s70bIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// listmonk-gitops' k3s_infra_deploy.sh (46s69s D2): one test in a function called per namespace is a fact per namespace
		{name: "a choice in a function called with other values", script: "ns_exists() { kubectl get ns \"$1\" >/dev/null 2>&1; }\n" +
			"log() { echo \"$*\"; }\n" +
			"ensure_ns() { local ns=\"$1\"; if ns_exists \"$ns\"; then log \"skip $ns\"; else kubectl create namespace \"$ns\"; log \"made $ns\"; fi; }\n" +
			"ensure_ns localstack\nensure_ns argocd\nensure_ns argo-rollouts\nensure_ns argocd\n",
			want: []string{`IF_LOCALSTACK: {type: string, required: true, description: "\"true\" where ns_exists \"$ns\" holds with ns=localstack (install.sh:5)`,
				`IF_ARGOCD: {type: string, required: true, description: "\"true\" where ns_exists \"$ns\" holds with ns=argocd`,
				`IF_ARGO_ROLLOUTS: {type: string, required: true, description: "\"true\" where ns_exists \"$ns\" holds with ns=argo-rollouts`,
				"    when: '!(vars.IF_ARGOCD == \"true\")'\n    apply:\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: Namespace\n            metadata:\n              name: argocd\n",
				"    when: '!(vars.IF_ARGO_ROLLOUTS == \"true\")'\n    apply:\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: Namespace\n            metadata:\n              name: argo-rollouts\n"},
			never: []string{"IF_L5", "IF_NS"}},
		// the same, where a secret's value would name the choice: the line's number, no value said
		{name: "a choice on a secret's value", script: "log() { echo \"$*\"; }\nTOKEN=s3cr3tv4lue\n" +
			"if curl -fsH \"X-Token: $TOKEN\" https://example.com/ready; then log up; else kubectl create namespace down; fi\n",
			want: []string{"when: '!(vars.IF_HTTPS_EXAMPLE_COM_READY == \"true\")'"}, never: []string{"s3cr3tv4lue", "TOKEN="}},
		// the same script (46s69s D3): [[ -ge ]] over two values it computes, before a wait it skips
		{name: "[[ $a -ge $b ]] over computed values", script: "desired=\"$(kubectl -n lm get rollout lm -o jsonpath='{.spec.replicas}' || echo 1)\"\n" +
			"available=\"$(kubectl -n lm get rollout lm -o jsonpath='{.status.availableReplicas}' || echo 0)\"\n" +
			"if [[ \"$available\" -ge \"$desired\" ]]; then exit 0; fi\nkubectl -n lm wait --for=condition=Available rollout/lm --timeout=600s || true\n",
			want: []string{`when: '!((vars.get("available", "") == "" ? 0 : int(vars.get("available", ""))) >= (vars.get("desired", "") == "" ? 0 : int(vars.get("desired", ""))))'`,
				"      for: condition=Available\n", "; a number: the script compares it as one\"}"},
			never: []string{"type conversion"}},
		// [ ] on an empty value fails, and the if takes it as false
		{name: "[ $X -eq N ] on a value only the run knows", script: "n=\"$(kubectl get nodes -o name | wc -l)\"\nif [ \"$n\" -gt 1 ]; then kubectl create namespace multi; fi\n",
			want: []string{`when: vars.get("n", "") != "" && int(vars.get("n", "")) > 1`}, never: []string{"type conversion"}},
		// TR0N-ZEN/kubernetes' mongodb/run.sh (46s69r D2): -eq on a word, which bash's test refuses: never taken
		{name: "[ $1 -eq word ]", script: "kubectl apply -f https://example.com/base.yaml\nif [ $1 -eq 'ingress' ]; then\n  kubectl apply -f https://example.com/ingress.yaml\n  docker build -t x .\nfi\n" +
			"[ \"$1\" -gt x ] && kubectl create namespace b\nif ! [ \"$1\" -ne x ]; then kubectl create namespace c; fi\n",
			want: []string{"url: https://example.com/base.yaml", "name: namespace-c\n"}, never: []string{"ingress.yaml\n", "IF_", "when:", "name: namespace-b", "docker"},
			notCarried: []string{`bash never runs it: [ $1 -eq 'ingress' ] (install.sh:4) is always false, as -eq, -gt and the like compare integers and "ingress" is none (bash: integer expression expected); to compare words write = and import again`,
				`bash never runs it: [ "$1" -gt x ] (install.sh:8) is always false`}},
	})
}
