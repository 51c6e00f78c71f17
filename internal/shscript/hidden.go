package shscript

import (
	"fmt"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/khook/khook/internal/importer"
)

// Commands the script runs where no statement shows them: the text of an
// eval, and $(…) command substitutions whose output becomes a value.

// helmReadOnly and kubectlReadOnly are the subcommands that change
// nothing in the cluster.
var (
	helmReadOnly = set("status", "list", "ls", "get", "history", "hist", "show", "inspect", "search", "version", "env", "lint", "verify",
		"completion", "help", "pull", "fetch", "package", "create")
	kubectlReadOnly = set("get", "describe", "logs", "top", "version", "cluster-info", "api-resources", "api-versions", "explain",
		"auth", "diff", "events", "kustomize", "completion", "help", "plugin", "options", "config",
		// krew plugins that only print (or install plugins locally)
		"neat", "tree", "who-can", "access-matrix", "resource-capacity", "view-allocations", "images", "df-pv", "view-secret", "krew")
)

// readOnlyTool: argv is a helm or kubectl command that changes nothing
// in the cluster (config changes only the local kubeconfig).
func readOnlyTool(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	base := argv[0][strings.LastIndex(argv[0], "/")+1:]
	if base == "helm" {
		f := parseFlags(argv[1:], helmValued)
		if len(f.pos) > 1 && (f.pos[0] == "repo" || f.pos[0] == "plugin") && (f.pos[1] == "list" || f.pos[1] == "ls") {
			return true // repo_exists=$(helm repo list -o json | yq …): trial 46zo's N1
		}
		return len(f.pos) == 0 || helmReadOnly[f.pos[0]]
	}
	return kubectlChangesNothing(parseFlags(argv[1:], kubectlValued).pos)
}

// kubectlChangesNothing: the kubectl command with these positional words
// writes nothing to the cluster. auth is read-only only as can-i and
// whoami: auth reconcile writes RBAC objects.
func kubectlChangesNothing(pos []string) bool {
	switch {
	case len(pos) == 0:
		return true
	case pos[0] == "auth":
		return len(pos) > 1 && (pos[1] == "can-i" || pos[1] == "whoami")
	case !kubectlCommands[pos[0]] && len(pos) > 1 && pluginReadOnly[pos[1]]:
		// kubectl cnpg status …: a plugin's verb that only prints (trial 46s67j's D1)
		return true
	}
	return kubectlReadOnly[pos[0]]
}

// pluginReadOnly are the verbs of a kubectl plugin's commands that only
// print (kubectl cnpg status, kubectl kots get …).
var pluginReadOnly = set("status", "get", "list", "ls", "describe", "logs", "version", "check", "report")

// toolName is the helm or kubectl a command word names ("" for others).
func toolName(word string) string {
	base := word[strings.LastIndex(word, "/")+1:]
	if isTool(base) {
		return base
	}
	return ""
}

// accountSubst accounts for each helm and kubectl command of a command
// substitution, once per call of the function it is in: read-only ones
// give a value the script computes when it runs; others change the
// cluster in a way khook cannot carry, since it runs no command for its
// output.
func (t *translator) accountSubst(cs *syntax.CmdSubst) {
	t.accountSubstIn(cs, map[*function]bool{}, substWhy{
		"its output is a value the script computes when it runs (a variable it sets becomes a khook variable)",
		"the script runs it inside $(…) to take its output, which khook cannot do; make it a step of its own, and where the script uses the output, hand that value in as a variable"})
}

// substWhy: why a read-only command and why a command that changes the
// cluster, of a substitution, are not steps.
type substWhy struct{ readOnly, changes string }

// accountRedirSubst accounts for the helm and kubectl commands of a
// <(…) the statement reads through a redirect (`{ grep -q -m 1 ready;
// kill $!; } < <(kubectl get bundles -w)`): no word of the command holds
// them, so nothing else names them (trial 46s69a's D4: the watch missing).
func (t *translator) accountRedirSubst(s *syntax.Stmt) {
	for _, r := range s.Redirs {
		if r.Word == nil || len(r.Word.Parts) != 1 {
			continue
		}
		if ps, ok := r.Word.Parts[0].(*syntax.ProcSubst); ok {
			t.accountSubstIn(ps, map[*function]bool{}, substWhy{
				"the script reads its output through " + t.text(r) + " at this line, which khook does not do; it changes nothing in the cluster",
				"the script runs it inside " + t.text(r) + " to feed its output to the command at this line, which khook cannot do; make it a step of its own"})
		}
	}
}

// accountSubstIn accounts the helm and kubectl commands under n, and in
// the functions of the script n calls ($(v vault status), v running
// kubectl exec), at their own lines.
func (t *translator) accountSubstIn(n syntax.Node, seen map[*function]bool, why substWhy) {
	syntax.Walk(n, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if !ok || len(c.Args) == 0 {
			return true
		}
		if f := t.funcs[lit(c.Args[0])]; f != nil && !seen[f] {
			seen[f] = true
			saveFile, saveSrc, saveBase := t.file, t.src, t.lineBase
			t.file, t.src, t.lineBase = f.file, f.src, 0
			t.accountSubstIn(f.decl.Body, seen, why)
			t.file, t.src, t.lineBase = saveFile, saveSrc, saveBase
			return true
		}
		tool := toolName(lit(c.Args[0]))
		if tool == "" {
			// $(${KUBECTL} get sa …): the kubectl the variable holds (trial
			// 46s69g's D3: in no count, the import "faithful")
			tool = toolOfParam(c.Args[0])
		}
		var argv []string
		if tool == "" && t.heldTool(c.Args[0]) != "" {
			// $(${PG_READY_CMD} | grep -c true), the variable holding
			// kubectl get pod …: its words (trial 46s70f's D2)
			v, _, _ := t.knownValue(paramNameOf(c.Args[0]))
			argv = strings.Fields(v)
			tool, argv = toolName(argv[0]), argv[1:]
		}
		if tool == "" {
			return true
		}
		key := fmt.Sprintf("%p/%d", c, t.frame)
		if t.substSeen[key] {
			return true
		}
		t.substSeen[key] = true
		argv = append([]string{tool}, argv...)
		for _, w := range c.Args[1:] {
			argv = append(argv, lit(w))
		}
		if readOnlyTool(argv) {
			t.account(c, importer.FateReadOnly, "", why.readOnly)
		} else {
			t.account(c, importer.FateNotCarried, "", why.changes)
		}
		return true
	})
}

// evalCmd is `eval "…"`: text known at import is walked as the command it
// holds, at the eval's line; text built when the script runs (an array
// grown under conditions, a command's output) is named not carried, as a
// helm or kubectl command when it runs one.
func (t *translator) evalCmd(x *cmd, c *syntax.CallExpr) {
	text := strings.Join(x.args[1:], " ")
	why := "the command it runs is built when the script runs"
	switch {
	case !x.ok:
		why += " (" + x.why + ")"
	case hasArrayExp(c):
		why += " (from an array, whose words khook does not track under conditions)"
	default:
		if t.walkText(text, x.stmt) {
			return
		}
		why += " (bash cannot parse its text at import)"
	}
	t.evalSets(x, c)
	words := strings.Fields(text)
	switch {
	case len(words) > 0 && toolName(words[0]) != "" && readOnlyTool(words):
		t.account(x.stmt, importer.FateReadOnly, "", "it changes nothing in the cluster")
	case len(words) > 0 && toolName(words[0]) != "":
		t.account(x.stmt, importer.FateNotCarried, "", "an eval: "+why+"; write its step by hand")
	default:
		t.notCarried(x.stmt, t.text(x.stmt), "an eval: "+why+"; khook runs no shell commands, do what it does by hand")
	}
}

// evalAssign is a NAME= an eval's text makes (eval "$(yq '"DOMAIN=" + …')").
var evalAssign = regexp.MustCompile(`(?:^|\\n|["'\s;])([A-Za-z_][A-Za-z0-9_]*)=`)

// evalSets: the variables an eval of text built when the script runs may
// set (the NAME= its words spell) hold values only the run knows, never
// "" nor the environment's (trial 46s69h's D1: config read by eval "$(yq
// …)" taken as empty, a "required config missing" check decided).
func (t *translator) evalSets(x *cmd, c *syntax.CallExpr) {
	for _, w := range c.Args[1:] {
		a, b := int(w.Pos().Offset()), int(w.End().Offset())
		if a < 0 || b > len(t.src) || a >= b {
			continue
		}
		// the word as written, every line (t.text keeps the first)
		for _, m := range evalAssign.FindAllStringSubmatch(string(t.src[a:b]), -1) {
			name := m[1]
			a := &syntax.Assign{Name: &syntax.Lit{ValuePos: x.stmt.Pos(), ValueEnd: x.stmt.Pos(), Value: name}, Value: w}
			if secretLooking(name) {
				t.vars[name] = &shVar{unknown: true, decl: &importer.Var{Name: name, Secret: true, Required: true, Computed: true, From: t.loc(x.stmt), Description: "a secret the script sets with eval (" + t.loc(x.stmt).String() + "), from text only the run knows"}}
				continue
			}
			t.vars[name] = &shVar{unknown: true, decl: t.computedVar(name, a, "set by eval of text only the run knows")}
		}
	}
}

// walkText walks text (an eval's, an xargs' command) as lines of the
// script at n; false when bash cannot parse it.
func (t *translator) walkText(text string, n syntax.Node) bool {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), t.file)
	if err != nil {
		return false
	}
	saveSrc, saveBase := t.src, t.lineBase
	t.src, t.lineBase = []byte(text), t.line(n)-1
	t.stmts(f.Stmts)
	t.src, t.lineBase = saveSrc, saveBase
	return true
}

// hasArrayExp: a word of c expands an array (${args[*]}, ${args[@]}).
func hasArrayExp(c *syntax.CallExpr) bool {
	found := false
	syntax.Walk(c, func(n syntax.Node) bool {
		if pe, ok := n.(*syntax.ParamExp); ok && pe.Index != nil {
			found = true
		}
		return !found
	})
	return found
}

// splitUnknown names a command not carried when an unquoted variable of
// unknown value is among its arguments (cykubed's $REPLICATION_ARGS, set
// in a getopts loop): bash splits it into words when the script runs,
// which may be flags, the chart or nothing, so no argument's place is
// known at import.
func (t *translator) splitUnknown(x *cmd) bool {
	if len(x.split) == 0 {
		return false
	}
	what := "flags or the object"
	if toolName(x.args[0]) == "helm" {
		// helm rollback REL REV takes no chart (46zzb's N4)
		sub := ""
		if i := firstArg(x.args); i < len(x.args) {
			sub = x.args[i]
		}
		switch sub {
		case "install", "upgrade", "template":
			what = "flags or the chart"
		case "rollback":
			what = "flags, the release or the revision"
		default:
			what = "flags or the release"
		}
	}
	t.account(x.stmt, importer.FateNotCarried, "", "the unquoted "+strings.Join(x.split, ", ")+" is split into words only when the script runs, and its value is not known at import ("+t.setUnder(x.split)+"it may hold "+what+"), so which argument is which is not known; write the step by hand")
	return true
}

// setUnder says where each of names ($R) was set under a condition khook
// cannot decide, the cause of its value's not being known (trial 46s68c's
// D3: the condition at line 8 named nowhere); "" for none.
func (t *translator) setUnder(names []string) string {
	var out string
	for _, n := range names {
		v := t.vars[strings.TrimPrefix(n, "$")]
		if v != nil && v.decl != nil && strings.HasPrefix(v.decl.Description, undecidedWhy) {
			out += n + " is set under the condition at " + v.decl.From.String() + ", which khook cannot decide; "
		}
	}
	return out
}

// unknownWord is the name of the variable of unknown value a word is,
// unquoted ("" for any other word).
func (t *translator) unknownWord(w *syntax.Word) string {
	if len(w.Parts) != 1 {
		return ""
	}
	pe, quoted := paramOf(w.Parts[0])
	if quoted || pe == nil || pe.Param == nil || t.vars[pe.Param.Value] == nil || !t.vars[pe.Param.Value].unknown {
		return ""
	}
	return pe.Param.Value
}

// ignoresFailure: after ||, s carries on (true, :, echo) rather than
// failing in turn (exit 1, return 1, false).
func ignoresFailure(s *syntax.Stmt) bool {
	fails := false
	syntax.Walk(s, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
			switch lit(c.Args[0]) {
			case "exit", "return", "die", "false":
				fails = true
			}
		}
		return !fails
	})
	return !fails
}

var createCommand = regexp.MustCompile(`^(kubectl|oc)\b.*\screate\s`)

// failureIgnored: the script carries on when the steps made of the
// command at n fail (`… || true`, how; an if's condition). A delete then
// ignores a missing object; an apply made of kubectl create was made
// idempotent; any other step fails the run, said at the line, since no
// khook step may fail without failing the run.
func (t *translator) failureIgnored(n syntax.Node, how string, steps []*importer.Step) {
	for _, st := range steps {
		if d := st.Out.Delete; d != nil {
			if d.IgnoreNotFound != nil && *d.IgnoreNotFound {
				continue // said already (no set -e, then || true)
			}
			yes := true
			d.IgnoreNotFound = &yes
			t.info(n, "step "+st.Out.Name, "the script ignores its failure ("+how+"): written ignoreNotFound: true; any other failure (a refusal, a timeout) still fails the run, where the script carried on")
			continue
		}
		created := false
		for _, cmd := range t.m.Commands {
			created = created || (cmd.Step == st.Out.Name && createCommand.MatchString(cmd.Text))
		}
		if a := st.Out.Apply; created && a != nil && a.SkipIf == "" && len(a.Manifests) == 1 && secretKind.MatchString(a.Manifests[0].Inline) {
			// kubectl create secret … || echo "already exists": the Secret
			// made once, kept after (trial 46zs's N4: a re-run overwrote it)
			a.SkipIf = "exists"
			t.info(n, "step "+st.Out.Name, "kubectl create fails where the Secret exists, which the script ignores ("+how+"): the step applies only where it is absent (skipIf: exists), so a re-run keeps its data")
		}
		if !created {
			t.info(n, "step "+st.Out.Name, "the script ignores its failure ("+how+") and carries on; khook's step fails the run when it fails (no step may fail without failing the run)")
		}
	}
}

// conditionFailure: a helm or kubectl command is an if's condition, and
// the branch its failure takes carries on (an else that only prints, or
// no else), as after `|| true`: said at its line by failureIgnored.
func (t *translator) conditionFailure(c *syntax.IfClause, cond *syntax.Stmt, steps []*importer.Step) {
	onFail, how := []*syntax.Stmt(nil), "if …; then …; fi, with no else"
	switch {
	case cond.Negated:
		onFail = c.Then
	case c.Else != nil:
		onFail = append(append(onFail, c.Else.Cond...), c.Else.Then...)
	}
	for _, s := range onFail {
		if !ignoresFailure(s) || t.mayChange(s) { // a fallback: failureBranch
			return
		}
	}
	switch {
	case len(onFail) == 0:
	case cond.Negated:
		how = "if ! …; then " + t.text(onFail[0]) + "; fi"
	default:
		how = "if …; else " + t.text(onFail[0]) + "; fi"
	}
	t.failureIgnored(cond, how, steps)
}
