package shscript

import (
	"testing"
)

// What held-out trial 46s70j (run once, on 774025e) showed, each cut down.
func TestTrial46s70jIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// DataONEorg/k8s-cluster's configure-k8s-service-account.sh:142 (D1):
		// use-context in a kubeconfig of the script's own making changes
		// nothing the apply after it reads
		{name: "kubectl config use-context X --kubeconfig=OTHER", script: "kubectl create namespace a\nkubectl config set-cluster c --kubeconfig=$HOME/.kube/sa.config --server=https://k:6443\nkubectl config use-context other-ctx --kubeconfig=$HOME/.kube/sa.config\nkubectl create namespace b\n",
			want: []string{"name: namespace-b"}, never: []string{"other-ctx", "--context/--kubeconfig", "the script picks its cluster here"}},
		{name: "kubectl config use-context X --kubeconfig=~/.kube/config", script: "kubectl create namespace a\nkubectl config use-context other-ctx --kubeconfig=$HOME/.kube/config\nkubectl create namespace b\n",
			want: []string{"name: namespace-b"}, never: []string{"not on the one the script's commands"}},
	})
}

// D1: a use-context in the kubeconfig the script's commands read (its
// KUBECONFIG, else ~/.kube/config) still changes their cluster; one in
// another file is read-only and said nowhere.
func TestTrial46s70jUseContextKubeconfig(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		said         bool
	}{
		{"another file", "kubectl config use-context x --kubeconfig=/tmp/other.config\n", false},
		{"~/.kube/config", "kubectl config use-context x --kubeconfig=~/.kube/config\n", true},
		{"the script's KUBECONFIG", "export KUBECONFIG=/tmp/k.config\nkubectl config use-context x --kubeconfig=/tmp/k.config\n", true},
		{"a file only the run knows", "kubectl config use-context x --kubeconfig=\"$KCFG\"\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nkubectl create namespace a\n" + tc.script + "kubectl create namespace b\n"})
			if got := infoLines(res.Model, "the script works on context x from here"); (len(got) == 1) != tc.said {
				t.Errorf("said at %v, want %v: %v", got, tc.said, res.Model.Info)
			}
		})
	}
}
