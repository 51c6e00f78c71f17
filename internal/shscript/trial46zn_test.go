package shscript

import (
	"strings"
	"testing"
)

// What held-out trial 46zn (IoT, time-series and CMS installers, run once
// on 13aec6c) showed, each cut down.

// D1 (an IoT stack): a function the script calls but never defines
// (print_info beside print_status) is not found, and under set -e bash
// stops there: the note says so and which commands bash never runs.
// Tested (if, ||) it stops nothing.
func TestUndefinedFunctionUnderSetE(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
print_status() { echo "$1"; }
print_status start
kubectl create namespace iot
print_info "digital twins"
kubectl create namespace twins
`})
	nc := res.Model.NotCarried
	if len(nc) != 1 || nc[0].Line != 6 || !strings.Contains(nc[0].Why, "print_info is not defined in the script, which defines print_status") ||
		!strings.Contains(nc[0].Why, "bash never runs the 1 helm/kubectl command(s) after it (the first at install.sh:7)") {
		t.Errorf("not carried %v", nc)
	}
	res = importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
print_status() { echo "$1"; }
print_info "digital twins" || true
kubectl create namespace twins
`})
	if nc := res.Model.NotCarried; len(nc) != 1 || strings.Contains(nc[0].Why, "never runs") || !strings.Contains(nc[0].Why, "is not defined") {
		t.Errorf("tested: not carried %v", nc)
	}
}

// D2 (WordPress and Nextcloud on kind): a foreground port-forward never
// returns; in the background it stops nothing.
func TestForegroundPortForward(t *testing.T) {
	for src, halts := range map[string]bool{
		"kubectl port-forward svc/wordpress 8080:80\n":                   true,
		"kubectl port-forward svc/wordpress 8080:80 &\n":                 false,
		"(kubectl port-forward svc/wordpress 8080:80 >/dev/null) &\n":    false,
		"timeout 5 kubectl port-forward svc/wordpress 8080:80 || true\n": false,
	} {
		res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nkubectl create namespace wp\n" + src + "kubectl create namespace cloud\n"})
		nc := res.Model.NotCarried
		if len(nc) != 1 || strings.Contains(nc[0].Why, "bash never runs the 1 helm/kubectl command(s) after it (the first at install.sh:4)") != halts {
			t.Errorf("%q: not carried %v", src, nc)
		}
	}
}

// D3 (Ghost): helm upgrade with a password the first install generated,
// read back from its Secret: the step reads it from the Secret when it
// runs (valuesFrom secretKeyRef), no input variable nobody can give.
func TestSetFromASecretKey(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
helm upgrade --install ghost oci://registry-1.docker.io/bitnamicharts/ghost -n ghost --create-namespace
export DBPW=$(kubectl get secret --namespace ghost ghost-mysql -o jsonpath="{.data.mysql-password}" | base64 -d)
ROOT="$(kubectl get secret ghost-mysql -n ghost -o jsonpath='{.data.mysql-root-password}' | base64 --decode)"
helm upgrade ghost oci://registry-1.docker.io/bitnamicharts/ghost -n ghost --set mysql.auth.password=$DBPW,mysql.auth.rootPassword=$ROOT,service.type=LoadBalancer
`})
	spec := string(res.Spec)
	for _, want := range []string{"key: mysql-password\n            targetPath: mysql.auth.password", "key: mysql-root-password\n            targetPath: mysql.auth.rootPassword", "type: LoadBalancer"} {
		if !strings.Contains(spec, want) {
			t.Errorf("no %q in\n%s", want, spec)
		}
	}
	if strings.Contains(spec, "DBPW") || strings.Contains(spec, "ROOT") {
		t.Errorf("an input variable for a value read from the cluster:\n%s", spec)
	}
}

// D4 (pump telemetry): kubectl create secret … --dry-run=client -o yaml >
// f, then kubectl apply -f f is the Secret's apply step, as the pipe is;
// the create is folded into it. A short literal (the user "app") masks no
// word of a note ("kubectl ***ly").
func TestCreateDryRunToFileThenApply(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
mkdir -p out
kubectl create secret generic app-creds --from-literal=user=app --from-literal=password=Sup3rS3cretPw -n demo --dry-run=client -o yaml > out/secret.yaml
kubectl apply -f out/secret.yaml
kubectl create configmap unused --from-literal=a=b --dry-run=client -o yaml > out/unused.yaml
kubectl apply -f missing.yaml
`})
	if fateAt(res.Model, 4) != "folded" || fateAt(res.Model, 5) != "step" || fateAt(res.Model, 6) != "read-only" {
		t.Errorf("fates %q %q %q", fateAt(res.Model, 4), fateAt(res.Model, 5), fateAt(res.Model, 6))
	}
	spec := string(res.Spec)
	if !strings.Contains(spec, "kind: Secret") || strings.Contains(spec, "Sup3rS3cretPw") {
		t.Errorf("spec:\n%s", spec)
	}
	for _, n := range append(res.Model.Info, res.Model.NotCarried...) {
		if strings.Contains(n.Why+n.What, "***ly") || strings.Contains(n.Why+n.What, "Sup3rS3cretPw") {
			t.Errorf("note %v", n)
		}
	}
}
