package shscript

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/khook/khook/internal/importer"
)

// A helm install (not upgrade --install) of a release a step of the
// script installed before it fails in bash: helm refuses a name in use
// ("cannot re-use a name that is still in use"), and the script goes on
// without it, or under set -e stops there. Carried as a step it would
// upgrade the release to its chart, which the script never does (trial
// 46s68n's D1: helm install my-logstash twice, the second written as a
// silent step my-logstash-2 of a chart on disk).

// install is a release a step installs on every run that reaches it (not
// under a condition khook cannot decide): the cluster it works on, and
// the conditions of its step.
type install struct {
	st      *importer.OutStep
	cluster string
	conds   []string
}

// installed records the release of a helm step made by helm install or
// upgrade --install (helm template | kubectl apply makes no release, and
// an upgrade without --install fails where it is absent).
func (t *translator) installed(st *importer.OutStep, sub string, f flags) {
	if st == nil || sub == "template" || sub == "upgrade" && !f.is("install", "i") || t.undecidedDepth > 0 {
		return
	}
	conds, _ := stepWhen(t.when)
	t.installs = append(t.installs, install{st: st, cluster: t.cluster.cmd, conds: conds})
}

// forgetInstalls: a command that may remove a release (helm uninstall, a
// kubectl delete of a namespace, of a manifest's objects, of Secrets, where
// helm keeps its releases; a cluster tool deleting or making a cluster)
// leaves no release khook is sure of.
func (t *translator) forgetInstalls(base string, args []string) {
	var removes bool
	switch base {
	case "helm":
		removes = slices.ContainsFunc(args, func(a string) bool { return a == "uninstall" || a == "delete" || a == "del" || a == "un" })
	case "kubectl", "oc":
		removes = slices.Contains(args, "delete") && slices.ContainsFunc(args, func(a string) bool {
			kind, _, _ := strings.Cut(strings.ToLower(a), "/")
			return slices.Contains([]string{"ns", "namespace", "namespaces", "project", "projects", "secret", "secrets", "all"}, kind) ||
				strings.HasPrefix(a, "-f") || strings.HasPrefix(a, "--filename") || strings.HasPrefix(a, "-k") || strings.HasPrefix(a, "--kustomize") || a == "--all"
		})
	case "kind", "k3d", "minikube", "k3s", "kubeadm":
		removes = true
	}
	if removes {
		t.installs = nil
	}
}

// nameInUse names helm install of a release a step before it installs,
// in the same cluster and namespace, on every run that reaches this line:
// bash's helm refuses it there.
func (t *translator) nameInUse(x *cmd, f flags, sub string, h *importer.OutHelm) bool {
	if sub != "install" || f.is("install", "i", "dry-run") || t.checks > 0 {
		return false // under helm status x || …: the check decides, and folds it
	}
	conds, _ := stepWhen(t.when)
	var by *importer.Step
	for _, in := range t.installs {
		if in.st.Helm.Release != h.Release || in.st.Helm.Namespace != h.Namespace || in.cluster != t.cluster.cmd ||
			slices.ContainsFunc(in.conds, func(c string) bool { return !slices.Contains(conds, c) }) {
			continue // another release, or a step that may not have run
		}
		if i := slices.IndexFunc(t.m.Steps, func(s *importer.Step) bool { return s.Out == in.st }); i >= 0 {
			by = t.m.Steps[i]
		}
	}
	if by == nil || t.retrying > 0 && by.From == t.loc(x.stmt) {
		// for i in 1 2 3; do helm install … && break: a turn of a retry
		// loop, which the loop carries once
		return false
	}
	halts := len(t.halts)
	t.failsHere(x, "write the line as said, and import again")
	then := ", and the script goes on without it, the release as that step left it"
	switch c, ok := x.stmt.Cmd.(*syntax.CallExpr); {
	case len(t.halts) > halts:
		then = "" // the note goes on with what bash never runs after it (sayHalts)
	case ok && t.errexit && !t.tested[c]:
		then = ", and under set -e the script stops there"
	}
	t.account(x.stmt, importer.FateNotCarried, "", "helm install refuses a release name in use, and step "+by.Out.Name+" ("+by.From.String()+") installed release "+h.Release+" in this namespace before: bash's helm fails here (cannot re-use a name that is still in use)"+then+
		"; khook does not carry it as an upgrade: to change the release, write helm upgrade --install in the script, else drop the line, and import again")
	return true
}
