package shscript

import (
	"fmt"
	"strings"
	"testing"
)

// What held-out trial 46s67h showed, each cut down.
func TestTrial46s67yIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// idurar's deploy.sh (D7): a poll until a jsonpath is set is a jsonpath wait
		{name: "until V=$(kubectl get -o jsonpath) && [[ -n $V ]]", script: "until LB=$(kubectl get svc web -n demo -o jsonpath='{.status.loadBalancer.ingress[0].hostname}' 2>/dev/null) && [[ -n \"$LB\" ]]; do\n  sleep 5\ndone\n",
			want: []string{"for: jsonpath={.status.loadBalancer.ingress[0].hostname}\n", "\"on\": svc/web"}},
		// iaops' setup.sh (D8): a bounded poll's wait gets the time its turns take
		{name: "for i in $(seq 1 18); … sleep 5", script: "for i in $(seq 1 18); do\n  if kubectl get application web -n argocd &>/dev/null; then found=1; break; fi\n  sleep 5\ndone\n",
			want: []string{"timeout: 1m30s"}},
		{name: "for i in {1..10}; … sleep 3", script: "for i in {1..10}; do\n  kubectl get ns x && break\n  sleep 3\ndone\n",
			want: []string{"timeout: 30s"}},
		// aksctf's setup.sh (D2): a base64 of a secret stays the secret through b64enc, whatever the name
		{name: "PASSWORD_BASE64=$(echo -n $PASSWORD | base64)", script: "PASSWORD=$RANDOM\nPASSWORD_BASE64=$(echo -n $PASSWORD | base64)\nkubectl apply -f - <<EOF\napiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: default}\ndata: {password: $PASSWORD_BASE64}\nEOF\n",
			want: []string{"password: ${PASSWORD | b64enc}"}, never: []string{"PASSWORD_BASE64"}},
		// idurar's deploy.sh (D5): csplit's pieces are named as made by its line
		{name: "kubectl apply -f xx00 of csplit", script: "csplit -sz all.yaml '/^# second/' '{*}'\nkubectl apply -f xx00\ncsplit -f part- -n 3 all.yaml '/^# second/'\nkubectl apply -f part-001 -n x\n",
			files:      map[string]string{"all.yaml": configMap},
			notCarried: []string{"run it in a job: step", "the script makes it earlier (install.sh:3 csplit)", "run it in a job: step", "the script makes it earlier (install.sh:5 csplit)"}},
		// kcindia's deploy-with-namespace.sh (D4): apply -k of a copy under mktemp -d
		{name: "kubectl apply -k $(mktemp -d)/overlay", script: "T=$(mktemp -d)\ncp -r overlay \"$T/\"\nsed -i \"s/PLACEHOLDER/ns1/\" \"$T/overlay/kustomization.yaml\"\nkubectl apply -k \"$T/overlay\"\n",
			files:      map[string]string{"overlay/kustomization.yaml": "resources: []\n"},
			notCarried: []string{"", "", "is under $T, which the script makes when it runs (install.sh:3, filled and edited at install.sh:4, install.sh:5)"}},
		// kubevela's install.sh (D3): a multi-line secret into --from-literal is written through toJson
		{name: "--from-literal=creds=\"${CREDS}\" of a multi-line secret", script: "CREDS=\"[default]\naws_access_key_id = ${AWS_ACCESS_KEY_ID}\"\nkubectl create secret generic c -n x --from-literal=creds=\"${CREDS}\" --dry-run=client -o yaml | kubectl apply -f -\n",
			want: []string{"creds: ${CREDS | toJson}\n"}},
		// aksctf's setup.sh (D1): a kustomization the script writes, named at its line
		{name: "cat <<EOF >> DIR/kustomization.yaml, then kubectl apply -k DIR", script: "mkdir -p manifests\nN=acr$RANDOM\ncat <<EOF >>./manifests/kustomization.yaml\nresources:\n- cm.yaml\nimages:\n- name: app\n  newName: $N.azurecr.io/app\nEOF\nkubectl apply -k ./manifests\n",
			files:      map[string]string{"manifests/cm.yaml": configMap},
			notCarried: []string{"./manifests/kustomization.yaml is written by the script at install.sh:5, not in the repository, and khook's kustomize: step renders the directory as committed: commit that kustomization, with the value the run gives $N, and apply that directory"}},
	})
}

// idurar's deploy.sh (D6): envsubst's variables are said where a step
// reads its file, and a file only csplit reads is said so, once.
func TestEnvsubstToFileSaidWhereRead(t *testing.T) {
	read := importScript(t, map[string]string{
		"install.sh": "#!/bin/bash\nset -e\nenvsubst < m.yaml > out.yaml\nkubectl apply -f out.yaml\n",
		"m.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: $NS\n",
	})
	if said := fmt.Sprint(read.Model.Info); !strings.Contains(said, "$NS are khook variables") {
		t.Errorf("envsubst's variables not said where the file is read: %s", said)
	}
	unread := importScript(t, map[string]string{
		"install.sh": "#!/bin/bash\nset -e\nR=$(mktemp)\nenvsubst < m.yaml > \"$R\"\ncsplit -sz \"$R\" '/^# second/' '{*}'\nkubectl apply -f xx00\n",
		"m.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: $NS\n",
	})
	if said := fmt.Sprint(unread.Model.Info); strings.Contains(said, "written inline") {
		t.Errorf("a manifest said written inline that no step reads: %s", said)
	}
	if said := fmt.Sprint(unread.Model.NotCarried); !strings.Contains(said, "only csplit at install.sh:5 reads the file it writes") {
		t.Errorf("the envsubst's file not said read by csplit: %s", said)
	}
}
