package shscript

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/spec"
)

// What held-out trial 46s70j (run once, on 774025e) showed, each cut down.
func TestTrial46s70jIdioms(t *testing.T) {
	cases := []idiom{
		// DataONEorg/k8s-cluster's configure-k8s-service-account.sh:142 (D1):
		// use-context in a kubeconfig of the script's own making changes
		// nothing the apply after it reads
		{name: "kubectl config use-context X --kubeconfig=OTHER", script: "kubectl create namespace a\nkubectl config set-cluster c --kubeconfig=$HOME/.kube/sa.config --server=https://k:6443\nkubectl config use-context other-ctx --kubeconfig=$HOME/.kube/sa.config\nkubectl create namespace b\n",
			want: []string{"name: namespace-b"}, never: []string{"other-ctx", "--context/--kubeconfig", "the script picks its cluster here"}},
		// the same script's :82 (N2): envsubst fills the token Secret's
		// only value from one the script generates: a secret variable
		{name: "cat secret.yaml | envsubst | kubectl apply -f - of a generated value", script: "export TOK=$(head -c 25 /dev/random | base64)\ncat t.yaml | SA=web envsubst | kubectl apply -f -\n",
			files: map[string]string{"t.yaml": tokenSecret("${TOK}")}, want: []string{"name: web-secret", "extra: ${TOK}", "TOK: {type: string, secret: true, required: true"}},
		{name: "cat secret.yaml | envsubst | kubectl apply -f - of a literal", script: "cat t.yaml | SA=web envsubst | kubectl apply -f -\nkubectl create namespace a\n",
			files: map[string]string{"t.yaml": tokenSecret("czNjcjN0LTQ2czcwag==")}, want: []string{"name: namespace-a"}, never: []string{"czNjcjN0LTQ2czcwag=="},
			notCarried: []string{"a Secret from a file: khook never copies a file's content into the spec"}},
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

const removedDeploy = "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec: {template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: nginx}]}}}\n"

const webService = "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\nspec: {selector: {app: web}, ports: [{port: 80}]}\n"

// NCEAS/metadig-engine's start.sh:9 (D3): kubectl applies a file's
// Service and refuses its Deployment of a removed API version: the step
// applies the others, inline, and the Deployment is named; a file with a
// Secret besides is named whole, its content never copied.
func TestTrial46s70jRemovedObjectOfAFile(t *testing.T) {
	for _, tc := range []struct {
		other, want, why string
	}{
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: default}\ndata: {url: '${URL}'}\n---\n" + webService,
			"        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata: {name: web, namespace: default}\n            data: {url: '$${URL}'}\n            ---\n            apiVersion: v1\n            kind: Service\n",
			"./app.yaml holds an object of an API version the cluster no longer serves (deployment.extensions/web: extensions/v1beta1 Deployment was removed in v1.16: use apps/v1): kubectl refuses it and applies the others (configmap/web, service/web), and under set -e the script stops there"},
		{"apiVersion: v1\nkind: Secret\nmetadata: {name: web, namespace: default}\nstringData: {pw: s3cr3t-46s70j}\n",
			"name: namespace-a", "khook validate refuses it: manifest ./app.yaml holds deployment.extensions/web"},
	} {
		dir := t.TempDir()
		write(t, dir, "install.sh", "#!/bin/bash\nset -e\nkubectl apply -f app.yaml\nkubectl create namespace a\n")
		write(t, dir, "app.yaml", "# the web app\n"+removedDeploy+"---\n"+tc.other)
		res, err := Import("install.sh", Options{Dir: dir, Check: removedAt})
		if err != nil {
			t.Fatal(err)
		}
		if s := string(res.Spec); !strings.Contains(s, tc.want) || strings.Contains(s, "kind: Deployment") || strings.Contains(s, "s3cr3t") ||
			len(res.Model.NotCarried) != 1 || !strings.Contains(res.Model.NotCarried[0].Why, tc.why) {
			t.Errorf("not carried %v\n%s", res.Model.NotCarried, s)
		}
	}
}

// removedAt finds each extensions/v1beta1 object of a file: manifest at
// its apiVersion line, as khook validate does.
func removedAt(s *spec.Spec) (ps spec.Problems) {
	for _, st := range s.Steps {
		for j, m := range st.Apply.Manifests {
			path := filepath.Join(s.BaseDir, m.File)
			b, err := readFile(path)
			for n, line := range strings.Split(string(b), "\n") {
				if err == nil && m.File != "" && line == "apiVersion: extensions/v1beta1" {
					ps = append(ps, spec.Problem{Pos: spec.Pos{File: path, Line: n + 1}, Path: fmt.Sprintf("%s.apply.manifests.%d", st.Path, j),
						Message: "deployment.extensions/web: extensions/v1beta1 Deployment was removed in v1.16: use apps/v1"})
				}
			}
		}
	}
	return ps
}

func tokenSecret(value string) string {
	return "apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${SA}-secret\n  annotations: {kubernetes.io/service-account.name: ${SA}}\ntype: kubernetes.io/service-account-token\ndata:\n  extra: " + value + "\n"
}
