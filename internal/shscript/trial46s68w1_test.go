package shscript

import (
	"fmt"
	"strings"
	"testing"
)

// What held-out trials 46s68e and 46s68g showed (fixer 46s68w1), each cut down.
func TestTrial46s68w1Idioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// argo-juunini's install_argo_workflows.sh: rollout status of every deployment, no --timeout (46s68g's D4)
		{name: "rollout status deployment without a name or --timeout", script: "kubectl rollout status deployment -n argo\n",
			want: []string{"\"on\": deployment", "kubectl rollout status without --timeout waits until the rollout is done, without limit"}},
		{name: "rollout status deployment without a name, with --timeout", script: "kubectl rollout status deployment -n argo --timeout=10m\n",
			want: []string{"timeout: 10m"}, never: []string{"without limit"}},
		// cheetah's install-stage.sh: every claim deleted; khook's delete keeps them without deleteData (46s68e's D1)
		{name: "kubectl delete --all pvc", script: "kubectl delete --namespace stage --all deployments,pvc\nkubectl delete crd/foos.example.com\n",
			want:  []string{"step delete-pvc: khook's delete step keeps a PersistentVolumeClaim (and its data) unless it says deleteData: true", "step delete-crd-foos-example-com: khook's delete step keeps a CRD of which custom resources exist unless it says deleteCRDs: true"},
			never: []string{"deleteData: true\n", "delete-deployments: khook's delete"}},
		// c8sm's 7.2-install-c8.sh: the rendered objects go to the apply's -n (46s68g's D2)
		{name: "helm template | kubectl apply -n NS", script: "NS=apps\nhelm template web oci://e.com/nginx --version 1.0.0 | kubectl apply -n \"$NS\" -f -\n",
			want: []string{"release: web\n      namespace: apps\n"}, never: []string{"helm without -n"}},
		{name: "helm template -n A | kubectl apply -n B", script: "helm template web oci://e.com/nginx -n a | kubectl apply -n b -f -\n",
			want: []string{"namespace: a\n", "kubectl apply -n b refuses an object naming another namespace"}},
	})
}

// backstage's script/install.sh: an option loop run over the arguments
// given, then a guard on an option they do not give (46s68g's D1): bash
// stops at the guard, so nothing after it is written.
func TestTrial46s68w1OptionGuard(t *testing.T) {
	script := "#!/bin/bash\nset -e\nwhile test $# -gt 0; do case \"$1\" in --action) shift; action=$1; shift;; --token) shift; token=$1; shift;; *) exit 1;; esac; done\n" +
		"case $action in\n  deploy)\n    if ! [[ ${token} ]]; then echo \"need --token\"; exit 1; fi\n    kubectl create namespace demo ;;\nesac\n"
	res := importScript(t, map[string]string{"install.sh": script}, "--action", "deploy")
	said := fmt.Sprint(res.Model.NotCarried)
	for _, w := range []string{"the option loop at install.sh:3 leaves token unset, so the script stops here", "bash never runs it: the script stops before it, at install.sh:6"} {
		if !strings.Contains(said, w) {
			t.Errorf("want %q in %s", w, said)
		}
	}
	if len(res.Model.Steps) != 0 {
		t.Errorf("steps written past the guard: %v", res.Model.Steps)
	}
	// the script's own guard: two mandatory options in one condition
	or := strings.Replace(script, "! [[ ${token} ]]", "! [[ ${action} ]] || ! [[ ${token} ]]", 1)
	res = importScript(t, map[string]string{"install.sh": or}, "--action", "deploy")
	if said := fmt.Sprint(res.Model.NotCarried); !strings.Contains(said, "leaves token unset") || len(res.Model.Steps) != 0 {
		t.Errorf("! [[ $A ]] || ! [[ $B ]]: %s, steps %v", said, res.Model.Steps)
	}
	res = importScript(t, map[string]string{"install.sh": script}, "--action", "deploy", "--token", "x")
	if len(res.Model.Steps) != 1 || len(res.Model.NotCarried) != 0 {
		t.Errorf("with --token: steps %v, not carried %v", res.Model.Steps, res.Model.NotCarried)
	}
}
