package shscript

import (
	"strconv"
	"strings"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/khook/khook/words"
)

// untilValueWait is `until [[ $n == 0 || $phase == "Succeeded" ]]; do
// phase=$(kubectl get csv X -o jsonpath='{.status.phase}' || echo …);
// sleep 1; n=$((n - 1)); done`: the wait: for the jsonpath to be that
// value, bounded by the turns the counter allows times the sleeps, and
// the variable holds the value after it (trial 46s67q's D3: the loop was
// dropped without a word and the import said "faithful").
func (t *translator) untilValueWait(cond *syntax.Stmt, body []*syntax.Stmt) bool {
	tc, _ := cond.Cmd.(*syntax.TestClause)
	if tc == nil || cond.Negated {
		return false
	}
	name, want, counter := "", "", (*syntax.BinaryTest)(nil)
	tests := []syntax.TestExpr{tc.X}
	if or, _ := tc.X.(*syntax.BinaryTest); or != nil && or.Op == syntax.OrTest {
		tests = []syntax.TestExpr{or.X, or.Y}
	}
	for _, x := range tests {
		b, _ := x.(*syntax.BinaryTest)
		if b == nil {
			return false
		}
		if n, w, ok := t.matchTest(b); ok && name == "" && !t.isCounter(n, body) {
			name, want = n, w
			continue
		}
		if counter != nil {
			return false
		}
		counter = b
	}
	if name == "" {
		return false
	}
	var set *syntax.Stmt
	var rest []*syntax.Stmt
	for _, st := range body {
		if c, ok := st.Cmd.(*syntax.CallExpr); ok && set == nil && len(c.Args) == 0 && len(c.Assigns) == 1 && c.Assigns[0].Name.Value == name {
			set = st
			continue
		}
		rest = append(rest, st)
	}
	if set == nil || runsTool(&syntax.Block{Stmts: rest}) {
		return false
	}
	get := t.assignedGet(set)
	if get == nil {
		return false
	}
	c, _ := get.Cmd.(*syntax.CallExpr)
	before := len(t.m.Steps)
	if c == nil || !t.jsonpathWait(set, t.newCmd(get, c), want) {
		return false
	}
	if d := t.sleeps(rest) * time.Duration(t.counterTurns(counter, body)); d > 0 {
		for _, st := range t.m.Steps[before:] {
			if st.Out.Wait != nil && st.Out.Timeout == "" {
				st.Out.Timeout = words.ShortDuration(d)
			}
		}
	}
	t.vars[name] = &shVar{val: want}
	return true
}

// matchTest is `$V == W` (= too) with W known and no pattern.
func (t *translator) matchTest(b *syntax.BinaryTest) (string, string, bool) {
	if b.Op != syntax.TsMatch && b.Op != syntax.TsMatchShort {
		return "", "", false
	}
	l, _ := b.X.(*syntax.Word)
	r, _ := b.Y.(*syntax.Word)
	if l == nil || r == nil || len(l.Parts) != 1 || hasGlob(r) {
		return "", "", false
	}
	pe, _ := paramOf(l.Parts[0])
	if pe == nil || pe.Param == nil || pe.Exp != nil || !syntax.ValidName(pe.Param.Value) {
		return "", "", false
	}
	want, ok, _ := t.eval(r)
	return pe.Param.Value, want, ok && want != "" && !strings.Contains(want, "${")
}

// isCounter: the body sets name by arithmetic (n=$((n - 1)), ((n--))).
func (t *translator) isCounter(name string, body []*syntax.Stmt) bool {
	found := false
	for _, st := range body {
		syntax.Walk(st, func(n syntax.Node) bool {
			switch x := n.(type) {
			case *syntax.Assign:
				if x.Name != nil && x.Name.Value == name && x.Value != nil && len(x.Value.Parts) == 1 {
					_, found = x.Value.Parts[0].(*syntax.ArithmExp)
				}
			case *syntax.ArithmCmd:
				syntax.Walk(x, func(n syntax.Node) bool {
					if l, ok := n.(*syntax.Lit); ok && l.Value == name {
						found = true
					}
					return !found
				})
			}
			return !found
		})
	}
	return found
}

// counterTurns is how many turns `$n == 0` (-eq, -le) lets a loop whose
// body counts n down run: n's value before it; 0 where khook cannot tell.
func (t *translator) counterTurns(b *syntax.BinaryTest, body []*syntax.Stmt) int {
	if b == nil {
		return 0
	}
	l, _ := b.X.(*syntax.Word)
	r, _ := b.Y.(*syntax.Word)
	if l == nil || r == nil || len(l.Parts) != 1 || lit(r) != "0" {
		return 0
	}
	switch b.Op {
	case syntax.TsMatch, syntax.TsMatchShort, syntax.TsEql, syntax.TsLeq:
	default:
		return 0
	}
	pe, _ := paramOf(l.Parts[0])
	if pe == nil || pe.Param == nil || !t.isCounter(pe.Param.Value, body) || t.vars[pe.Param.Value] == nil {
		return 0
	}
	n, err := strconv.Atoi(t.vars[pe.Param.Value].val)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// assignedGet is the command of V=$(kubectl get … || echo …): the
// fallback only gives V a value where kubectl fails, a turn that goes on.
func (t *translator) assignedGet(set *syntax.Stmt) *syntax.Stmt {
	a := set.Cmd.(*syntax.CallExpr).Assigns[0]
	if a.Value == nil || len(a.Value.Parts) != 1 {
		return nil
	}
	part := a.Value.Parts[0]
	if dq, _ := part.(*syntax.DblQuoted); dq != nil && len(dq.Parts) == 1 {
		part = dq.Parts[0]
	}
	cs, _ := part.(*syntax.CmdSubst)
	if cs == nil || len(cs.Stmts) != 1 {
		return nil
	}
	get := cs.Stmts[0]
	if b, _ := get.Cmd.(*syntax.BinaryCmd); b != nil && b.Op == syntax.OrStmt && (isCommand(b.Y, "true") || isCommand(b.Y, "echo")) {
		get = b.X
	}
	return get
}
