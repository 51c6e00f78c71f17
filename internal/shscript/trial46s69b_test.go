package shscript

import (
	"fmt"
	"strings"
	"testing"
)

// What held-out trial 46s69b (run once, on 9e31628) showed, each cut down.

// maraqa1/lake3's 03-app-zammad.sh: a Windows-1252 apostrophe (0x92) in a
// comment is text to bash, not a binary file; in a value it is said.
func TestTrial46s69bNotUTF8(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\n# don\x92t remove\nkubectl create namespace demo\nkubectl create namespace \"d\x92mo\"\n"})
	if !strings.Contains(string(res.Spec), "name: namespace-demo") {
		t.Errorf("no step in\n%s", res.Spec)
	}
	if got := fmt.Sprint(infoLines(res.Model, "in a comment: bash skips it")); got != "[3]" {
		t.Errorf("comment note at %s, want [3]", got)
	}
	if got := fmt.Sprint(infoLines(res.Model, "save the script as UTF-8")); got != "[5]" {
		t.Errorf("value warning at %s, want [5]", got)
	}
}

// JesusFilm/core's deploy-stage.sh: --kube-context on one helm line is for
// it alone; the apply after it is on the script's cluster again.
func TestTrial46s69bKubeContextOfOneCommand(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nkubectl apply -f a.yaml\nhelm upgrade --install web oci://e.com/web --kube-context=stage\nkubectl apply -f b.yaml\n",
		"a.yaml": configMap, "b.yaml": strings.Replace(configMap, "name: c", "name: b", 1)})
	said := fmt.Sprint(res.Model.Info)
	if strings.Contains(said, "those after it") || !strings.Contains(said, "this command alone works on context stage") {
		t.Errorf("said %s", said)
	}
}

func TestTrial46s69bIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// maskarb/platform's deploy-unleash.sh: an existence check through $CLI
		{name: "if $CLI get namespace; then echo; else $CLI create namespace", script: "CLI=\"kubectl\"\nif $CLI get namespace demo &>/dev/null; then\n  echo exists\nelse\n  $CLI create namespace demo\nfi\n", want: []string{"name: namespace-demo"}},
		// WeOwnNetwork/ai's matomo deploy.sh: a label check guarding the label it sets
		{name: "if ! get -o jsonpath | grep -q; then label --overwrite", script: "if ! kubectl get namespace demo -o jsonpath='{.metadata.labels.name}' | grep -q demo; then\n  echo labeling\n  kubectl label namespace demo name=demo --overwrite\nelse\n  echo labeled\nfi\n", want: []string{"target: namespace/demo"}},
		// the same script: a retry loop around an apply
		{name: "while [ $n -lt 3 ]; do if apply; then break; else sleep; fi; done", script: "n=0\nwhile [ $n -lt 3 ]; do\n  if kubectl apply -f cm.yaml -n x; then break; else echo retry; sleep 10; n=$((n+1)); fi\ndone\n",
			files: map[string]string{"cm.yaml": configMap}, want: []string{"file: ./cm.yaml"}},
		// maskarb/platform's deploy-unleash.sh: a token literal under an env name in a heredoc manifest
		{name: "env {name: X_TOKENS, value: literal} in a heredoc manifest", script: "cat <<EOF | kubectl apply -n demo -f -\napiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: web, image: nginx, env: [{name: INIT_ADMIN_API_TOKENS, value: \"s3cr3t-d7\"}, {name: MODE, value: demo}]}]}\nEOF\n",
			want: []string{"INIT_ADMIN_API_TOKENS: {type: string, secret: true", `value: "${INIT_ADMIN_API_TOKENS}"`, "value: demo"}, never: []string{"s3cr3t-d7"}},
	})
}

// WeOwnNetwork/ai's matomo deploy.sh: an else that warns and lists the
// pods still carries on where the wait failed: said at the wait's line.
func TestTrial46s69bToleratedWaitWithReadOnlyElse(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nwarn() { echo \"$1\" >&2; }\nkubectl create namespace web\nif kubectl wait --for=condition=ready pod -l app=web -n web --timeout=120s; then echo ok; else warn \"not ready\"; kubectl get pods -n web; fi\n"})
	if got := fmt.Sprint(infoLines(res.Model, "the script ignores its failure")); got != "[5]" {
		t.Errorf("said at %s, want [5]", got)
	}
}

// WeOwnNetwork/ai's matomo deploy.sh: cert-manager's bundle and a
// ClusterIssuer installed only where absent are applied always: said at
// the check.
func TestTrial46s69bInstallOnlyWhereAbsent(t *testing.T) {
	res := importScript(t, map[string]string{"issuer.yaml": configMap, "install.sh": "#!/bin/bash\nset -e\nif ! kubectl get namespace cert-manager &>/dev/null; then\n  kubectl apply -f https://e.com/cert-manager.yaml\nfi\nissuer() {\n  if kubectl get configmap c &>/dev/null; then return 0; fi\n  kubectl apply -f issuer.yaml -n x\n}\nissuer\n"})
	if got := fmt.Sprint(infoLines(res.Model, "and leaves one that is installed alone")); got != "[3]" {
		t.Errorf("bundle said at %s, want [3]", got)
	}
	if got := fmt.Sprint(infoLines(res.Model, "where this finds something the script returns")); got != "[7]" {
		t.Errorf("issuer said at %s, want [7]", got)
	}
}

// WeOwnNetwork/ai's matomo deploy.sh: the only values file is made at run
// time (mktemp, sed, cat >>): no helm step of the chart's defaults.
func TestTrial46s69bValuesMadeAtRunTime(t *testing.T) {
	files := map[string]string{"chart/Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\n", "chart/values.yaml": "host: DOMAIN_PLACEHOLDER\n",
		"install.sh": "#!/bin/bash\nset -e\nkubectl create namespace web\nV=$(mktemp); P=$(mktemp); echo \"admin: {password: $(openssl rand -hex 12)}\" > \"$V\"\nsed \"s/DOMAIN_PLACEHOLDER/x.com/g\" chart/values.yaml > \"$P\"; cat \"$V\" >> \"$P\"\nhelm upgrade --install web ./chart -n web --values \"$P\"\nP2=$(mktemp)\nhelm upgrade --install web2 ./chart -n web --values \"$P2\"\n"}
	res := importScript(t, files)
	if len(res.Model.Steps) != 1 || fateAt(res.Model, 6) != "not carried" || fateAt(res.Model, 8) != "not carried" {
		t.Errorf("lines 6, 8: %q %q\n%s", fateAt(res.Model, 6), fateAt(res.Model, 8), res.Spec)
	}
}
