package shscript

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// bundledKubectl reads the kubectl a cluster's tool bundles as kubectl:
// k3s kubectl ARGS, microk8s kubectl ARGS, microk8s.kubectl ARGS and
// minikube kubectl -- ARGS (sudo before them too) are kubectl ARGS against
// that tool's own cluster (trial 46s67l's D1: a k3s homelab script
// imported as 0 commands, "a container image that has k3s"). The words
// are rewritten to one kubectl word spanning them, so every idiom of
// kubectl (a step, a look-up in a condition or $( )) applies; the line
// still shows the script's words, and the first such command says once
// which cluster khook works on.
func (t *translator) bundledKubectl(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if !ok || len(c.Args) == 0 {
			return true
		}
		i := 0
		for i < len(c.Args) && lit(c.Args[i]) == "sudo" {
			n, _, _ := sudoRuns(litArgs(c.Args[i:])) // sudo -E, -u USER
			i += n
		}
		if i >= len(c.Args) {
			return true
		}
		tool, drop, as := lit(c.Args[i]), 0, "kubectl"
		next := func(k int) string {
			if i+k < len(c.Args) {
				return lit(c.Args[i+k])
			}
			return ""
		}
		what := tool + " " + next(1)
		switch {
		case (tool == "k3s" || tool == "microk8s") && next(1) == "kubectl":
			drop = 1
		case tool == "microk8s.kubectl":
			what = tool
		case tool == "microk8s" && (next(1) == "helm3" || next(1) == "helm"):
			// MicroK8s's bundled helm, read as helm the same way (trial
			// 46s68h's D1: microk8s helm3 upgrade --install named a command
			// for a job: step)
			drop, as = 1, "helm"
		case tool == "microk8s.helm3" || tool == "microk8s.helm":
			what, as = tool, "helm"
		case tool == "minikube" && next(1) == "kubectl" && next(2) == "--":
			drop = 2
		case tool == "minikube" && next(1) == "kubectl" && (next(2) == "" || next(2)[0] != '-'):
			drop = 1 // minikube kubectl get pods: no flag to keep from minikube
		default:
			return true
		}
		end := c.Args[i+drop].End()
		word := &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{ValuePos: c.Args[i].Pos(), ValueEnd: end, Value: as}}}
		if t.bundled == nil {
			t.bundled = map[*syntax.CallExpr]string{}
		}
		t.bundled[c] = what
		c.Args = append(append(c.Args[:i:i], word), c.Args[i+drop+1:]...)
		return true
	})
}

// sayBundled says once for each of kubectl and helm, at the first command
// of a cluster tool's bundled one, that khook's own works on the cluster
// it is given.
func (t *translator) sayBundled(c *syntax.CallExpr, x *cmd, base string) {
	what := t.bundled[c]
	if what == "" || t.bundledSaid[base] {
		return
	}
	if t.bundledSaid == nil {
		t.bundledSaid = map[string]bool{}
	}
	t.bundledSaid[base] = true
	tool := strings.FieldsFunc(what, func(r rune) bool { return r == ' ' || r == '.' })[0]
	how := map[string]string{
		"k3s":      "point --kubeconfig at k3s's /etc/rancher/k3s/k3s.yaml (or a copy of it) to work on the same cluster",
		"microk8s": "point --kubeconfig at the file microk8s config prints to work on the same cluster",
		"minikube": "give --context minikube to work on the same cluster",
	}[tool]
	t.info(x.stmt, what, "khook runs its own "+base+" against the cluster it is given, not the one "+tool+" knows: "+how)
}
