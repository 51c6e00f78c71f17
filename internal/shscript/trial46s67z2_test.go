package shscript

import (
	"strings"
	"testing"

	"github.com/khook/khook/internal/importer"
	"github.com/khook/khook/spec"
)

// What held-out trials 46s67i and 46s67j showed, each cut down.
func TestTrial46s67z2Idioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// cnpg/up.sh (46s67j's D1): a plugin's verb that only prints
		{name: "kubectl cnpg status", script: "kubectl create namespace cnpg\nkubectl cnpg status cluster-example\nkubectl cnpg -n cnpg report cluster c\n",
			want: []string{"name: namespace-cnpg"}},
		// eks-gpu's install.sh (46s67i's D4): a helm values file applied by kubectl
		{name: "kubectl apply -f of a values file", script: "kubectl create namespace a\nkubectl apply -f values.yaml\n",
			files:      map[string]string{"values.yaml": "rules:\n  custom:\n    - metricsQuery: avg(<<.Series>>)\n"},
			notCarried: []string{"values.yaml holds no Kubernetes object (no kind), so kubectl fails there too: a helm values file?"}, never: []string{"metricsQuery", "u003c"}},
		// yatai's quick-install-yatai.sh (46s67i's D1): a fresh cluster's password, not the re-run's
		{name: "a password generated where the Secret is absent", script: "if ! kubectl -n db get secret pg-secret >/dev/null 2>&1; then\n  PW=$(openssl rand -hex 16)\nelse\n  PW=$(kubectl -n db get secret pg-secret -o jsonpath=\"{.data.password}\" | base64 -d)\nfi\nhelm upgrade --install pg oci://r.example/postgresql -n db --set auth.password=${PW}\n",
			want: []string{"password: ${PW}", "PW: {type: string, secret: true, required: true, description: \"a secret the script generates", "PW as that path sets it; where it finds the object the script reuses"}, never: []string{"secretKeyRef"}},
		{name: "a password generated where the Secret is absent, check not negated", script: "if kubectl -n db get secret pg-secret; then\n  PW=$(kubectl -n db get secret pg-secret -o jsonpath=\"{.data.password}\" | base64 -d)\nelse\n  PW=$(openssl rand -hex 16)\nfi\nhelm upgrade --install pg oci://r.example/postgresql -n db --set auth.password=${PW}\n",
			want: []string{"password: ${PW}", "a secret the script generates"}, never: []string{"secretKeyRef"}},
		// yatai's quick-install-yatai.sh:110 (46s67i's D2): a probe job, the CREATE DATABASE its fallback
		{name: "a job whose failure runs a fallback", script: "if ! kubectl run probe --rm -i --restart=Never -n db --image postgres:16 --command -- psql -h pg -d app -c \"SELECT 1\"; then\n  kubectl run mkdb --rm -i --restart=Never -n db --image postgres:16 --command -- psql -h pg -c \"CREATE DATABASE app\"\nfi\n",
			want: []string{"job:"}, notCarried: []string{"retries do not change a check's answer (its failure may be the usual path, as on a fresh cluster): write that job's command by hand as sh -c running its command || the fallback's"}, never: []string{"give the step retries:"}},
		// skyray's deploy-kuberay-operator.1.3.2.sh (46s67i's D3): an empty unquoted $1 is no word
		{name: "a trailing unquoted $1, none given", script: "helm install x oci://r.example/x --version 1.0.0 $1\nkubectl label crd widgets.example.com team=a\n",
			want: []string{"release: x", "version: 1.0.0", "so bash drops this empty unquoted word"}, never: []string{"ARG1"}},
		{name: "a trailing unquoted $1 after a flag stays the flag's value", script: "helm install x oci://r.example/x -n $1\n",
			want: []string{"namespace: ${ARG1}"}},
		{name: "a trailing unquoted $1 a command needs", script: "helm uninstall $1\n",
			want: []string{"release: ${ARG1}"}},
		// stroppy's deploy_operator.sh (46s67j's D2): a helper exits one argument short
		{name: "a nested helper that exits, called one argument short", script: "_run() { if [ \"$#\" -lt 3 ]; then echo bad; exit 1; fi; eval \"${@:3}\"; }\nrun() { _run no_skip \"$@\"; }\nrun \"ns a\" kubectl create namespace a\nrun \"ns b\" \\\n\nkubectl create namespace b\n",
			want: []string{"name: namespace-a"}, notCarried: []string{"give the call the arguments it checks for (the script's call is at install.sh:6)", "bash never runs it: the script stops before it, at install.sh:6"}},
	})
}

// deploy_operator.sh's setup.sh (46s67j's D3): when the steps after a
// removed API are refused too, the note counts commands, not steps the
// spec (which is not written) carries.
func TestRemovedAPICountsCommandsNotSteps(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "install.sh", "#!/bin/bash\nset -e\nkubectl apply -f crd.yaml\nkubectl apply -f crd.yaml\nkubectl get crd\n")
	write(t, dir, "crd.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: x}\n")
	check := func(s *spec.Spec) (ps spec.Problems) {
		for _, st := range s.Steps {
			ps = append(ps, spec.Problem{Path: st.Path + ".apply.manifests.0", Message: "crd: apiextensions.k8s.io/v1beta1 CustomResourceDefinition was removed in v1.22"})
		}
		return ps
	}
	res, err := Import("install.sh", Options{Dir: dir, Check: check})
	if err != nil {
		t.Fatal(err)
	}
	var whys []string
	for _, n := range res.Model.NotCarried {
		whys = append(whys, n.Why)
	}
	if len(whys) != 2 || !strings.HasSuffix(whys[0], "never runs the 2 helm/kubectl commands after it") || !strings.HasSuffix(whys[1], "never runs the 1 helm/kubectl command after it") || res.Model.Counts()[importer.FateStep] != 0 {
		t.Errorf("not carried %q", whys)
	}
}
