package shscript

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/khook/khook/spec"
)

// What held-out trial 46s68j showed (fixer 46s68w4), each cut down from
// tyk-demo's deployments/k8s-operator/bootstrap.sh and the scripts it runs.
func TestTrial46s68w4Idioms(t *testing.T) {
	const cfg = "#!/bin/bash\nns=\"default-ns\"\nwhile getopts \":n:\" o; do\n  case \"${o}\" in\n    n) ns=${OPTARG} ;;\n  esac\ndone\nkubectl create configmap cfg -n $ns --from-literal=a=b\n"
	const cfgCase = "#!/bin/bash\nns=default-ns\nwhile [[ $# -gt 0 ]]; do\n  case $1 in\n    -n) ns=$2; shift 2 ;;\n    *) shift ;;\n  esac\ndone\nkubectl create configmap cfg -n $ns --from-literal=a=b\n"
	checkIdioms(t, []idiom{
		// D3: the arguments a script gives a script it runs are what its option loop reads
		{name: "./cfg.sh -n demo, getopts", script: "./cfg.sh -n demo\n", files: map[string]string{"cfg.sh": cfg},
			want: []string{"namespace: demo"}, never: []string{"default-ns", "${ns}"}},
		{name: "eval ./cfg.sh -n $ns, ns overridden from the environment", script: "ns=demo\nif [[ ! -z \"${NS_OVERRIDE}\" ]]; then ns=\"${NS_OVERRIDE}\"; fi\neval ./cfg.sh -n $ns\n", files: map[string]string{"cfg.sh": cfg},
			want: []string{"namespace: demo", "namespace: ${NS_OVERRIDE}"}, never: []string{"default-ns", "${ns}"}},
		// N15: the caller's $ns is expanded into the argument; the script run sets its own ns first
		{name: "ns=demo; ./cfg.sh -n $ns: no export advice", script: "ns=demo\n./cfg.sh -n $ns\n", files: map[string]string{"cfg.sh": cfg},
			want: []string{"namespace: demo"}, never: []string{"not exported", "default-ns"}},
		{name: "bash cfg.sh -n demo, while case $1", script: "bash cfg.sh -n demo\n", files: map[string]string{"cfg.sh": cfgCase},
			want: []string{"namespace: demo"}, never: []string{"default-ns", "${ns}"}},
		{name: "a function's getopts over its arguments", script: "f() {\n  local OPTIND n=default-ns\n  while getopts \"n:\" o; do case $o in n) n=$OPTARG ;; esac; done\n  kubectl create namespace $n\n}\nf -n demo\n",
			want: []string{"name: demo"}, never: []string{"default-ns"}},
		// D4: a guard of a script run through eval once per value of the caller's variable still requires
		{name: "eval ./cfg.sh -u $host after an if on the environment, cfg.sh guards $TOKEN", script: "host=http://h:3000\nif [ \"${HOST_OVERRIDE}\" ]; then host=\"${HOST_OVERRIDE}\"; fi\neval ./cfg.sh -u $host\n",
			files: map[string]string{"cfg.sh": "#!/bin/bash\nif [ -z \"$TOKEN\" ]; then echo no token; exit 1; fi\nkubectl create secret generic conf -n demo --from-literal \"AUTH=$TOKEN\"\n"},
			want:  []string{"TOKEN: {type: string, secret: true, required: true, description: \"the script stops without it (cfg.sh:2)\"}", "when: vars.get(\"HOST_OVERRIDE\", \"\") != \"\""}},
		// D4 variant: the script run through eval, per value of $host, stops at its guard for every value: named
		{name: "eval ./cfg.sh -u $host, no -a: cfg.sh's guard stops it", script: "host=http://h:3000\nif [ \"${HOST_OVERRIDE}\" ]; then host=\"${HOST_OVERRIDE}\"; fi\neval ./cfg.sh -u $host\nkubectl create namespace after\n",
			files: map[string]string{"cfg.sh": "#!/bin/bash\nauth=\"\"\nwhile getopts \":a:u:\" o; do case \"${o}\" in a) auth=${OPTARG} ;; u) url=${OPTARG} ;; esac; done\nif [ -z $auth ]; then echo \"no -a\"; exit 1; fi\nkubectl create secret generic conf -n demo --from-literal \"AUTH=$auth\"\n"},
			want:  []string{"name: after"}, never: []string{"AUTH"},
			notCarried: []string{"decided at import, and the script stops there with a failure (exit)"}},
		// D2: a precondition on what the cluster holds, which the script stops on, is named at its line
		{name: "n=$(kubectl get pods … | jq length); if [ \"$n\" == \"0\" ]; then exit 1; fi", script: "n=$(kubectl get pods -l app=cert-manager -A -o json | jq '.items | length')\nif [ \"$n\" == \"0\" ]; then\n  echo \"install cert-manager first\"; exit 1\nfi\nhelm install op --repo https://charts.example.com op -n demo\n",
			want: []string{"release: op"}, never: []string{"when:"},
			notCarried: []string{"a check of what the script read from the cluster, which it stops on"}},
		{name: "[ \"$n\" == 0 ] && exit 1 on a value read from the cluster", script: "n=$(kubectl get pods -A -o json | jq '.items | length')\n[ \"$n\" == \"0\" ] && exit 1\nhelm install op --repo https://charts.example.com op -n demo\n",
			want: []string{"release: op"}, notCarried: []string{"a check of what the script read from the cluster, which it stops on"}},
		// D2: the local helm client's version is not read from the cluster (khook brings its own helm)
		{name: "helm version --short check", script: "v=$(helm version --short)\nif [[ $v =~ ^v[0-2]\\. ]]; then\n  echo \"Helm v3 or later is required\"; exit 1\nfi\nhelm install op --repo https://charts.example.com op -n demo\n",
			want: []string{"release: op"}, never: []string{"read from the cluster"}},
	})
}

// D1, bootstrap.sh:102: kubectl create namespace $ns, ns the override of
// the environment where it is set, is checked as it runs under its when:
// (the variable set), not with its empty default (refused: "Namespace
// has no metadata.name … fix the manifest").
func TestTrial46s68w4NamespaceFromOverride(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "install.sh", "#!/bin/bash\nset -e\nns=demo\nif [[ ! -z \"${NS_OVERRIDE}\" ]]; then ns=\"${NS_OVERRIDE}\"; fi\nkubectl create namespace $ns\nhelm install op --repo https://charts.example.com op -n $ns\n")
	named := regexp.MustCompile(`(?m)^\s*name: \S`)
	check := func(s *spec.Spec) (ps spec.Problems) {
		for _, st := range s.Steps {
			if st.Apply == nil {
				continue
			}
			for j, m := range st.Apply.Manifests {
				if strings.Contains(m.Inline, "kind: Namespace") && !named.MatchString(m.Inline) {
					ps = append(ps, spec.Problem{Path: fmt.Sprintf("%s.apply.manifests.%d", st.Path, j), Message: "document 1: v1 Namespace has no metadata.name"})
				}
			}
		}
		return ps
	}
	res, err := Import("install.sh", Options{Dir: dir, Check: check})
	if err != nil {
		t.Fatal(err)
	}
	if s := string(res.Spec); len(res.Model.NotCarried) != 0 || !strings.Contains(s, "name: ${NS_OVERRIDE}") || !strings.Contains(s, "name: demo") {
		t.Errorf("not carried %v\n%s", res.Model.NotCarried, s)
	}
}
