package shscript

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/khook/khook/internal/importer"
)

// A command can end bash's run of the script where khook's walk goes on:
// a foreground kubectl port-forward runs until it is stopped, and Ctrl-C
// stops the script with it; a command that is not found (a misspelled
// function) fails under set -e. The steps after it are carried as the
// script means them, and the note at the command says so (46zn's D1, D2).

// halt is such a command.
type halt struct {
	at   importer.Loc
	what string
	cmds int    // len(m.Commands) when it was walked
	why  string // why bash runs nothing after it
	fix  string
	// maybe: bash runs nothing after it only where what it waits on never
	// ends (kubectl logs -f of a pod: trial 46s70h's D3), said as that
	maybe bool
}

// mayHalt records a command after which bash runs nothing more only
// where what it waits on never ends: said when commands follow it.
func (t *translator) mayHalt(n syntax.Node, why, fix string) {
	if len(t.when) > 0 || t.undecidedDepth > 0 || t.cond > 0 || len(t.halts) > 0 {
		return
	}
	t.halts = append(t.halts, halt{at: t.loc(n), what: t.text(n), cmds: len(t.m.Commands), why: why, fix: fix, maybe: true})
}

// halted records the first command after which bash runs nothing more.
func (t *translator) halted(n syntax.Node, why, fix string) {
	if len(t.when) > 0 || t.undecidedDepth > 0 || t.cond > 0 {
		return // bash may not take this branch or turn: no claim about what follows
	}
	if len(t.halts) == 1 && t.halts[0].maybe {
		t.halts = t.halts[:0] // a halt for sure, after one that may not be
	}
	if len(t.halts) == 0 {
		t.halts = append(t.halts, halt{at: t.loc(n), what: t.text(n), cmds: len(t.m.Commands), why: why, fix: fix})
	}
}

// sayHalts adds to the command's note what bash never runs after it.
func (t *translator) sayHalts() {
	for _, h := range t.halts {
		first := h.cmds
		for first < len(t.m.Commands) && t.m.Commands[first].Loc == h.at {
			first++ // the command itself, accounted after it was said (watch kubectl …)
		}
		after := len(t.m.Commands) - first
		if after == 0 {
			continue
		}
		said := fmt.Sprintf("%s, so bash never runs the %d helm/kubectl command(s) after it (the first at %s): khook carries them as the script means them; %s",
			h.why, after, t.m.Commands[first].Loc, h.fix)
		if h.maybe {
			said = fmt.Sprintf("%s bash never runs the %d helm/kubectl command(s) after it (the first at %s), which khook carries as the script means them; %s",
				h.why, after, t.m.Commands[first].Loc, h.fix)
		}
		if i := slices.IndexFunc(t.m.NotCarried, func(n importer.Note) bool { return n.Loc == h.at }); i >= 0 {
			t.m.NotCarried[i].Why += "; " + said
		} else { // read-only (watch kubectl get): said on its own
			t.m.Info = append(t.m.Info, importer.Note{Loc: h.at, What: h.what, Why: said})
		}
	}
}

// foreground: the statement runs in the foreground of the script (not
// cmd &, nor under a background list or timeout).
func (t *translator) foreground(x *cmd) bool {
	return t.bg == 0 && !x.stmt.Background && !strings.HasPrefix(strings.TrimSpace(t.text(x.stmt)), "timeout ")
}

// testedCalls marks the calls of f whose failure bash tests (an if or
// while condition, the left of && or ||, after !): set -e does not stop
// the script there.
func (t *translator) testedCalls(f *syntax.File) {
	mark := func(stmts ...*syntax.Stmt) {
		for _, s := range stmts {
			syntax.Walk(s, func(n syntax.Node) bool {
				if c, ok := n.(*syntax.CallExpr); ok {
					t.tested[c] = true
				}
				return true
			})
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.IfClause:
			mark(n.Cond...)
		case *syntax.WhileClause:
			mark(n.Cond...)
		case *syntax.BinaryCmd:
			if n.Op == syntax.AndStmt || n.Op == syntax.OrStmt {
				mark(n.X)
			}
		case *syntax.Stmt:
			if n.Negated {
				mark(n)
			}
		}
		return true
	})
}

// undefinedCommand: name looks like one of the script's functions but
// none is defined under it, so bash does not find it (exit 127). The
// reason khook says, "" when name is no such command.
func (t *translator) undefinedCommand(s *syntax.Stmt, c *syntax.CallExpr, name string) string {
	if (pastedPrompt.MatchString(name) || name == "$") && len(c.Args) > 0 && lit(c.Args[0]) == name {
		// root@host:/home/app# cat setup.sh, $ kubectl apply …: a shell
		// prompt pasted with the command (trial 46s68t's D2: the steps
		// after it carried where bash stops)
		if t.errexit && !t.tested[c] {
			t.halted(s, "under set -e that failure ends the script", "take the prompt out of the script and import again")
		}
		return name + " is a shell prompt pasted into the script, not a command: bash finds no such command, and fails here (exit 127)"
	}
	if t.funcs[name] != nil || strings.ContainsAny(name, "/.$") || len(c.Args) == 0 || lit(c.Args[0]) != name {
		return "" // sub_${arg}: a name the run builds, which the import may read otherwise (trial 46zx's D6)
	}
	i := strings.IndexAny(name, "_-")
	if i < 2 {
		return ""
	}
	var kin []string
	for f := range t.funcs {
		if strings.HasPrefix(f, name[:i+1]) {
			kin = append(kin, f)
		}
	}
	if len(kin) == 0 {
		return ""
	}
	slices.Sort(kin)
	why := name + " is not defined in the script, which defines " + strings.Join(kin, ", ") + ": bash finds no such command, and fails here (exit 127)"
	if t.errexit && !t.tested[c] {
		t.halted(s, "under set -e that failure ends the script", "fix the name in the script and import again")
	}
	return why
}

// pastedPrompt is user@host:dir# or user@host:dir$, a shell's prompt.
var pastedPrompt = regexp.MustCompile(`^[\w.-]+@[\w.-]+:[^\s]*[#$]$`)

// repoAdd is a helm repo add folded into the steps that install from it.
type repoAdd struct {
	at        importer.Loc
	name, url string
}

// unusedRepos: a repo add no step installs from was folded into nothing.
// When the only commands that install from it are not carried, so is it
// (its URL belongs in the step written by hand: trial 46zo's D1); when no
// command does, it only changes helm's local list.
func (t *translator) unusedRepos() {
	if !slices.ContainsFunc(t.m.Steps, func(s *importer.Step) bool { return s.Out.Helm != nil && s.Out.Helm.Repo != "" }) {
		// helm repo update with no step installing from a repository
		// (trial 46zw's N3: folded into a release not carried)
		for _, at := range t.repoUpdates {
			if i := slices.IndexFunc(t.m.Commands, func(c importer.Command) bool { return c.Loc == at && c.Fate == importer.FateFolded }); i >= 0 {
				t.m.Commands[i].Fate, t.m.Commands[i].Why = importer.FateReadOnly, "no step installs from a helm repository: it changes only helm's local index"
			}
		}
	}
	for _, r := range t.repoAdds {
		if slices.ContainsFunc(t.m.Steps, func(s *importer.Step) bool { return s.Out.Helm != nil && s.Out.Helm.Repo == r.url }) {
			continue
		}
		i := slices.IndexFunc(t.m.Commands, func(c importer.Command) bool { return c.Loc == r.at && c.Fate == importer.FateFolded })
		if i < 0 {
			continue
		}
		var users []string
		for _, c := range t.m.Commands {
			if c.Fate == importer.FateNotCarried && strings.Contains(" "+c.Text, " "+r.name+"/") {
				users = append(users, c.Loc.String())
			}
		}
		for _, n := range t.m.NotCarried {
			// run_helm "$@": the call's words, in the note's call site (trial 46s68i's D4)
			if strings.Contains(n.Why, " `") && strings.Contains(n.Why, " "+r.name+"/") && !slices.Contains(users, n.Loc.String()) {
				users = append(users, n.Loc.String())
			}
		}
		c := &t.m.Commands[i]
		if len(users) == 0 {
			c.Fate, c.Why = importer.FateReadOnly, "no command of the script installs from "+r.name+": it changes only helm's local repository list"
			if len(t.repoMissing) > 0 {
				// helm repo add op-ui-charts URL, then chart op-ui/op-ui (46zzg's D2)
				t.m.Info = append(t.m.Info, importer.Note{Loc: c.Loc, What: c.Text, Why: c.Why + "; the script installs " + strings.Join(t.repoMissing, ", ") + " from a repository it does not add: if " + r.url + " is meant there, give it as that chart's repository variable"})
			}
			continue
		}
		c.Fate, c.Why = importer.FateNotCarried, "the commands that install from "+r.name+" ("+strings.Join(users, ", ")+") are not carried: write its URL "+r.url+" in repo: of the step you write for them"
		t.m.NotCarried = append(t.m.NotCarried, importer.Note{Loc: c.Loc, What: c.Text, Why: c.Why})
	}
}

// readsMissing is cat < FILE of a file neither in the checkout nor made
// by the script: bash fails there, and under set -e stops (trial 46zo's
// D4: cat < values.yaml, a here-document's << mistyped).
func (t *translator) readsMissing(x *cmd) {
	t.notCarried(x.stmt, t.text(x.stmt), x.stdin.why+" (a here-document whose << is mistyped? bash runs each line after it that looks like its text as a command, which is not found)")
	t.strayDoc = true
	t.failsHere(x, "fix the script and import again")
}

// failsHere: x fails in the script; under set -e, not tested, that ends it.
func (t *translator) failsHere(x *cmd, fix string) {
	if c, ok := x.stmt.Cmd.(*syntax.CallExpr); ok && t.errexit && !t.tested[c] {
		t.halted(x.stmt, "under set -e that failure ends the script", fix)
	}
}

// strayLine: name is a line of the here-document a mistyped << left as
// commands (replicas:, - name: x, EOF), said once with the cat before it;
// EOF ends them.
func (t *translator) strayLine(name string) bool {
	if !t.strayDoc {
		return false
	}
	if name == "EOF" {
		t.strayDoc = false
		return true
	}
	if strings.HasSuffix(name, ":") || name == "-" {
		return true
	}
	t.strayDoc = false
	return false
}

// neverRun names the helm and kubectl commands of rest, the statements
// after s, the script's own line where an exit decided at import stops
// it (a helper that exits one argument short: trial 46s67j's D2, whose
// header counted them nowhere): bash never runs them. In a function, rest
// is the rest of its body, and of each caller's after the call (trial
// 46s69h's D2: config.sh:447, after the exit in a helper, in no count).
func (t *translator) neverRun(s *syntax.Stmt, rest []*syntax.Stmt) {
	if (len(t.callers) > 0 || t.inFunc) && t.returned || t.cond > 0 || t.undecidedDepth > 0 || len(t.when) > 0 || t.splitting > 0 {
		return // return 1 ends only the function
	}
	t.toolsIn(rest, "bash never runs it: the script stops before it, at "+t.loc(s).String()+" ("+t.text(s)+")", map[*function]bool{})
}

// toolsIn accounts each helm and kubectl command of list, and of the
// functions it calls (once each, seen), not carried, why.
func (t *translator) toolsIn(list []*syntax.Stmt, why string, seen map[*function]bool) {
	walkOutsideFuncs(list, func(n syntax.Node) bool {
		if n, ok := n.(*syntax.Stmt); ok {
			if c, ok := n.Cmd.(*syntax.CallExpr); ok && slices.ContainsFunc(c.Args, func(w *syntax.Word) bool { return toolName(lit(w)) != "" }) {
				fate := importer.FateNotCarried
				if readOnlyTool(toolArgv(c)) {
					// a get there is no step lost either (trial 46s70o's D1:
					// the status branch's get made the import partial)
					fate = importer.FateReadOnly
				}
				t.account(n, fate, "", why)
				return false
			}
		}
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 && t.funcs[lit(c.Args[0])] != nil {
			// restart_web deployment/web: the commands of the function it
			// calls, at their lines (trial 46s69h's D2: in no count)
			t.funcTools(t.funcs[lit(c.Args[0])], &caller{name: lit(c.Args[0]), at: t.loc(c)}, why, seen)
		}
		return true
	})
}

// toolArgv is the literal words of c from its helm or kubectl word on
// (sudo kubectl get …: kubectl get …).
func toolArgv(c *syntax.CallExpr) []string {
	var argv []string
	for _, w := range c.Args {
		if len(argv) > 0 || toolName(lit(w)) != "" {
			argv = append(argv, lit(w))
		}
	}
	return argv
}
