package shscript

import (
	"slices"
	"strings"
	"testing"
)

// The defects trial-46d left (its list and §17).

// `bash hack/x.sh "$@"` (tidb's local-up-operator.sh, run with no
// arguments) follows the script, whose path is known, as a sourced one
// is: its $0 and dirname are its own, its $1 the caller's ($ARG1). It was
// named "the script it runs is only known when it runs", and nothing was
// written.
func TestCalledScriptWithOpenArgs(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
bash hack/up.sh "$@"
./hack/up2.sh extra "$@"
bash hack/up.sh $(date)
`, "hack/up.sh": `#!/bin/bash
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
kubectl apply -f "${HERE}/m.yaml" -n "${1:-apps}"
`, "hack/up2.sh": `#!/bin/bash
kubectl create namespace "$1"
kubectl create namespace "${2:-two}"
`, "hack/m.yaml": configMap})
	st := res.Model.Steps
	if len(st) != 3 {
		t.Fatalf("steps %v, not carried %v", res.Model.Commands, res.Model.NotCarried)
	}
	if a := st[0].Out.Apply; a == nil || a.Manifests[0].File != "./hack/m.yaml" || a.Namespace != "${ARG1}" || st[0].From.File != "hack/up.sh" || st[0].From.Line != 4 {
		t.Errorf("up.sh: %+v at %v", st[0].Out.Apply, st[0].From)
	}
	// up.sh's ${1:-apps} and up2.sh's ${2:-two} are the script's first
	// argument with two defaults: one khook variable has one, so none
	if v := res.Model.Var("ARG1"); v == nil || v.Default != nil || !v.Required {
		t.Errorf("ARG1 %+v", v)
	}
	if !strings.Contains(st[1].Out.Apply.Manifests[0].Inline, "name: extra") || !strings.Contains(st[2].Out.Apply.Manifests[0].Inline, "name: ${ARG1}") {
		t.Errorf("up2.sh: %q, %q", st[1].Out.Apply.Manifests[0].Inline, st[2].Out.Apply.Manifests[0].Inline)
	}
	if len(res.Model.NotCarried) != 1 || res.Model.NotCarried[0].Line != 5 || !strings.Contains(res.Model.NotCarried[0].Why, "its arguments are only known when the script runs") {
		t.Errorf("not carried %v", res.Model.NotCarried)
	}
}

// kubectl's and helm's own defaults are written or said, never silently
// khook's: kubectl wait without --timeout gives up after 30s (written),
// rollout status without one waits without limit (said), and without -n
// both work in the kubeconfig context's namespace (said, once a line, not
// for cluster-scoped objects or objects that name their namespace).
func TestToolDefaultsSaid(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
helm upgrade --install app ./app
helm upgrade --install app2 ./app -n apps
kubectl create namespace apps
kubectl wait --for=condition=available deploy/app -n apps
kubectl rollout status deploy/app -n apps
kubectl rollout status deploy/app -n apps --timeout=10m
kubectl apply -f m.yaml
kubectl apply -f crd.yaml
ka() { kubectl apply -f m.yaml; }
ka
ka
`, "app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n", "m.yaml": configMap,
		"crd.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n---\n" + configMap + "  namespace: x\n"})
	st := res.Model.Steps
	if len(st) != 10 {
		t.Fatalf("steps %v, not carried %v", res.Model.Commands, res.Model.NotCarried)
	}
	if st[3].Out.Wait == nil || st[3].Out.Timeout != "30s" || st[5].Out.Timeout != "10m" {
		t.Errorf("wait timeout %q, rollout %q", st[3].Out.Timeout, st[5].Out.Timeout)
	}
	if got := infoLines(res.Model, "without limit"); len(got) != 1 || got[0] != 7 {
		t.Errorf("rollout notes at %v: %v", got, res.Model.Info)
	}
	if got := infoLines(res.Model, "the kubeconfig context's namespace"); !slices.Equal(got, []int{3, 9, 11}) {
		t.Errorf("namespace notes at %v: %v", got, res.Model.Info)
	}
}

// A script without set -e carries on after a failing command, where khook
// stops at the first failing step: the header says so once (bruno's
// bootstrap.sh, volcano); not for set -e, set -o errexit, set -eu…, a
// #!/bin/bash -e line, nor for a script run with bash -e; a script run
// is a new shell, whose own options count.
func TestNoErrexitSaidOnce(t *testing.T) {
	cases := map[string]struct {
		script string
		said   bool
	}{
		"none":            {"#!/bin/bash\nkubectl apply -f m.yaml\nkubectl apply -f m.yaml\n", true},
		"set -e":          {"#!/bin/bash\nset -e\nkubectl apply -f m.yaml\n", false},
		"set -euo":        {"#!/bin/bash\nset -Eeuo pipefail\nkubectl apply -f m.yaml\n", false},
		"set -o errexit":  {"set -o nounset\nset -o errexit\nkubectl apply -f m.yaml\n", false},
		"shebang":         {"#!/bin/bash -xe\nkubectl apply -f m.yaml\n", false},
		"set +e":          {"#!/bin/bash\nset -e\nset +e\nkubectl apply -f m.yaml\n", true},
		"called, none":    {"#!/bin/bash\nset -e\nbash sub.sh\n", true},
		"called, bash -e": {"#!/bin/bash\nbash -e sub.sh\n", false},
		"called, own -e":  {"#!/bin/bash\nset -e\n./sube.sh\n", false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			res := importScript(t, map[string]string{"install.sh": c.script, "m.yaml": configMap,
				"sub.sh": "kubectl apply -f m.yaml\n", "sube.sh": "#!/bin/sh -e\nkubectl apply -f m.yaml\n"})
			if len(res.Model.Steps) == 0 {
				t.Fatalf("steps %v", res.Model.Commands)
			}
			n := 0
			for _, note := range res.Model.Info {
				if strings.Contains(note.Why, "the script carries on after a command fails") {
					n++
					if note.String() != "install.sh: without set -e: "+note.Why {
						t.Errorf("note %s", note)
					}
				}
			}
			if (n == 1) != c.said || n > 1 {
				t.Errorf("said %d times, want %v: %v", n, c.said, res.Model.Info)
			}
			if c.said && !strings.Contains(string(res.Spec), "#   install.sh: without set -e: the script carries on") {
				t.Errorf("header:\n%s", res.Spec)
			}
		})
	}
}

// An append under an if or case that became when: (ARGS+=(--set x=y) under
// if [ "$ENV" = prod ], VALUES="$VALUES -f x" in a case branch) holds only
// under that condition: the command that reads it is split into one step
// per branch, each under its when:; it was applied unconditionally.
func TestAppendUnderWhenSplits(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -e
ARGS=(--set a=b)
if [ "$ENV" = prod ]; then
  ARGS+=(--set replicas=3)
fi
VALUES="-f base.yaml"
case "$CLOUD" in
  aws) VALUES="$VALUES -f aws.yaml" ;;
esac
helm upgrade --install app ./app -n apps "${ARGS[@]}" $VALUES
kubectl apply -f base.yaml
`, "app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n", "base.yaml": configMap, "aws.yaml": "b: 1\n"})
	st := res.Model.Steps
	if len(st) != 5 {
		t.Fatalf("steps %v, not carried %v", res.Model.Commands, res.Model.NotCarried)
	}
	prod, aws := `vars.get("ENV", "") == "prod"`, `(vars.get("CLOUD", "") == "aws")`
	want := []struct {
		when            string
		replicas, files int
	}{{prod + " && " + aws, 1, 2}, {prod + " && !(" + aws + ")", 1, 1}, {"!(" + prod + ") && " + aws, 0, 2}, {"!(" + prod + ") && !(" + aws + ")", 0, 1}}
	for i, w := range want {
		h := st[i].Out.Helm
		_, has := h.Values["replicas"]
		if h == nil || h.Values["a"] != "b" || has != (w.replicas == 1) || len(h.ValuesFrom) != w.files || st[i].Out.When != w.when {
			t.Errorf("step %d: when %q, %+v", i, st[i].Out.When, h)
		}
	}
	if st[4].Out.Apply == nil || st[4].Out.When != "" {
		t.Errorf("apply after: %+v", st[4].Out)
	}
	if f := fateAt(res.Model, 11); f != "step" { // one line, counted once (46s68b D2)
		t.Errorf("fates %q", f)
	}
}
