package shscript

import (
	"strings"
	"testing"
)

// A script on two clusters (kubectl config use-context, --context,
// helm --kube-context) is partial: the spec runs against the cluster of
// its first step, and each command on the other is named not carried. A step the script runs only where an
// existence check finds its object says so; a delete under one is
// ignoreNotFound.
func TestTwoClustersAndFoundGuards(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
kubectl apply -f m.yaml -n apps --context hub
if kubectl get deploy/web -n apps --context hub; then
  kubectl rollout status deploy/web -n apps --timeout=2m --context hub
fi
kubectl get crd foos.example.com --context hub && kubectl delete crd foos.example.com --context hub
kubectl config use-context spoke
kubectl apply -f m.yaml -n apps
helm upgrade --install app ./app -n apps --kube-context hub
`, "m.yaml": configMap, "app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n"})
	st := res.Model.Steps
	if len(st) != 4 || st[3].From.Line != 10 {
		t.Fatalf("steps %v, not carried %v", res.Model.Commands, res.Model.NotCarried)
	}
	if d := st[2].Out.Delete; d == nil || !*d.IgnoreNotFound {
		t.Errorf("delete %+v", st[2].Out.Delete)
	}
	if got := infoLines(res.Model, "only when this finds something"); len(got) != 1 || got[0] != 4 {
		t.Errorf("guard notes at %v: %v", got, res.Model.Info)
	}
	if nc := res.Model.NotCarried; len(nc) != 1 || nc[0].Line != 9 || !strings.Contains(nc[0].Why, "it works on context spoke, and this spec's steps on context hub") {
		t.Errorf("not carried %v", nc)
	}
}

// kind create cluster makes its cluster the current context: a command
// naming it by --context works on the same cluster as one naming none.
func TestCreatedClusterIsCurrent(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
kind create cluster --name e2e
kubectl apply -f m.yaml -n apps
kubectl --context kind-e2e apply -f m.yaml -n web
`, "m.yaml": configMap})
	if len(res.Model.Steps) != 2 || len(res.Model.NotCarried) != 1 || res.Model.NotCarried[0].Line != 3 {
		t.Errorf("steps %v, not carried %v", res.Model.Commands, res.Model.NotCarried)
	}
}

// `if helm status x; then helm upgrade …; else helm install …; fi` runs
// the release's step either way: no warning that it depends on the check.
func TestFoundGuardWithBothBranches(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
if helm status app -n apps; then
  helm upgrade app ./app -n apps
else
  helm install app ./app -n apps
fi
`, "app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n"})
	if len(res.Model.Steps) != 1 {
		t.Fatalf("steps %v", res.Model.Commands)
	}
	if got := infoLines(res.Model, "only when this finds something"); len(got) != 0 {
		t.Errorf("guard notes at %v", got)
	}
}
