package shscript

import (
	"maps"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/khook/khook/internal/importer"
)

// checkSets remembers the variables the path of check that the spec
// follows (where it finds nothing) sets otherwise than the other path:
// `if ! kubectl get secret tls; then missing=true; fi` (noElse: the other
// path is before, the variables before the if); foundVars are the then
// branch's after a check that is not negated.
func (t *translator) checkSets(check *syntax.Stmt, noElse bool, before, thenVars map[string]*shVar) {
	found := thenVars
	if check.Negated {
		found = before
		if !noElse {
			return // its else's variables are gone: absentVars says those
		}
	}
	for name, v := range t.vars {
		if found[name] != v {
			if t.checkSet == nil {
				t.checkSet = map[string]*syntax.Stmt{}
			}
			t.checkSet[name] = check
		}
	}
}

// untakenOnCheck: an if decided at import on a variable an existence
// check set (if [[ $missing == true ]]) decided it on a fresh cluster's
// path; the branch it does not take is what the script does where the
// check finds the object: walked, its steps taken back and named not
// carried at their lines (trial 46s68i's D3: an apply, silently dropped).
func (t *translator) untakenOnCheck(c *syntax.IfClause, cond *syntax.Stmt, taken bool) {
	check := setOn(cond, t.checkSet)
	why := ""
	if check != nil {
		why = "what the script does where " + t.text(check.Cmd) + " (" + t.loc(check).String() + ") finds the object, as " + condKey(t.text(cond)) + " decides from it; the spec follows a fresh cluster's path, where it finds nothing: do this by hand on a cluster where it does"
	} else if check = t.argOn(cond); check != nil {
		why = argsWhy(t.loc(check).String())
	}
	if check == nil || taken && c.Else == nil {
		return
	}
	t.walkUntaken(c, taken, why)
}

// untakenOnNoInteger: an if on [ $1 -eq 'ingress' ], which bash's test
// fails ("integer expression expected") whatever $1 is, was decided
// false; the branch bash never takes is named not carried at its lines,
// with the fix (trial 46s69r's D2: carried as a choice, as if it held).
func (t *translator) untakenOnNoInteger(c *syntax.IfClause, cond *syntax.Stmt, taken bool) {
	if t.notInteger == "" || taken && c.Else == nil {
		return
	}
	why := "bash never runs it: " + condKey(t.text(cond)) + " (" + t.loc(cond).String() + ") is always " + strconv.FormatBool(taken) +
		", as -eq, -gt and the like compare integers and " + strconv.Quote(t.masked(t.notInteger)) + " is none (bash: integer expression expected); to compare words write = and import again"
	m := t.mark()
	t.walkUntaken(c, taken, why)
	// what the walk said of the branch's other commands (watch: run it
	// in a job) is moot where bash never runs them: its helm and kubectl
	// commands are said once each, why
	said := map[importer.Loc]bool{}
	notes := t.m.NotCarried[:m.notCarried]
	for _, n := range t.m.NotCarried[m.notCarried:] {
		if strings.HasPrefix(n.Why, why) {
			notes, said[n.Loc] = append(notes, n), true
		}
	}
	for i := m.commands; i < len(t.m.Commands); i++ {
		if cm := &t.m.Commands[i]; cm.Fate == importer.FateNotCarried && !said[cm.Loc] {
			cm.Why, said[cm.Loc] = why, true
			notes = append(notes, importer.Note{Loc: cm.Loc, What: cm.Text, Why: why})
		}
	}
	t.m.NotCarried, t.m.Info = notes, t.m.Info[:m.info]
}

// argOn is the if on $# that set a variable cond reads, nil if none.
func (t *translator) argOn(cond *syntax.Stmt) *syntax.Stmt { return setOn(cond, t.argSet) }

// setOn is what set (in sets) the first variable cond reads, nil if none.
func setOn(cond *syntax.Stmt, sets map[string]*syntax.Stmt) *syntax.Stmt {
	var on *syntax.Stmt
	syntax.Walk(cond, func(n syntax.Node) bool {
		if pe, ok := n.(*syntax.ParamExp); ok && pe.Param != nil && sets[pe.Param.Value] != nil && on == nil {
			on = sets[pe.Param.Value]
		}
		return on == nil
	})
	return on
}

// argsWhy is why a path taken only with the script's arguments is not carried.
func argsWhy(at string) string {
	return "what the script does when it is given arguments ($# at " + at + " was counted without them): import again with the arguments after the script's name to carry it"
}

// untakenOnArgs: an if decided on $# counted without the script's
// arguments (if [ $# -eq 1 ]; then TOKEN=$1; DEPLOY=true; fi) took the
// path of a run given none; the other path's commands, and those of any
// if on a variable it sets, are named not carried at their lines, never
// dropped without a word (trial 46s69m's D1).
func (t *translator) untakenOnArgs(c *syntax.IfClause, cond *syntax.Stmt, taken bool) {
	if taken && c.Else == nil {
		return
	}
	t.walkUntaken(c, taken, argsWhy(t.loc(cond).String()))
	other := c.Then
	if taken {
		other = c.Else.Then
	}
	for _, s := range other {
		syntax.Walk(s, func(n syntax.Node) bool {
			if a, ok := n.(*syntax.Assign); ok && a.Name != nil {
				if t.argSet == nil {
					t.argSet = map[string]*syntax.Stmt{}
				}
				t.argSet[a.Name.Value] = cond
			}
			return true
		})
	}
}

// walkUntaken walks the branch of c the import did not take, its steps
// taken back and named not carried, why.
func (t *translator) walkUntaken(c *syntax.IfClause, taken bool, why string) {
	m, vars, stopped, failed := t.mark(), maps.Clone(t.vars), t.stopped, t.failed
	t.undecidedDepth++
	if taken {
		t.ifClause(c.Else)
	} else {
		t.branch(c.Then, "")
	}
	t.undecidedDepth--
	t.vars, t.exitGuard, t.stopped, t.failed = vars, nil, stopped, failed
	t.notCarriedSince(m, why)
}
