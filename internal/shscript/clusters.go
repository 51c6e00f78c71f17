package shscript

import (
	"cmp"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/khook/khook/internal/importer"
)

// clusters follows which cluster the script's commands work on: a script
// that bootstraps two (a hub and its spokes, kind-1 and kind-2) switches
// with kubectl config use-context, --context or --kubeconfig. A spec runs
// against one cluster, so the step where the cluster changes is named
// not carried: written as it is, the spec would make both clusters' objects
// in one.
type clusters struct {
	current string  // what kubectl config use-context chose ("" : the one khook is given)
	cmd     string  // the cluster of the command being walked
	steps   *string // the cluster of the steps made so far
	said    bool
}

// of is the cluster of a command with these --context and --kubeconfig
// flags ("" for none).
func (c *clusters) of(context, kubeconfig string) string {
	switch {
	case context != "":
		return "context " + context
	case kubeconfig != "":
		return "the kubeconfig " + kubeconfig
	}
	return c.current
}

// otherCluster tells a step made on another cluster than the spec's (the
// cluster of its first step): when both are named (two contexts, two
// kubeconfigs), the command is not carried, named with the cluster it
// works on. When one is the kubeconfig's current context, they may be the
// same cluster: the step is carried and the change said once.
func (t *translator) otherCluster(n syntax.Node, base string) bool {
	c := &t.cluster
	here := c.cmd
	if c.steps == nil {
		c.steps = &here
		return false
	}
	if *c.steps == here || asRunCluster(*c.steps) == asRunCluster(here) {
		// context ${ARG1} (ai-demo by the script's defaults) and context
		// ai-demo: one cluster as the script is run (trial 46s69o's D1)
		return false
	}
	if here != "" && *c.steps != "" {
		t.account(n, importer.FateNotCarried, "", "it works on "+here+", and this spec's steps on "+*c.steps+": khook runs a spec against one cluster; import the commands of "+here+" into a spec of their own, run with that cluster's --kubeconfig or --context")
		return true
	}
	if !c.said && here != c.current {
		// a --context or --kubeconfig of this command is for it alone:
		// the commands after it are on the script's cluster again (trial
		// 46s69b's D6: "step web and those after it" put the next apply
		// in the wrong spec)
		c.said = true
		t.info(n, "the cluster of step "+dnsName(base), "this command alone works on "+clusterName(here)+" (its own flag), the spec's first step on "+clusterName(*c.steps)+", which may be the same cluster; khook runs the spec against the one it is given: if they are two, move this step, and those of any other command that names "+clusterName(here)+", into a spec of its own")
	}
	if !c.said {
		c.said = true
		t.info(n, "the cluster of step "+dnsName(base)+" and those after it", "the script works on "+clusterName(here)+" from here, and on "+clusterName(*c.steps)+" before, which may be the same cluster; khook runs the spec against the one it is given: if they are two, move the steps of each into a spec of its own")
	}
	return false
}

func clusterName(c string) string {
	if c == "" {
		return "the kubeconfig's current context"
	}
	return c
}

// created: kind, k3d and minikube make the cluster they create the
// current context (kind-NAME, k3d-NAME, the profile), so commands that
// name it by --context work where those that name none do; kind export
// kubeconfig makes the cluster it names current again.
func (c *clusters) created(tool string, args []string) {
	f := parseFlags(args, set("name", "n", "p", "profile", "config", "image", "kubeconfig"))
	pos, name := f.pos, f.get("name", "n", "p", "profile")
	switch {
	case tool == "kind" && len(pos) >= 2 && pos[0] == "create" && pos[1] == "cluster":
		c.current = "context kind-" + cmp.Or(name, "kind")
	case tool == "kind" && len(pos) >= 2 && pos[0] == "export" && pos[1] == "kubeconfig" && f.get("kubeconfig") == "":
		// kind export kubeconfig --name=a makes kind-a current again
		// (trial 46s69f's D1: the installs after it said to be kind-b's)
		c.current = "context kind-" + cmp.Or(name, "kind")
	case tool == "k3d" && len(pos) >= 2 && pos[0] == "cluster" && pos[1] == "create":
		if len(pos) > 2 {
			name = pos[2]
		}
		c.current = "context k3d-" + cmp.Or(name, "k3s-default")
	case tool == "minikube" && len(pos) >= 1 && pos[0] == "start":
		c.current = "context " + cmp.Or(name, "minikube")
	}
}

// asRunCluster is the cluster c names as the script is run by its
// defaults: context X for context ${V} (X by the script's defaults).
func asRunCluster(c string) string {
	kind, name, _ := strings.Cut(c, " ")
	if i := strings.LastIndex(name, " ("); i > 0 && strings.HasSuffix(name, " by the script's defaults)") {
		return kind + " " + strings.TrimSuffix(name[i+2:], " by the script's defaults)")
	}
	return c
}

// renamed: kubectl config rename-context OLD NEW renames the context,
// not the cluster: the steps made on OLD and the commands that name NEW
// work on one cluster (trial 46s69o's D1: a kind cluster's context renamed
// ai-demo, and its gloo install said to be another cluster's).
func (c *clusters) renamed(old, new string) {
	if c.current == "context "+old {
		c.current = "context " + new
	}
	if c.steps != nil && *c.steps == "context "+old {
		s := "context " + new
		c.steps = &s
	}
}

// noteAsRun keeps what NAME holds by the script's defaults where the spec
// writes it otherwise: hub=${CLUSTER1:-hub} and c1=${CLUSTER1:-cluster1}
// are both ${CLUSTER1} in the spec, yet two clusters as the script is run
// without CLUSTER1 (trial 46s69a's D6: cluster1's wait made a hub step).
func (t *translator) noteAsRun(name string, w *syntax.Word, val string, ok bool) {
	delete(t.asRun, name)
	if !ok || !strings.Contains(val, "${") {
		return
	}
	if r, known := t.defaultsText(w); known && r != val {
		if t.asRun == nil {
			t.asRun = map[string]string{}
		}
		t.asRun[name] = r
	}
}

// defaultsText is w's text with every variable the script's default or
// value: false where one has neither.
func (t *translator) defaultsText(w *syntax.Word) (string, bool) {
	var b strings.Builder
	var parts func([]syntax.WordPart) bool
	parts = func(ps []syntax.WordPart) bool {
		for _, p := range ps {
			switch x := p.(type) {
			case *syntax.Lit:
				b.WriteString(x.Value)
			case *syntax.SglQuoted:
				b.WriteString(x.Value)
			case *syntax.DblQuoted:
				if !parts(x.Parts) {
					return false
				}
			case *syntax.ParamExp:
				v, known := t.defaultOf(x)
				if !known {
					return false
				}
				b.WriteString(v)
			default:
				return false
			}
		}
		return true
	}
	if w == nil || !parts(w.Parts) {
		return "", false
	}
	return b.String(), true
}

// defaultOf is what ${X:-d} (d) or $X (its value by the defaults) gives.
func (t *translator) defaultOf(pe *syntax.ParamExp) (string, bool) {
	if pe.Param == nil || pe.Index != nil || pe.Slice != nil || pe.Repl != nil || pe.Names != 0 || pe.Excl || pe.Length || pe.Width {
		return "", false
	}
	name := pe.Param.Value
	if pe.Exp != nil {
		v := t.vars[name]
		d := lit(pe.Exp.Word)
		if (pe.Exp.Op != syntax.DefaultUnsetOrNull && pe.Exp.Op != syntax.DefaultUnset) || v != nil && v.decl == nil || d == "" && pe.Exp.Word != nil && len(pe.Exp.Word.Parts) > 0 {
			return "", false
		}
		return d, true
	}
	if r, ok := t.asRun[name]; ok {
		return r, true
	}
	if v := t.vars[name]; v != nil && v.decl == nil && !v.unknown && !v.array && !strings.Contains(v.val, "${") {
		return v.val, true
	}
	return "", false
}

// contextAsRun is a context's name, with the one the script's defaults
// give where they make another (kind-${CLUSTER1}, kind-hub by them).
func (t *translator) contextAsRun(x *cmd, ctx string) string {
	if ctx == "" || !strings.Contains(ctx, "${") {
		return ctx
	}
	for _, w := range x.words {
		r, known := t.defaultsText(w)
		flag, _, _ := strings.Cut(r, "=")
		if strings.HasPrefix(r, "--") {
			r = strings.TrimPrefix(r, flag+"=")
		}
		if s, ok, _ := t.eval(w); known && ok && (s == ctx || s == flag+"="+ctx) && r != ctx {
			return ctx + " (" + r + " by the script's defaults)"
		}
	}
	return ctx
}

// otherKubeconfig: file, a kubectl config command's --kubeconfig, is
// known at import and is not a kubeconfig the script's commands read
// without naming it (the KUBECONFIG the script sets, else
// ~/.kube/config), so what the command changes there changes nothing
// they read.
func (t *translator) otherKubeconfig(file string) bool {
	if file == "" {
		return false
	}
	var own []string
	if v := t.vars["KUBECONFIG"]; v != nil {
		if v.unknown || v.array || strings.Contains(strings.ReplaceAll(v.val, "${HOME}", ""), "$") {
			return false
		}
		own = strings.Split(v.val, ":")
	}
	file = homeRel(file)
	switch rest := strings.TrimPrefix(file, "${HOME}/"); {
	case strings.Contains(rest, "$"):
		return false // only the run knows which file it is
	case own == nil:
		return rest != ".kube/config" && !strings.HasSuffix(rest, "/.kube/config")
	}
	for _, o := range own {
		if homeRel(o) == file {
			return false
		}
	}
	return true
}

// homeRel writes a path under the home directory (~/x, $HOME/x) as ${HOME}/x.
func homeRel(p string) string {
	for _, home := range []string{"~/", "$HOME/"} {
		if rest, ok := strings.CutPrefix(p, home); ok {
			return "${HOME}/" + rest
		}
	}
	return p
}
