package shscript

import (
	"testing"

	"github.com/khook/khook/internal/importer"
)

// What held-out trial 46s70l (run once, on 774025e) showed, cut down.
func TestTrial46s70lIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// naikibro/fleetman's run-cluster.sh (D1): $? of an existence check is the check, as `if !` is
		{name: "kubectl get ns x; if [ $? -ne 0 ]; then kubectl create ns x; fi", script: "kubectl get namespace demo >/dev/null 2>&1\nif [ $? -ne 0 ]; then\n  kubectl create namespace demo\nfi\n",
			want: []string{"name: namespace-demo"}},
		{name: "kubectl get ns x; [ $? -ne 0 ] && kubectl create ns x", script: "kubectl get namespace demo >/dev/null 2>&1\n[ $? -ne 0 ] && kubectl create namespace demo\n",
			want: []string{"name: namespace-demo"}},
		{name: "X=$(kubectl get ns x); if [ $? -ne 0 ]", script: "X=$(kubectl get namespace demo 2>/dev/null)\nif [ $? -ne 0 ]; then\n  kubectl create namespace demo\nfi\n",
			want: []string{"name: namespace-demo"}},
		{name: "kubectl get ns | grep -q x; if [ $? == 0 ]; then echo; else create; fi", script: "kubectl get ns | grep -q vault\nif [ $? == 0 ]; then\n  echo \"vault is there\"\nelse\n  kubectl create namespace vault\nfi\n",
			want: []string{"name: namespace-vault"}},
		{name: "kubectl get ns x; if [ $? -ne 1 ]; then echo; else create; fi", script: "kubectl get namespace demo >/dev/null 2>&1\nif [ $? -ne 1 ]; then\n  echo found\nelse\n  kubectl create namespace demo\nfi\n",
			want: []string{"name: namespace-demo"}},
		// a Secret the script creates only where the check finds none keeps its data
		{name: "kubectl get secret s; if [ $? -eq 0 ]; then echo; else create; fi", script: "kubectl get secret s -n demo >/dev/null 2>&1\nif [ $? -eq 0 ]; then\n  echo exists\nelse\n  kubectl create secret generic s -n demo --from-literal=k=$PASS\nfi\n",
			want: []string{"name: secret-s", "skipIf: exists"}},
		{name: "kubectl get ns x; if [ \"$?\" -eq \"0\" ]; then kubectl delete ns x; fi", script: "kubectl get ns old >/dev/null 2>&1\nif [ \"$?\" -eq \"0\" ]; then kubectl delete ns old; fi\n",
			want: []string{"ignoreNotFound: true"}},
		// nat-prohmpiriya/booking-rush-10k-rps's 02-install-addon.sh (N1, N2): an ssh line named once, by its helm command; one that only reads is nothing to carry
		{name: "ssh host \"export KUBECONFIG=… && helm upgrade …\"", script: "ssh u@h \"export KUBECONFIG=/etc/k.yaml && helm upgrade --install pg bitnami/postgresql\"\nkubectl create namespace web\n",
			want: []string{"name: namespace-web"}, notCarried: []string{"a helm command in a string ssh runs, which khook does not: write it in the script itself"}},
		{name: "ssh host \"kubectl get pods\"", script: "ssh u@h \"kubectl get pods -n web\"\nkubectl create namespace web\n",
			want: []string{"name: namespace-web"}},
		{name: "ssh host \"systemctl restart k3s && kubectl get nodes\"", script: "ssh u@h \"systemctl restart k3s && kubectl get nodes\"\nkubectl create namespace web\n",
			want: []string{"name: namespace-web"}, notCarried: []string{"khook runs no shell commands; run it in a job: step (a container image that has ssh)"}},
	})
}

// The check whose $? an if tests is one read-only command, counted once
// (trial 46s70l's D1), also at each call of a function.
func TestTrial46s70lStatusCheckCountedOnce(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nensure_ns() {\n  kubectl get namespace \"$1\" >/dev/null 2>&1\n  if [ $? -ne 0 ]; then\n    kubectl create namespace \"$1\"\n  fi\n}\nensure_ns a\nensure_ns b\nX=$(kubectl get ns c)\n[ $? -ne 0 ] && kubectl create ns c\n"})
	fates := map[importer.Fate]int{}
	for _, c := range res.Model.Commands {
		fates[c.Fate]++
	}
	if fates[importer.FateReadOnly] != 3 || fates[importer.FateStep] != 3 || len(res.Model.Commands) != 6 {
		t.Errorf("commands %v, want 3 read-only and 3 steps", res.Model.Commands)
	}
	if len(res.Model.NotCarried) != 0 {
		t.Errorf("not carried %v, want none", res.Model.NotCarried)
	}
}

// A read-only command in a string ssh runs is counted read-only (trial
// 46s70l's N2), one that changes the cluster not carried.
func TestTrial46s70lSSHStringsCounted(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nssh u@h \"kubectl get pods\"\nssh u@h \"helm version --short\"\nssh u@h \"kubectl create ns x --dry-run=client -o yaml | kubectl apply -f -\"\n"})
	fates := map[importer.Fate]int{}
	for _, c := range res.Model.Commands {
		fates[c.Fate]++
	}
	if fates[importer.FateReadOnly] != 2 || fates[importer.FateNotCarried] != 1 || len(res.Model.Commands) != 3 || len(res.Model.NotCarried) != 1 {
		t.Errorf("commands %v, not carried %v: want 2 read-only, 1 not carried, named once", res.Model.Commands, res.Model.NotCarried)
	}
}
