package shscript

import (
	"strings"
	"testing"
)

// What held-out trial 46s68f showed, each cut down.
func TestTrial46s68fIdioms(t *testing.T) {
	copyCM := "kubectl -n default get configmap global -o yaml | sed \"s/namespace: default/namespace: ida/g\" | kubectl -n ida create -f -\n"
	checkIdioms(t, []idiom{
		// mosip's and openg2p's utils/copy_cm_func.sh: a copy into another namespace is no edit to patch (D2)
		{name: "kubectl get -o yaml | sed namespace | kubectl -n OTHER create -f -", script: copyCM + "kubectl create namespace x\n",
			notCarried: []string{"copies the live object into namespace ida, where it does not exist yet, and khook does not copy a live object between namespaces: apply the object from its source", "it reads what kubectl -n default get configmap global -o yaml prints"}},
		// the same: the delete before the copy is not carried without it (D1)
		{name: "delete, then a copy from another namespace", script: "kubectl -n ida delete --ignore-not-found=true configmap global\n" + copyCM + "kubectl create namespace x\n",
			never:      []string{"delete-configmap-global"},
			notCarried: []string{"it deletes ConfigMap global for line 4 to create it again, which is not carried", "copies the live object into namespace ida", "it reads what"}},
		// the same in a function, its names and namespaces its arguments
		{name: "delete, then a copy, in a function", script: "cp_cm() {\n  kubectl -n $3 delete --ignore-not-found=true configmap $1\n  kubectl -n $2 get configmap $1 -o yaml | sed \"s/namespace: $2/namespace: $3/g\" | kubectl -n $3 create -f -\n}\ncp_cm global default ida\nkubectl create namespace x\n",
			never:      []string{"delete-configmap-global"},
			notCarried: []string{"it deletes ConfigMap global for line 5 to create it again", "copies the live object into namespace ida", "it reads what"}},
		// an edit applied back in its own namespace is still a patch's
		{name: "kubectl get -o yaml | sed | kubectl apply -f - in one namespace", script: "kubectl -n kube-system get cm kube-proxy -o yaml | sed -e 's/strictARP: false/strictARP: true/' | kubectl apply -f - -n kube-system\nkubectl create namespace x\n",
			notCarried: []string{"write the change as a patch: step", "it reads what"}},
		// GaloyMoney/blink's initLocalTest.sh: the password's literal is the username too (D4)
		{name: "a username equal to the password set", script: "helm repo add bitnami https://charts.bitnami.com/bitnami\nhelm install --namespace=db mongodb --set auth.username=testGaloy,auth.password=testGaloy bitnami/mongodb\n",
			want: []string{"username: ${AUTH_PASSWORD}", "password: ${AUTH_PASSWORD}"}, never: []string{"testGaloy"}},
	})
}

// mosip's ida/install.sh sets set -e at line 91, before the call that
// runs all its commands but one: only that one carries on (D3).
func TestTrial46s68fLateSetE(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nkubectl create ns demo\nrun() { kubectl label ns demo team=a --overwrite; }\nset -e\nset -o pipefail\nrun\n"})
	said := string(res.Spec)
	if !strings.Contains(said, "without set -e at install.sh:2: set -e is off there (the script sets it at install.sh:4)") {
		t.Errorf("want the one command before set -e named in\n%s", said)
	}
	if strings.Contains(said, "without set -e: the script carries on") {
		t.Errorf("the whole script said to be without set -e in\n%s", said)
	}
	res = importScript(t, map[string]string{"install.sh": "#!/bin/bash\nkubectl create ns demo\nkubectl label ns demo team=a --overwrite\n"})
	if !strings.Contains(string(res.Spec), "install.sh: without set -e: the script carries on after a command fails") {
		t.Errorf("want the script said to be without set -e in\n%s", res.Spec)
	}
}
