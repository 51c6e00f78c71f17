package shscript

import "testing"

// What held-out trial 46s67k showed, each cut down.
func TestTrial46s67z3Idioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// cuedego/openshelter's argocd-bootstrap.sh: "${A[@]+"${A[@]}"}" is the array's words, or none (D2)
		{name: "the set -u idiom for a maybe-empty array", script: "ROLE=\"${ROLE:-}\"\nA=()\nif [[ -n \"$ROLE\" ]]; then A+=(\"--set\" \"sa.role=${ROLE}\"); fi\nhelm upgrade --install eso eso --repo https://e.com -n eso \"${A[@]+\"${A[@]}\"}\" --wait\n",
			want: []string{"role: ${ROLE}", `when: '!(vars.get("ROLE", "") != "")'`}},
		// the same script: "k=$(…)" quoted whole in an array element is a variable named after the key (D3)
		{name: "a value computed in a quoted array element", script: "A=(\"--set\" \"clusterName=demo\" \"--set\" \"vpcId=$(aws eks describe-cluster --name demo --output text)\")\nhelm upgrade --install lbc lbc --repo https://e.com -n kube-system \"${A[@]}\"\n",
			want: []string{"vpcId: ${VPC_ID}", "VPC_ID: {type: string, secret: true, required: true", "aws eks describe-cluster"}},
		// the same script: a guard stopping it where a variable is empty, under another condition (D4)
		{name: "[[ $SKIP != true && -z $ROLE ]] && exit", script: "ROLE=\"${ROLE:-}\"\nif [[ \"${SKIP:-false}\" != \"true\" && -z \"$ROLE\" ]]; then echo \"ROLE required\"; exit 1; fi\nhelm upgrade --install lbc lbc --repo https://e.com -n kube-system --set \"sa.role=${ROLE}\"\n",
			want: []string{"ROLE: {type: string, required: true, description: \"the script stops without it where"}},
		// Damola12345/RootsMarket's argocd-bootstrap.sh: a poll loop in a function returns where it passes (D5)
		{name: "a poll loop in a function, return 0 for break", script: "wait_app() { for _ in $(seq 1 60); do h=$(kubectl -n argocd get application \"$1\" -o jsonpath='{.status.health.status}'); if [ \"$h\" = Healthy ]; then return 0; fi; sleep 5; done; return 1; }\nwait_app demo || exit 1\nkubectl create namespace demo\n",
			want: []string{"name: namespace-demo"}, notCarried: []string{"a check the script repeats until it passes"}},
		{name: "a poll loop in a function, && return 0", script: "wait_app() { for _ in $(seq 1 60); do h=$(kubectl -n argocd get application \"$1\" -o jsonpath='{.status.health.status}'); [ \"$h\" = Healthy ] && return 0; sleep 5; done; return 1; }\nwait_app demo || exit 1\n",
			want: []string{"for: jsonpath={.status.health.status}=Healthy"}},
		// guarnz/oci-free-k8s' argocd-bootstrap.sh: read -s is a secret, one variable also in the Secret (D6)
		{name: "read -rsp a token", script: "read -rsp \"GitHub token: \" GH; echo\nif [[ -n \"$GH\" ]]; then\n  kubectl create secret generic repo-creds -n argocd --from-literal=password=\"$GH\" --dry-run=client -o yaml | kubectl apply -f -\nfi\n",
			want: []string{"GH: {type: string, secret: true", "password: ${GH | toJson}"}, never: []string{"REPO_CREDS_PASSWORD"}},
		// Shaggydesai/MicroService-App's argocd-bootstrap.sh: a function's line names the script's call of it (D7)
		{name: "a step and a note in a function, through retry", script: "k() { kubectl \"$@\"; }\nretry() { \"$@\"; }\nk create namespace a\nretry k create namespace b\nretry k exec -n a deploy/x -- true\n",
			want:       []string{"# from install.sh:3 (in k, called at install.sh:5)", "# from install.sh:3 (in k, through retry called at install.sh:6)"},
			notCarried: []string{"(in k, through retry called at install.sh:7)"}},
	})
}
