package shscript

import "testing"

// What held-out trial 46s69c (run once, on 9e31628) showed, each cut down.
func TestTrial46s69cIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// clusterforge's n8n-install.sh: a secret envsubst reads from the environment, never set
		{name: "a secret envsubst reads from the environment is required", script: "envsubst < cm.yaml.template > cm.yaml\nkubectl apply -f cm.yaml -n app\n",
			files: map[string]string{"cm.yaml.template": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  DB_PASSWORD: \"${DB_PASSWORD}\"\n"},
			want:  []string{"DB_PASSWORD: {type: string, secret: true, required: true"}},
		// the same script: envsubst writing a Secret it cannot carry is no helm/kubectl command
		{name: "envsubst > FILE not counted as a helm/kubectl command", script: "kubectl create namespace app\nenvsubst < s.yaml.template > s.yaml\nkubectl apply -f s.yaml -n app\n",
			files:      map[string]string{"s.yaml.template": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  user: admin\n  pw: \"${PW}\"\n"},
			want:       []string{"helm/kubectl commands: 2, of which 1 became steps, 0 were folded into steps, 0 are read-only, 1 not carried.", "Of the 2 lines not carried below, 1 are such commands and 1 are other commands"},
			notCarried: []string{"a Secret from a file", "made by the envsubst at install.sh:4"}},
		// elf-n8n's deploy-n8n.sh: a return on the answer in an existence check's found
		// path ends the function: the Secret after the check keeps what is there
		{name: "return on an answer where the Secret is found", script: "conf() {\n  if kubectl get secret s -n app &>/dev/null; then\n    read -r response\n    if [[ \"$response\" != \"y\" ]]; then return; fi\n    kubectl delete secret s -n app\n  fi\n  read -s PW\n  kubectl create secret generic s -n app --from-literal=pw=\"$PW\"\n}\nconf\n",
			want: []string{"when: '!(vars.get(\"response\", \"\") != \"y\")'\n    delete:", "      skipIf: exists\n"}},
		// a return on a variable in a function: the rest of its body, past the if it is in
		{name: "return in a nested if ends the function", script: "f() {\n  if [ -n \"$A\" ]; then\n    if [ \"$B\" != y ]; then return; fi\n    kubectl create namespace a\n  fi\n  kubectl create namespace b\n}\nf\nkubectl create namespace c\n",
			want: []string{"name: namespace-b\n    needs:\n      - namespace-a\n    when: (!(vars.get(\"A\", \"\") != \"\") || (!(vars.get(\"B\", \"\") != \"y\")))\n", "name: namespace-c\n    needs:\n      - namespace-b\n    apply:"}},
		// jellyfin's preflight_and_bootstrap.sh: a sourced file's guard returns from the source, not the function
		{name: "a return in a file sourced in a function ends the source", script: "f() {\n  source ./lib.sh\n  kubectl create namespace a\n}\nf\n",
			files: map[string]string{"lib.sh": "if [ -n \"$LIB_SOURCED\" ]; then return 0; fi\nLIB_SOURCED=1\n"},
			want:  []string{"name: namespace-a\n    apply:"}},
		// clusterforge's n8n-install.sh: a read -p menu in while true, its actions in functions
		{name: "a menu loop calling functions is walked once", script: "clean() { kubectl delete deployment web -n web --ignore-not-found; }\ninstall() { kubectl apply -f web.yaml -n web; }\nwhile true; do\n  read -p \"option: \" choice\n  case $choice in\n    5) clean; install ;;\n    q|Q) exit 0 ;;\n  esac\ndone\n",
			files: map[string]string{"web.yaml": configMap},
			want:  []string{"helm/kubectl commands: 2, of which 2 became steps", "name: apply-web\n"}, never: []string{"delete-deployment-web-2"},
			notCarried: []string{"a loop khook cannot unroll at import; its body is carried once"}},
		// supabase's setup.sh: one ${X:+…} in a -f <(cat <<EOF …) values document
		{name: "a values document through <(cat <<EOF) with ${X:+word}", script: "helm upgrade --install web oci://e.com/nginx -n web -f <(cat <<EOT\nreplicaCount: 2\nprovider: ${GCP_PROJECT:+bigquery}${GCP_PROJECT:-postgres}\nEOT\n)\n",
			// the document's other values carried since fixer 46s70d
			want:       []string{"#   install.sh:3: -f <(cat <<EOT …): the value provider is left out (Helm takes the chart's default there", "replicaCount: 2"},
			never:      []string{"-f -:", "standard input"},
			notCarried: []string{"the document's other values are carried): ${GCP_PROJECT:+…} writes its text only when"}},
	})
}
