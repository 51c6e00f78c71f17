package shscript

import (
	"testing"
)

// What held-out trial 46s70j (run once, on 774025e) showed, each cut down.
func TestTrial46s70jIdioms(t *testing.T) {
	cases := []idiom{
		// DataONEorg/k8s-cluster's configure-k8s-service-account.sh:142 (D1):
		// use-context in a kubeconfig of the script's own making changes
		// nothing the apply after it reads
		{name: "kubectl config use-context X --kubeconfig=OTHER", script: "kubectl create namespace a\nkubectl config set-cluster c --kubeconfig=$HOME/.kube/sa.config --server=https://k:6443\nkubectl config use-context other-ctx --kubeconfig=$HOME/.kube/sa.config\nkubectl create namespace b\n",
			want: []string{"name: namespace-b"}, never: []string{"other-ctx", "--context/--kubeconfig", "the script picks its cluster here"}},
	}
	// the same script's :37 (D2): a guard on the kubeconfig's current
	// context, whose remedy is khook's --context, not a wait: step
	for guard, run := range map[string]string{
		"want=dev-k8s\nif [[ \"$ctx\" != \"$want\" ]]; then echo \"wrong context\"; exit 1; fi": "--context dev-k8s",
		"[ \"$ctx\" = dev ] || { echo wrong; exit 1; }":                                         "--context dev",
		"[[ $ctx == prod ]] && exit 1":                                                          "a --context other than prod",
		"[[ $ctx != *prod* ]] && exit 1":                                                        "the --context of the cluster it expects",
	} {
		cases = append(cases, idiom{name: guard, script: "ctx=$(kubectl config current-context)\n" + guard + "\nkubectl create namespace a\n", want: []string{"name: namespace-a"},
			notCarried: []string{"a check of which kubeconfig context the script is run with, which it stops on: khook does not run it, and works on the cluster it is given; run khook with " + run}})
	}
	checkIdioms(t, cases)
}

// D1: a use-context in the kubeconfig the script's commands read (its
// KUBECONFIG, else ~/.kube/config) still changes their cluster; one in
// another file is read-only and said nowhere.
func TestTrial46s70jUseContextKubeconfig(t *testing.T) {
	for name, script := range map[string]string{
		"another file":              "kubectl config use-context x --kubeconfig=/tmp/other.config\n",
		"~/.kube/config":            "kubectl config use-context x --kubeconfig=~/.kube/config\n",
		"the script's KUBECONFIG":   "export KUBECONFIG=/tmp/k.config\nkubectl config use-context x --kubeconfig=/tmp/k.config\n",
		"a file only the run knows": "kubectl config use-context x --kubeconfig=\"$KCFG\"\n",
	} {
		t.Run(name, func(t *testing.T) {
			res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nkubectl create namespace a\n" + script + "kubectl create namespace b\n"})
			if got := infoLines(res.Model, "the script works on context x from here"); (len(got) == 1) != (name != "another file") {
				t.Errorf("said at %v: %v", got, res.Model.Info)
			}
		})
	}
}
