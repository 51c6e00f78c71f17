package shscript

import (
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/khook/khook/internal/importer"
)

// readsScriptArgs: n reads the script's own arguments, a positional
// parameter where those are the script's (or a call's words made of
// them: main "$@"), or a variable set from one (ACTION="${2:-deploy}").
func (t *translator) readsScriptArgs(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		if pe, ok := n.(*syntax.ParamExp); ok && pe.Param != nil {
			p := pe.Param.Value
			found = found || t.argVals[p] || !t.notScriptArgs && positional(p)
		}
		return !found
	})
	return found
}

// positional: $1, $@, $*, $# name the positional parameters.
func positional(p string) bool {
	if p == "@" || p == "*" || p == "#" {
		return true
	}
	_, err := strconv.Atoi(p)
	return err == nil
}

// markIn adds name to *set where on holds, else takes it out.
func markIn(set *map[string]bool, name string, on bool) {
	if !on {
		delete(*set, name)
		return
	}
	if *set == nil {
		*set = map[string]bool{}
	}
	(*set)[name] = true
}

// withCallArgs walks f with the positional parameters of a call whose
// words are words[1:]: the script's own where a word reads them.
func (t *translator) withCallArgs(words []*syntax.Word, f func()) {
	save := t.notScriptArgs
	t.notScriptArgs = !slices.ContainsFunc(words[min(1, len(words)):], func(w *syntax.Word) bool { return t.readsScriptArgs(w) })
	f()
	t.notScriptArgs = save
}

// untakenOnGiven names the helm and kubectl commands of the branches a
// condition on the script's given arguments does not take (case
// "${1:-setup}" in … rebuild) kubectl rollout restart …), and of the
// functions they call, at their lines, unless the walk accounted for
// the line already: bash does not run them with those arguments (trial
// 46s70k's D2: in no count, the header said 14 of the file's 16).
func (t *translator) untakenOnGiven(on syntax.Node, what string, other []*syntax.Stmt) {
	if !t.argsGiven || t.splitting > 0 || len(other) == 0 || !t.readsScriptArgs(on) {
		return
	}
	said := map[importer.Loc]bool{}
	for _, c := range t.m.Commands {
		said[c.Loc] = true
	}
	m := t.mark()
	why := "bash does not run it with the arguments given: " + what + "; import again with the arguments that take its branch to carry it"
	if t.untakenWhys == nil {
		t.untakenWhys = map[string]bool{}
	}
	t.untakenWhys[why] = true
	t.toolsIn(other, why, map[*function]bool{})
	t.m.Commands = append(t.m.Commands[:m.commands], slices.DeleteFunc(t.m.Commands[m.commands:], func(c importer.Command) bool { return said[c.Loc] })...)
	t.m.NotCarried = append(t.m.NotCarried[:m.notCarried], slices.DeleteFunc(t.m.NotCarried[m.notCarried:], func(n importer.Note) bool { return said[n.Loc] })...)
}

// untakenItems: the items of a case other than it, which picked the
// subject v known at import.
func (t *translator) untakenItems(c *syntax.CaseClause, it *syntax.CaseItem, v string) {
	var pats []string
	var stmts []*syntax.Stmt
	for _, o := range c.Items {
		if o != it {
			stmts = append(stmts, o.Stmts...)
		}
	}
	for _, p := range it.Patterns {
		pats = append(pats, t.text(p))
	}
	picks := strings.Join(pats, "|") + ") for " + v
	if s, ok, _ := t.eval(it.Patterns[0]); len(it.Patterns) == 1 && ok && s == v {
		picks = v
	}
	t.untakenOnGiven(c.Word, "the case at "+t.loc(c).String()+" picks "+picks, stmts)
}

// untakenBranch: the branch of an if decided at import (static) that
// bash does not take with the script's given arguments.
func (t *translator) untakenBranch(c *syntax.IfClause, cond *syntax.Stmt, static bool) {
	other := c.Then
	if static {
		other = elseOf(c)
	}
	t.untakenOnGiven(cond, condKey(t.text(cond))+" ("+t.loc(cond).String()+") is "+strconv.FormatBool(static), other)
}

// untakenAgain drops what untakenOnGiven named at a line the walk
// accounted for after it (status, named in the case's untaken branch,
// then called after the case): that line runs, as its fate there says.
func (t *translator) untakenAgain() {
	untaken := func(c importer.Command) bool { return c.Step == "" && t.untakenWhys[c.Why] } // not carried, or read-only
	ran := map[importer.Loc]bool{}
	for _, c := range t.m.Commands {
		if !untaken(c) {
			ran[c.Loc] = true
		}
	}
	t.m.Commands = slices.DeleteFunc(t.m.Commands, func(c importer.Command) bool { return untaken(c) && ran[c.Loc] })
	t.m.NotCarried = slices.DeleteFunc(t.m.NotCarried, func(n importer.Note) bool {
		for why := range t.untakenWhys {
			if ran[n.Loc] && strings.HasPrefix(n.Why, why) {
				return true
			}
		}
		return false
	})
}
