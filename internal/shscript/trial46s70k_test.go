package shscript

import (
	"strings"
	"testing"

	"github.com/khook/khook/internal/importer"
)

// What held-out trial 46s70k (run once, on 774025e) showed, each cut down.

// 46s70k D2 (phattd's setup-k8s.sh:271-272, dhananjay's deploy.sh:201-215):
// imported with the arguments its README gives, the branches of a case
// and an if those arguments do not take, and the functions only they
// call, are named at their lines, in the count; a function the taken
// branch calls too is counted once, as its steps.
func TestTrial46s70kUntakenByArguments(t *testing.T) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\n"
	script := `#!/bin/bash
set -e
ACTION="${2:-deploy}"
apply_all() { kubectl apply -f a.yaml; }
delete_all() {
  kubectl delete -f a.yaml --ignore-not-found=true
  if [[ $REPLY =~ ^[Yy]$ ]]; then kubectl delete namespace x --ignore-not-found=true; fi
}
main() {
  case "${1:-setup}" in
    setup) apply_all ;;
    update) apply_all ;;
    rebuild) kubectl rollout restart deployment/web -n x ;;
    *) echo usage; exit 1 ;;
  esac
}
main "$@"
case $ACTION in
  deploy) kubectl get pods ;;
  delete) delete_all ;;
esac
if [ "$ACTION" = delete ]; then kubectl delete ns y; fi
`
	res := importScript(t, map[string]string{"install.sh": script, "a.yaml": cm}, "setup", "deploy")
	why := map[int]string{}
	for _, n := range res.Model.NotCarried {
		why[n.Line] = n.Why
	}
	for line, want := range map[int]string{
		13: "bash does not run it with the arguments given: the case at install.sh:10 picks setup; import again with the arguments that take its branch to carry it",
		6:  "the case at install.sh:18 picks deploy",
		7:  "the case at install.sh:18 picks deploy",
		22: `bash does not run it with the arguments given: [ "$ACTION" = delete ] (install.sh:22) is false`,
	} {
		if !strings.Contains(why[line], want) {
			t.Errorf("line %d: %q, want %q", line, why[line], want)
		}
	}
	if !strings.Contains(string(res.Spec), "helm/kubectl commands: 6, of which 1 became steps, 0 were folded into steps, 1 are read-only, 4 not carried") {
		t.Errorf("counts:\n%s", res.Spec)
	}
	if fateAt(res.Model, 4) != string(importer.FateStep) {
		t.Errorf("line 4: %q", fateAt(res.Model, 4))
	}
	// a function an untaken branch calls that the script calls after the
	// case runs: its line is what that call makes of it, said once
	res = importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nstatus() { kubectl get pods; }\ncase \"$1\" in\n  setup) kubectl apply -f a.yaml ;;\n  status) status ;;\nesac\nstatus\n", "a.yaml": cm}, "setup")
	if fateAt(res.Model, 3) != string(importer.FateReadOnly) || len(res.Model.NotCarried) != 0 {
		t.Errorf("line 3: %q, not carried %v", fateAt(res.Model, 3), res.Model.NotCarried)
	}
	// without the arguments, both actions are a variable's choice, as before
	res = importScript(t, map[string]string{"install.sh": script, "a.yaml": cm})
	for _, n := range res.Model.NotCarried {
		if strings.Contains(n.Why, "with the arguments given") {
			t.Errorf("without arguments: %v", n)
		}
	}
}

// 46s70k D1 (phattd's setup-k8s.sh:50-66): an if chain on $OSTYPE (bash
// sets it), $HOSTTYPE or uname that only sets up the machine running the
// script ends in an else … exit 1 that is no value to give: said as such,
// a note, not "give the values that make one hold".
func TestTrial46s70kMachineBranches(t *testing.T) {
	cm := map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\n"}
	said := "Notes, nothing differs (1):\n#   install.sh:5: else … exit 1: the script stops here on a machine none of the conditions before it match, and they read what bash or uname says of the machine that runs the script, no value to give: the branches only set up that machine (a local tool, how to get it), nothing of the cluster, and khook needs none of it"
	checkIdioms(t, []idiom{
		{name: "if on $OSTYPE, elif, else exit", files: cm, want: []string{said},
			script: "if [[ \"$OSTYPE\" == \"darwin\"* ]]; then echo mac\nelif [[ \"$OSTYPE\" == \"linux-gnu\"* ]]; then echo linux\nelse echo \"Unsupported OS\"; exit 1\nfi\nkubectl apply -f a.yaml\n",
			never:  []string{"give the values that make one hold"}},
		{name: "if on a variable set from uname, else exit", files: cm, want: []string{said},
			script: "OS=$(uname -s)\nif [ \"$OS\" = Darwin ]; then echo mac\nelse echo \"Unsupported OS\"; exit 1\nfi\nkubectl apply -f a.yaml\n",
			never:  []string{"give the values that make one hold"}},
		{name: "if on $HOSTTYPE, else exit", files: cm, want: []string{said},
			script: "if [[ $HOSTTYPE == x86_64 ]]; then ARCH=amd64\nelif [[ $HOSTTYPE == aarch64 ]]; then ARCH=arm64\nelse exit 1\nfi\nkubectl apply -f a.yaml\n"},
	})
}
