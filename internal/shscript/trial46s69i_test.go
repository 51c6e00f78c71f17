package shscript

import "testing"

// What held-out trial 46s69i showed, each cut down.
func TestTrial46s69iIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// chmouel/startpaac's lib/forgejo/install.sh (D1): the host from $1 or
		// the environment, and a guard that exits where both are empty
		{name: "a guard on a value from $1 or the environment", script: "[[ -n ${1:-\"\"} ]] && HOST=${1}\nHOST=${HOST:-\"\"}\n[[ -z ${HOST} ]] && { echo \"You need to specify a HOST\" && exit 1; }\nhelm upgrade --install web oci://e.com/web -n web --set \"ingress.host=${HOST}\"\n",
			want:  []string{"HOST: {type: string, required_without: [ARG1], description: \"the script stops without it where ARG1 is not given (install.sh:5)\"}", "host: ${ARG1}", "host: ${HOST}"},
			never: []string{`HOST: {type: string, default: ""`}},
		// the same guard's { echo … && exit 1; } on a plain variable
		{name: "[[ -z $X ]] && { echo … && exit 1; }", script: "[[ -z ${NS:-} ]] && { echo \"need NS\" && exit 1; }\nkubectl create namespace \"${NS}\"\n",
			want: []string{"NS: {type: string, required: true"}},
		// the same script's lib/common.sh (D2): delete then a create not
		// carried, in a function called under an if
		{name: "delete then a create not carried, in a function under an if", script: "tls() {\n  kubectl delete secret $1 -n $2 || true\n  kubectl create secret tls $1 --key key.pem --cert cert.pem -n $2\n}\nkubectl create namespace app\nif [[ ${USE_TLS:-true} == \"true\" ]]; then\n  tls app-tls app\nfi\n",
			want: []string{"name: namespace-app"}, never: []string{"delete-secret-app-tls"},
			notCarried: []string{"it deletes Secret app-tls for line 5 to create it again, which is not carried", "kubectl create secret tls"}},
		// sergiohinojosa/kubernetes-playground's loaddomain.sh (D4): a
		// ConfigMap's .data is no secret
		{name: "a value read from a ConfigMap's .data", script: "DOMAIN=$(kubectl get configmap domain -n default -o jsonpath='{.data.domain}')\nhelm upgrade --install web oci://e.com/web -n web --set host=${DOMAIN}\n",
			want: []string{"DOMAIN: {type: string, required: true"}, never: []string{"KHOOK_SECRET_DOMAIN"}},
		// Euthymos/gitops_workshop's 40-gitea-install.sh (D5): a variable of
		// the environment in --from-literal keeps its name
		{name: "--from-literal=username=${ADMIN_USER}", script: "kubectl -n gitea create secret generic gitea-admin --from-literal=username=\"${ADMIN_USER}\" --from-literal=password=\"${ADMIN_PASS}\"\n",
			want: []string{"ADMIN_USER: {type: string, secret: true, required: true", "username: ${ADMIN_USER | toJson}"}, never: []string{"GITEA_ADMIN_USERNAME"}},
		// the same repository's deploy-gitea.sh (D3): a value with a
		// fallback under an if, put into a values file by sed
		{name: "sed of a variable set per branch into a values file", script: "DOMAIN=$(kubectl get configmap domain -n default -o jsonpath={.data.domain})\nif [ -z \"${DOMAIN}\" ]; then\n  DOMAIN=\"${PUBLIC_IP}.nip.io\"\nfi\nsed 's~domain.placeholder~'\"$DOMAIN\"'~' values.tmpl > gen/values.yaml\nhelm install gitea gitea --repo https://dl.gitea.com/charts/ -n gitea -f gen/values.yaml\n",
			files:      map[string]string{"values.tmpl": "ingress:\n  hosts:\n    - host: git.domain.placeholder\n", "gen/.keep": ""},
			want:       []string{"release: gitea"},
			notCarried: []string{"DOMAIN has a value per branch of the script (${PUBLIC_IP}.nip.io or ${DOMAIN}), and the text sed writes here holds only ${PUBLIC_IP}.nip.io, whichever path the run takes: edit the step"}},
	})
}
