package shscript

import (
	"path/filepath"
	"strings"
	"testing"
)

// 46s69e D1: a manifest whose file name starts with a variable
// ("${P}cm.yaml") is written from the spec's folder, as cm.yaml is.
func TestTrial46s69eNamePrefixRebased(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "install.sh", "#!/bin/bash\nset -e\nkubectl apply -f cm.yaml\nkubectl apply -f \"${P:-}cm.yaml\"\nkubectl apply -f \"${D:-k8s}/cm.yaml\"\n")
	write(t, dir, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\n")
	res, err := Import("install.sh", Options{Dir: dir, SpecDir: filepath.Join(dir, "out")})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"file: ../cm.yaml\n", "file: ../${P}cm.yaml\n", "file: ${D}/cm.yaml\n"} {
		if !strings.Contains(string(res.Spec), w) {
			t.Errorf("want %q in\n%s", w, res.Spec)
		}
	}
}

// What held-out trials 46s69e and 46s69f showed, each cut down.
func TestTrial46s69efIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// 46s69f D1: kind export kubeconfig switches back to the first cluster
		{name: "kind export kubeconfig back to the first cluster", script: "kind create cluster --name a\nhelm install first oci://r.example/c/nginx\nkind create cluster --name b\nhelm install second oci://r.example/c/nginx\nkind export kubeconfig --name=a\nhelm install third oci://r.example/c/nginx\n",
			want:       []string{"name: first\n", "name: third\n"},
			notCarried: []string{"create the cluster before khook runs", "create the cluster before khook runs", "it works on context kind-b, and this spec's steps on context kind-a", "it makes the kind cluster it names the kubeconfig's current context"}},
		// 46s69e D2: a variable set only under if [ "$1" ] is empty on the path without $1
		{name: "a variable set only when an argument is given", script: "if [ \"$1\" ]; then PREFIX=\"$1-\"; fi\nkubectl apply -f \"${PREFIX}cm.yaml\"\n",
			files: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\n"},
			want:  []string{`PREFIX: {type: string, default: "", description: "set by the script only on another branch`, "file: ./${PREFIX}cm.yaml\n"}},
		// the same under set -u: bash stops on the unset variable, so it stays required
		{name: "a variable set only when an argument is given, under set -u", script: "set -u\nif [ \"${1:-}\" ]; then PREFIX=\"$1-\"; fi\nkubectl apply -f \"${PREFIX}cm.yaml\"\n",
			files: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\n"},
			want:  []string{"PREFIX: {type: string, required: true"}},
		// 46s69f N8: kind export kubeconfig to a cluster the script did not create
		{name: "kind export kubeconfig to another cluster", script: "kind create cluster --name a\nhelm install first oci://r.example/c/nginx\nkind export kubeconfig --name b\nhelm install second oci://r.example/c/nginx\n",
			want:       []string{"name: first\n"},
			notCarried: []string{"create the cluster before khook runs", "it makes the kind cluster it names the kubeconfig's current context", "it works on context kind-b, and this spec's steps on context kind-a"}},
	})
}

// 46s69f D2: for (( i=0; i<$1; i++ )) with $1 given is unrolled, as
// bash runs it; without it the counter is the loop's, not the
// environment's; a retry so written is the wait it stands for.
func TestTrial46s69fCStyleLoop(t *testing.T) {
	loop := "#!/bin/bash\nset -e\nfor (( i=0;i<$1; i++))\ndo\n  kubectl create namespace \"node-$i\"\ndone\nkubectl create namespace \"after-$i\"\n"
	res := importScript(t, map[string]string{"install.sh": loop}, "3")
	for _, w := range []string{"name: node-0\n", "name: node-1\n", "name: node-2\n", "name: after-3\n"} {
		if !strings.Contains(string(res.Spec), w) {
			t.Errorf("want %q in\n%s", w, res.Spec)
		}
	}
	if strings.Contains(string(res.Spec), "node-3") || len(res.Model.NotCarried) != 0 {
		t.Errorf("a fourth turn, or not carried %v:\n%s", res.Model.NotCarried, res.Spec)
	}
	res = importScript(t, map[string]string{"install.sh": loop})
	if !strings.Contains(string(res.Spec), `i: {type: string, required: true, description: "a loop's counter, which the script counts at install.sh:3"}`) {
		t.Errorf("want the loop's counter in\n%s", res.Spec)
	}
	checkIdioms(t, []idiom{
		{name: "for (( )) with literal bounds", script: "for ((n = 1; n <= 2; n += 1)); do kubectl create namespace \"ns-$n\"; done\n",
			want: []string{"name: ns-1\n", "name: ns-2\n"}, never: []string{"ns-0", "ns-3"}},
		{name: "for (( )) retrying a check", script: "for ((i=0; i<30; i++)); do kubectl get crd foos.example.com && break; sleep 2; done\nkubectl create namespace a\n",
			want: []string{"name: wait-crd-foos-example-com\n    timeout: 1m\n", "name: a\n"}},
	})
}
