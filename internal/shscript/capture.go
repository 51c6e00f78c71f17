package shscript

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// printedCapture is `out=$(kubectl "$@" 2>&1)` (also `local out=$(…)`) in
// a function that does nothing with $out but print it, log it or test it
// for being empty: the command runs as it would bare, so it is walked as
// the command itself, with the function's arguments, as `k() { kubectl
// "$@"; }` is (trial 46s68i's D1: 44 applies and installs of a logging
// wrapper "not carried: … to take its output").
func (t *translator) printedCapture(a *syntax.Assign) bool {
	if a == nil || a.Name == nil || a.Value == nil || len(a.Value.Parts) != 1 || len(t.callers) == 0 {
		return false
	}
	cs, _ := a.Value.Parts[0].(*syntax.CmdSubst)
	if cs == nil || len(cs.Stmts) != 1 {
		return false
	}
	inner := cs.Stmts[0]
	c, _ := inner.Cmd.(*syntax.CallExpr)
	f := t.funcs[t.callers[len(t.callers)-1].name]
	if c == nil || len(c.Args) == 0 || len(c.Assigns) > 0 || !isTool(lit(c.Args[0])) && !toolParam(c.Args[0]) || f == nil ||
		!t.onlyPrinted(f.decl.Body, a.Name.Value, a) {
		return false
	}
	t.stmt(inner)
	t.vars[a.Name.Value] = &shVar{unknown: true} // what the command printed
	return true
}

// onlyPrinted: body reads $name only to print it (echo "$out", echo
// "$out" | while read …; do log …; done, log_detail "Error: $out") or to
// test whether it is empty ([[ -n $out ]]) where the if runs no helm or
// kubectl command; capture is where it is set.
func (t *translator) onlyPrinted(body syntax.Node, name string, capture *syntax.Assign) bool {
	ok := true
	syntax.Walk(body, func(n syntax.Node) bool {
		if !ok || n == nil || n == capture {
			return false
		}
		if !readsVar(n, name) {
			return false // nothing below reads it
		}
		switch x := n.(type) {
		case *syntax.Stmt:
			if call, isCall := x.Cmd.(*syntax.CallExpr); isCall {
				ok = t.printer(x, call)
				return false
			}
			if p, isPipe := x.Cmd.(*syntax.BinaryCmd); isPipe && (p.Op == syntax.Pipe || p.Op == syntax.PipeAll) {
				ok = t.printedPipe(x, name)
				return false
			}
		case *syntax.IfClause:
			ok = !runsTool(x)
		case *syntax.TestClause:
			// [[ -n $out ]] only; [[ "$(echo "$d")" == x ]] uses its value
			// (trial 46s68r's D7: a nil UnaryTest read, a panic)
			u, _ := x.X.(*syntax.UnaryTest)
			if u == nil {
				ok = false
				return false
			}
			w, _ := u.X.(*syntax.Word)
			ok = (u.Op == syntax.TsNempStr || u.Op == syntax.TsEmpStr) && w != nil && len(w.Parts) == 1
			return false
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.Assign, *syntax.ArithmCmd, *syntax.ArithmExp, *syntax.CaseClause, *syntax.ForClause, *syntax.LetClause:
			ok = false // its value used, not printed
			return false
		}
		return true
	})
	return ok
}

// printer: s prints its words to the terminal (echo, printf without -v, a
// function of the script that runs no helm or kubectl), to no file.
func (t *translator) printer(s *syntax.Stmt, c *syntax.CallExpr) bool {
	if len(c.Args) == 0 || len(c.Assigns) > 0 {
		return false
	}
	for _, r := range s.Redirs {
		if (r.Op == syntax.RdrOut || r.Op == syntax.AppOut || r.Op == syntax.RdrAll || r.Op == syntax.AppAll) && !strings.HasPrefix(lit(r.Word), "/dev/") {
			return false
		}
	}
	name := lit(c.Args[0])
	if f := t.funcs[name]; f != nil {
		return !runsTool(f.decl.Body)
	}
	return name == "echo" || name == "printf" && (len(c.Args) < 2 || lit(c.Args[1]) != "-v")
}

// printedPipe: `echo "$out" | grep … | head -5`, `echo "$out" | while
// read -r l; do log "$l"; done`: the first command prints $name, and what
// it feeds reads no other value of the script and runs no helm or kubectl.
func (t *translator) printedPipe(s *syntax.Stmt, name string) bool {
	parts := pipeStages(s)
	first, _ := parts[0].Cmd.(*syntax.CallExpr)
	if first == nil || !t.printer(parts[0], first) {
		return false
	}
	for _, s := range parts[1:] {
		if runsTool(s) || readsVar(s, name) {
			return false
		}
		if c, ok := s.Cmd.(*syntax.CallExpr); ok && len(c.Args) > 0 && t.funcs[lit(c.Args[0])] != nil && runsTool(t.funcs[lit(c.Args[0])].decl.Body) {
			return false
		}
	}
	return true
}

// readsVar: n expands $name somewhere.
func readsVar(n syntax.Node, name string) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		if pe, ok := n.(*syntax.ParamExp); ok && pe.Param != nil && pe.Param.Value == name {
			found = true
		}
		return !found
	})
	return found
}
