package shscript

import (
	"strconv"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/khook/khook/words"
)

// giveUpBound gives the waits a poll loop at s made (since before) the
// time the script waits before it gives up: `waited=0; while ! kubectl
// get crd X; do if [[ $waited -ge 60 ]]; then exit 1; fi; sleep 5;
// waited=$((waited + 5)); done` waits 60s, not khook's default 5m; where
// the loop gives up on a test khook cannot count, the step says it waits
// its default (trial 46s68i's D5: 5m and nothing said).
// It is counted before the loop's body is walked, which moves the counter.
func (t *translator) giveUpBound(s *syntax.Stmt, body []*syntax.Stmt) func(before int) {
	test, at := giveUpTest(body)
	if w, ok := s.Cmd.(*syntax.WhileClause); test == nil && ok && !countedLoop(w) {
		// while [[ $(kubectl get pods …) != True ]]; do sleep 1; done: the
		// script waits without limit (trial 46s68o's D2: 5m, said nowhere)
		return func(before int) {
			for _, st := range t.m.Steps[before:] {
				if st.Out.Wait != nil && st.Out.Timeout == "" {
					t.stepInfo(t.loc(s), st.Out, "the script polls without a limit of its own; the step waits khook's default timeout, 5m: write timeout: if it may take longer")
				}
			}
		}
	}
	if test == nil {
		return func(int) {}
	}
	d := t.sleeps(body) * time.Duration(t.giveUpTurns(test, at, body))
	return func(before int) { t.boundWaits(s, test, d, before) }
}

// boundWaits gives the waits made since before the timeout d, or says
// they wait khook's default where d is 0.
func (t *translator) boundWaits(s *syntax.Stmt, test *syntax.TestClause, d time.Duration, before int) {
	for _, st := range t.m.Steps[before:] {
		if st.Out.Wait == nil || st.Out.Timeout != "" {
			continue
		}
		if d > 0 {
			st.Out.Timeout = words.ShortDuration(d)
			continue
		}
		t.stepInfo(t.loc(s), st.Out, "the script gives up when "+t.text(test)+" holds, a bound khook cannot count at import; the step waits khook's default timeout, 5m: write the script's time as its timeout:")
	}
}

// giveUpTest is the test of `if [[ T ]]; then …; exit|return; fi` (or
// `[[ T ]] && exit|return`) in a loop's body, and its index there.
func giveUpTest(body []*syntax.Stmt) (*syntax.TestClause, int) {
	for i, st := range body {
		var cond, stop *syntax.Stmt
		switch x := st.Cmd.(type) {
		case *syntax.IfClause:
			if len(x.Cond) == 1 && x.Else == nil && len(x.Then) > 0 {
				cond, stop = x.Cond[0], x.Then[len(x.Then)-1]
			}
		case *syntax.BinaryCmd:
			if x.Op == syntax.AndStmt {
				cond, stop = x.X, x.Y
			}
		}
		if cond == nil || cond.Negated || !isCommand(stop, "exit") && !isCommand(stop, "return") {
			continue
		}
		if tc, ok := cond.Cmd.(*syntax.TestClause); ok {
			return tc, i
		}
	}
	return nil, -1
}

// giveUpTurns is how many turns `[[ $n -ge L ]]` (-gt) at body[at] lets
// the loop run when body counts n up by a step (n=$((n + 5)), ((n+=5)),
// ((n++))) from its value before the loop; 0 where khook cannot tell.
func (t *translator) giveUpTurns(tc *syntax.TestClause, at int, body []*syntax.Stmt) int {
	b, _ := tc.X.(*syntax.BinaryTest)
	if b == nil || b.Op != syntax.TsGeq && b.Op != syntax.TsGtr {
		return 0
	}
	l, _ := b.X.(*syntax.Word)
	r, _ := b.Y.(*syntax.Word)
	if l == nil || r == nil || len(l.Parts) != 1 {
		return 0
	}
	pe, _ := paramOf(l.Parts[0])
	s, known, _ := t.eval(r) // 60, or $max_wait set to it (trial 46s68i's D5)
	limit, err := strconv.Atoi(s)
	if pe == nil || pe.Param == nil || pe.Exp != nil || !known || err != nil {
		return 0
	}
	name := pe.Param.Value
	v := t.vars[name]
	if v == nil || v.unknown {
		return 0
	}
	from, err := strconv.Atoi(v.val)
	step, where := counterStep(name, body)
	if err != nil || step <= 0 {
		return 0
	}
	if where < at {
		from += step // counted before the test: the first turn tests from+step
	}
	if b.Op == syntax.TsGtr {
		limit++
	}
	if limit <= from {
		return 0
	}
	return (limit - from + step - 1) / step
}

// counterStep is what one turn of body adds to name, and the index of the
// statement that adds it; 0 where it is not one known step.
func counterStep(name string, body []*syntax.Stmt) (int, int) {
	step, where := 0, -1
	for i, st := range body {
		n := 0
		switch x := st.Cmd.(type) {
		case *syntax.CallExpr:
			if len(x.Args) == 0 && len(x.Assigns) == 1 && x.Assigns[0].Name.Value == name && x.Assigns[0].Value != nil && len(x.Assigns[0].Value.Parts) == 1 {
				if ae, ok := x.Assigns[0].Value.Parts[0].(*syntax.ArithmExp); ok {
					n = addTo(name, ae.X)
				}
			}
		case *syntax.ArithmCmd:
			n = addTo(name, x.X)
		}
		if n != 0 {
			if step != 0 {
				return 0, -1
			}
			step, where = n, i
		}
	}
	return step, where
}

// addTo is K of name + K (or name += K, name++) in an arithmetic
// expression; 0 otherwise.
func addTo(name string, e syntax.ArithmExpr) int {
	switch x := e.(type) {
	case *syntax.UnaryArithm:
		if w, ok := x.X.(*syntax.Word); ok && lit(w) == name && x.Op == syntax.Inc {
			return 1
		}
	case *syntax.BinaryArithm:
		l, _ := x.X.(*syntax.Word)
		r, _ := x.Y.(*syntax.Word)
		if l == nil || r == nil {
			return 0
		}
		k, err := strconv.Atoi(lit(r))
		if err != nil || k <= 0 {
			return 0
		}
		if x.Op == syntax.AddAssgn && lit(l) == name || x.Op == syntax.Add && lit(l) == name {
			return k
		}
	}
	return 0
}

// countedLoop: the loop's condition tests a number (while [ $i -lt 30 ]),
// a bound of its own.
func countedLoop(w *syntax.WhileClause) bool {
	found := false
	for _, c := range w.Cond {
		syntax.Walk(c, func(n syntax.Node) bool {
			switch x := n.(type) {
			case *syntax.BinaryTest:
				switch x.Op {
				case syntax.TsEql, syntax.TsNeq, syntax.TsGtr, syntax.TsGeq, syntax.TsLss, syntax.TsLeq:
					found = true
				}
			case *syntax.ArithmCmd, *syntax.ArithmExp:
				found = true
			case *syntax.Word:
				for _, a := range []string{"-lt", "-le", "-gt", "-ge", "-eq", "-ne"} {
					if lit(x) == a {
						found = true
					}
				}
			}
			return !found
		})
	}
	return found
}
