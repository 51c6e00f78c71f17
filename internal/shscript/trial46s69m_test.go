package shscript

import (
	"fmt"
	"strings"
	"testing"
)

// What held-out trial 46s69m showed, each cut down.
func TestTrial46s69mIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// eksai's install.sh (D1): a branch an argument turns on is named, not dropped
		{name: "a branch guarded by $# without the arguments", script: "DEPLOY=false\nif [ $# -eq 1 ]; then TOKEN=\"$1\"; DEPLOY=true; fi\nif [ \"$DEPLOY\" = true ]; then\n  kubectl create namespace ai\nfi\nkubectl create namespace other\n",
			want:       []string{"name: namespace-other"},
			notCarried: []string{"what the script does when it is given arguments ($# at install.sh:4 was counted without them)"}},
		// homelab's bootstrap.sh (D4): the environment's value or a prompt's is required
		{name: "if -z X; then read -p … X; fi", script: "if [[ -z \"${DOMAIN:-}\" ]]; then\n  read -rp \"Domain: \" DOMAIN\nfi\nkubectl create namespace \"$DOMAIN\"\n",
			want: []string{"DOMAIN: {type: string, required: true", "name: ${DOMAIN}"}},
		// homelab's bootstrap.sh (D2): a flag a check sets with && takes the fresh cluster's path
		{name: "kubectl get secret x && found=true, then if on it", script: "found=false\nkubectl get secret cf -n cm && found=true\nif [[ \"$found\" == \"true\" ]]; then\n  echo there\nelse\n  kubectl create secret generic cf -n cm --from-literal=t=\"$CF\" --dry-run=client -o yaml | kubectl apply -f -\nfi\n",
			want: []string{"name: cf", "skipIf: exists"}},
		// homelab's bootstrap.sh (D3): helm --values <(echo "$V") carries the release, says the values
		{name: "helm --values <(echo \"$V\") of a value the run knows", script: "V=$(cat /dev/null)\nhelm upgrade --install argocd oci://e.com/argo-cd -n argocd --values <(echo \"$V\")\n",
			want:       []string{"release: argocd"},
			notCarried: []string{"commit the values as a file and name it with -f"}},
	})
}

// portfolio's deploy-k3s-local.sh (trial 46s69m's D5): a Secret's user
// name (POSTGRES_USER=postgres) is no secret the notes mask: the exec's
// note still names the pod and the container; the password is masked.
func TestSecretUserNameNotMasked(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\n" +
		"kubectl create secret generic app -n app --from-literal=POSTGRES_USER=postgres --from-literal=POSTGRES_PASSWORD=pw-s3cr3t --dry-run=client -o yaml | kubectl apply -f -\n" +
		"kubectl exec -n app postgres-primary-0 -c postgres -- psql -c 'select 1'\n"})
	said := fmt.Sprint(res.Model.NotCarried, res.Model.Info, res.Model.Commands)
	if !strings.Contains(said, "postgres-primary-0 -c postgres") {
		t.Errorf("the exec's pod or container is masked: %s", said)
	}
	if strings.Contains(said, "pw-s3cr3t") || strings.Contains(string(res.Spec), "pw-s3cr3t") {
		t.Errorf("the password is said or written")
	}
	if !strings.Contains(string(res.Spec), "APP_POSTGRES_USER") {
		t.Errorf("the user is no secret variable:\n%s", res.Spec)
	}
}
