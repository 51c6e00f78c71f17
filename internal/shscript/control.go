package shscript

import (
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"mvdan.cc/sh/v3/syntax"

	"github.com/khook/khook/internal/importer"
	"github.com/khook/khook/words"
)

// ifClause: a condition on variables becomes when:, one the import can
// decide picks its branch, an existence check (`if ! kubectl get ns x`)
// carries the idempotent steps it guards.
func (t *translator) ifClause(c *syntax.IfClause) {
	if len(c.Cond) == 0 { // the final else
		t.branch(c.Then, "")
		return
	}
	if t.statusIf(c) { // kubectl get ns x; if [ $? -ne 0 ]; then …
		return
	}
	last := c.Cond[len(c.Cond)-1]
	if len(c.Cond) == 1 && c.Else == nil && t.defaulting(last, c.Then) {
		return
	}
	for _, s := range c.Cond[:len(c.Cond)-1] {
		t.stmt(s)
	}
	if !last.Negated && t.mayEndScript(c.Then) && t.isCheck(last) {
		// if kubectl get ingress web; then helm upgrade …; exit 0; fi: on
		// a fresh cluster the check finds nothing, and the script goes on
		t.checkOnly(last, "an existence check whose branch ends the script: the spec follows the path where it finds nothing")
		t.exitBranch(c, last)
		t.returnGuard(c, last)
		return
	}
	if t.isCheck(last) && (t.rivalElse > 0 || t.rivals(c)) {
		t.rivalBranches(c, last)
		return
	}
	probe := t.isProbe(c, last)
	if probe {
		t.checkOnly(last, "a probe whose failure makes the script install what it probes: the steps it guards are idempotent")
		t.info(last, t.text(last), "a probe, not a step (it would fail the run where the script installs instead); the steps it guards are carried, idempotent, whatever it would find")
	}
	if !probe && last.Negated && c.Else == nil && t.isCheck(last) && t.failsScript(c.Then) && !slices.ContainsFunc(c.Then, func(s *syntax.Stmt) bool { return t.callsTool(s, map[string]bool{}) }) {
		// if ! kubectl get secret auth; then echo …; exit 65; fi: a
		// precondition, no idempotent twin of a step (trial 46s70v's D2:
		// dropped, "faithful")
		t.checkOnly(last, "an existence check the script stops on where it finds nothing")
		t.notCarried(last, t.text(last), "a check the script stops on where it finds nothing, which khook does not run: a khook run goes on where the script would stop; make sure it is there before khook runs")
		return
	}
	if probe || t.isCheck(last) {
		t.checkBranches(c, last, probe)
		t.returnGuard(c, last)
		return
	}
	if t.labelGuard(c, last) {
		t.checkOnly(last, "a check of what the steps it guards set (label --overwrite): they are idempotent")
		t.branch(c.Then, "")
		return
	}
	if c.Else == nil && t.readsClusterValue(last) && t.failsScript(c.Then) {
		// n=$(kubectl get pods -l app=cert-manager -o json | jq …); if [
		// "$n" == "0" ]; then exit 1; fi: what the cluster holds, no
		// variable of the run; as a when: on "" the guard vanished
		// (trial 46s68j's D2)
		t.exitBranch(c, last)
		return
	}
	t.guessedArgs, t.absentFile, t.notInteger = false, "", ""
	cel, static, ok := t.condition(last)
	guessed, noInteger := t.guessedArgs, t.notInteger != ""
	if t.guessedArgs && static != nil && (*static && t.endsScript(c.Then) || !*static && c.Else != nil && len(c.Else.Cond) == 0 && t.endsScript(c.Else.Then)) {
		// [ $# -lt 1 ] && usage: with the script's arguments not given,
		// the guess would end the import; the run is given some
		ok, static = false, nil
	}
	switch {
	case ok && static != nil:
		t.untakenOnCheck(c, last, *static)
		t.untakenOnNoInteger(c, last, *static)
		if guessed {
			t.untakenOnArgs(c, last, *static)
		}
		t.decidedIf(c, last, *static)
		if !guessed && !noInteger { // those name it otherwise (untakenOnArgs, untakenOnNoInteger)
			t.untakenBranch(c, last, *static)
		}
	case ok:
		if t.machineChain(c) {
			t.machine++
			defer func() { t.machine-- }()
		}
		t.whenBranches(c, cel)
	default:
		t.undecidedIf(c, last)
		if t.checkCall(last) {
			t.returnGuard(c, last) // if ingress_nginx_present; then return 0; fi
		}
	}
}

// undecidedIf walks an if whose condition khook cannot decide: a
// command it runs is a step, a fallback for its failure is named, one of
// two alternatives is the user's choice, an exit branch is followed where
// it does not hold, anything else is carried and named.
func (t *translator) undecidedIf(c *syntax.IfClause, last *syntax.Stmt) {
	before := len(t.m.Steps)
	if t.callsTool(last, map[string]bool{}) || t.runsCommand(last) {
		// `if kubectl apply -f x; then …`: the command runs whatever it returns
		t.stmt(last)
		t.conditionFailure(c, last, t.m.Steps[before:])
		if len(t.m.Steps) > before && t.failureBranch(c, last, before) {
			return
		}
	}
	if len(t.m.Steps) == before && !readsState(last) && t.alternatives(c) {
		// [[ "$(kubectl api-versions)" == *openshift.io* ]]: one branch
		// or the other runs, never both; the user says which (46ze D2)
		t.whenBranches(c, t.choiceVar(last))
		return
	}
	if t.endsScript(c.Then) {
		t.exitBranch(c, last)
		return
	}
	if len(t.m.Steps) == before && t.notHeldAgain(c, last) {
		return
	}
	if len(t.m.Steps) == before && destroys(c) {
		// if ! kubectl … get pod -l app=multus … | grep -q Running; then
		// kubectl delete pod -l app=multus --force; fi (46zza's N9): a
		// delete the script does only where it holds is never every run's
		t.whenBranches(c, t.choiceVar(last))
		return
	}
	before, inThen := len(t.m.Steps), 0
	t.undecided(last, func() {
		t.branch(c.Then, "")
		inThen = len(t.m.Steps) - before
		if c.Else != nil {
			t.undecidedElse++
			t.ifClause(c.Else)
			t.undecidedElse--
		}
	})
	inElse := len(t.m.Steps) - before - inThen
	how := "the steps under it are carried as if it held"
	switch {
	case inThen == 0:
		how = "the steps of its else branch are carried as if it did not hold"
	case inElse > 0:
		how = "the steps of both its branches are carried, as if each ran"
	}
	if inThen+inElse > 0 {
		t.notCarried(last, "the condition "+t.text(last), "khook cannot decide it before the run; "+how+" (add a when: on a variable)")
	}
}

// rivalBranches: if kubectl get deploy web-blue | grep 2/2; then patch
// svc web to green; elif …; then patch it to blue: one branch runs, never
// both (46zzb's D3); the user says which, as for what the cluster serves.
func (t *translator) rivalBranches(c *syntax.IfClause, last *syntax.Stmt) {
	t.checkOnly(last, "a test of what the cluster holds when the script runs: the branches are alternatives, each under a when: on a required variable")
	cel := t.choiceVar(last)
	t.rivalElse++
	defer func() { t.rivalElse-- }()
	t.whenBranches(c, cel)
}

// destroys: a branch of c (its elif and else too) deletes, scales or
// uninstalls with helm or kubectl.
func destroys(c *syntax.IfClause) bool {
	found := false
	for b := c; b != nil && !found; b = b.Else {
		for _, s := range b.Then {
			syntax.Walk(s, func(n syntax.Node) bool {
				x, ok := n.(*syntax.CallExpr)
				if !ok || len(x.Args) < 2 || found {
					return !found
				}
				argv := litArgs(x.Args)
				switch toolName(argv[0]) {
				case "kubectl", "oc":
					pos := parseFlags(argv[1:], kubectlValued).pos
					found = len(pos) > 0 && (pos[0] == "delete" || pos[0] == "scale")
				case "helm":
					pos := parseFlags(argv[1:], helmValued).pos
					found = len(pos) > 0 && (pos[0] == "uninstall" || pos[0] == "delete" || pos[0] == "del" || pos[0] == "un" || pos[0] == "rollback")
				}
				return !found
			})
		}
	}
	return found
}

// notHeldAgain walks an if whose condition the spec took as not holding
// before, where its branch exits (if is_darwin; then …; exit 0; fi, later
// if is_darwin; then …: 46zj's D3): its branch's commands named, the else
// walked.
func (t *translator) notHeldAgain(c *syntax.IfClause, last *syntax.Stmt) bool {
	at, ok := t.notHeld[condKey(t.text(last))]
	if !ok {
		return false
	}
	m, vars := t.mark(), maps.Clone(t.vars)
	t.undecidedDepth++
	t.branch(c.Then, "")
	t.undecidedDepth--
	t.vars, t.exitGuard = vars, nil
	t.notCarriedSince(m, "under "+condKey(t.text(last))+", the condition at "+at.String()+" on whose path the script exits; the spec follows the path where it does not hold, so not here either")
	if c.Else != nil {
		t.ifClause(c.Else)
	}
	return true
}

// whenBranches carries c's branches, each under its when: (cel or its
// negation).
func (t *translator) whenBranches(c *syntax.IfClause, cel string) {
	t.branches(c.Cond[len(c.Cond)-1], []string{cel, "!(" + cel + ")"}, []func(){
		func() { t.branch(c.Then, cel) },
		func() {
			if c.Else != nil {
				before := len(t.m.Steps)
				t.when = append(t.when, "!("+cel+")")
				saveElse := t.whenElse
				if len(c.Else.Cond) == 0 {
					t.whenElse = t.cond + 1 // the branch walk's own level
				}
				t.ifClause(c.Else)
				t.when, t.whenElse = t.when[:len(t.when)-1], saveElse
				if len(c.Else.Cond) == 0 && len(t.m.Steps) == before && t.failsScript(c.Else.Then) {
					last := c.Else.Then[len(c.Else.Then)-1]
					if t.machine > 0 && t.readsMachine(c.Cond[len(c.Cond)-1]) {
						// if [[ $OSTYPE == darwin* ]]: no variable of the spec to give (trial 46s70k's D1)
						t.same(last, "else … "+t.text(last), machineExit)
					} else {
						t.info(last, "else … "+t.text(last), "the script stops here where none of the conditions before it hold, and the spec carries what follows as if one did: give the values that make one hold")
					}
				}
				switch g := t.exitGuard; {
				case len(c.Else.Cond) == 0 && t.endsScript(c.Else.Then) && (len(t.m.Steps) > before || !t.failsScript(c.Else.Then)):
					// else …; exit 1: what follows runs only where cel holds
					t.exitGuard, t.exitSet = []string{cel}, true
				case len(g) > 0: // an exit in it: what follows runs where cel holds or g does
					t.exitGuard = []string{"((" + cel + ") || (" + strings.Join(g, " && ") + "))"}
				}
			}
		},
	}, []bool{len(c.Then) > 0 && (exits(c.Then[len(c.Then)-1]) || t.endsScript(c.Then)),
		// else echo …; exit 1: its path sets nothing the rest reads (copy_cm_func.sh's
		// RESOURCE, set in if and elif: "" on the else path, the delete refused)
		c.Else != nil && len(c.Else.Cond) == 0 && t.failsScript(c.Else.Then)})
}

// alternatives: both branches of c may make steps (an else that is not
// another condition's, or one whose own branches do), and neither only
// ends the script.
func (t *translator) alternatives(c *syntax.IfClause) bool {
	steps := func(list []*syntax.Stmt) bool {
		return slices.ContainsFunc(list, t.mayStep) && !t.endsScript(list)
	}
	return c.Else != nil && steps(c.Then) && steps(c.Else.Then)
}

// readsState: cond asks helm or kubectl about objects (helm status,
// kubectl get): what steps change, so no variable can stand for it. What
// the cluster is (api-versions, version, the context) is not state.
func readsState(cond *syntax.Stmt) bool {
	state := false
	syntax.Walk(cond, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if !ok || len(c.Args) == 0 || state {
			return !state
		}
		if name := toolName(lit(c.Args[0])); name != "" || toolParam(c.Args[0]) {
			state = true
			for _, a := range c.Args[1:] {
				switch lit(a) {
				case "api-versions", "api-resources", "version", "cluster-info", "config":
					state = false
				}
			}
		}
		return !state
	})
	return state
}

// choiceVar declares the variable that decides a condition only the run
// can (what the cluster serves, a command's output): required, so the
// user says which branch their cluster takes; the CEL that reads it.
func (t *translator) choiceVar(cond *syntax.Stmt) string {
	return t.choiceOf(cond, cond.Negated, strings.TrimSuffix(t.text(cond), ";"), t.loc(cond))
}

// choiceOf is choiceVar of what n says (text, at at): a condition, or a
// case's pattern. One variable per line and values it reads there: the
// same test in a function called for argocd, then for argo-rollouts, is
// two facts of the cluster, one the same values walked again (trial
// 46s69s's D2: one IF_L97 decided both namespaces).
func (t *translator) choiceOf(n syntax.Node, negated bool, text string, at importer.Loc) string {
	vals := t.condValues(n)
	key := at.String() + "\x00" + text + "\x00" + strings.Join(vals, "\x00")
	name := t.choices[key]
	if name == "" {
		name = t.choiceName(n, negated)
		if t.choices == nil {
			t.choices = map[string]string{}
		}
		t.choices[key] = name
		with := ""
		if len(vals) > 0 {
			with = " with " + t.masked(strings.Join(vals, ", "))
		}
		t.m.Vars = append(t.m.Vars, &importer.Var{Name: name, Required: true, From: at, Example: "true",
			Description: `"true" where ` + text + ` holds` + with + ` (` + at.String() + `), else "false": the script decides it when it runs`})
	}
	// named by the variable, so that pruneVars drops the note with it
	// where no step is under its when: (branches that only print)
	t.info(n, name, "the script decides "+text+" when it runs, khook before: each branch is carried under a when: on this required variable (\"true\" where it would hold when khook runs)")
	return "vars." + name + ` == "true"`
}

// choiceName is a name no variable has for the choice of n: IF_ and its
// word, as known at import (IF_ARGOCD of ns_exists "$ns" for argocd),
// else IF_L and its line, IF_L97_2 for another choice at that line.
func (t *translator) choiceName(n syntax.Node, negated bool) string {
	name := "IF_" + condWord(n, t.condValue)
	if negated && name != "IF_" {
		name = "IF_NOT_" + name[3:] // ! … | grep -q Running: "true" where it is not
	}
	taken := func(name string) bool { return t.m.Var(name) != nil || t.vars[strings.TrimPrefix(name, "IF_")] != nil }
	if name == "IF_" || taken(name) {
		name = "IF_L" + strconv.Itoa(int(n.Pos().Line()))
	}
	for i, base := 2, name; taken(name); i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	return name
}

// condValue is the value of a variable a condition reads, where it is
// known at import and no secret's.
func (t *translator) condValue(name string) (string, bool) {
	v, set, ok := t.knownValue(name)
	if !set || !ok || secretLooking(name) || t.masked(v) != v {
		return "", false
	}
	return v, true
}

// condValues are the variables n reads with their values known at import
// (ns=argocd, $1=argocd), in the order it reads them.
func (t *translator) condValues(n syntax.Node) []string {
	var out []string
	syntax.Walk(n, func(n syntax.Node) bool {
		pe, ok := n.(*syntax.ParamExp)
		if !ok || pe.Param == nil {
			return true
		}
		name := pe.Param.Value
		v, ok := t.condValue(name)
		if !ok {
			return true
		}
		if _, err := strconv.Atoi(name); err == nil {
			name = "$" + name
		}
		if s := name + "=" + v; !slices.Contains(out, s) {
			out = append(out, s)
		}
		return true
	})
	return out
}

// condWord names a condition by its last literal word that is neither a
// command, a flag nor a boolean (openshift.io in [[ "$(kubectl
// api-versions)" == *"openshift.io"* ]]), as a variable name; "" when
// there is none. A variable whose value is known (value) is named by it.
func condWord(cond syntax.Node, value func(string) (string, bool)) string {
	skip := map[syntax.Node]bool{}
	last := ""
	syntax.Walk(cond, func(n syntax.Node) bool {
		var w string
		known := false
		switch x := n.(type) {
		case *syntax.Redirect:
			return false // &> /dev/null says nothing of the condition
		case *syntax.CallExpr:
			if len(x.Args) > 0 {
				skip[x.Args[0]] = true
			}
		case *syntax.Word:
			if skip[x] || strings.HasPrefix(lit(x), "-") {
				return false
			}
		case *syntax.ParamExp:
			if x.Param == nil || x.Exp != nil || x.Slice != nil || x.Repl != nil || x.Length || x.Index != nil {
				break
			}
			if v, ok := value(x.Param.Value); ok {
				w, known = v, true // its value, not its name
			}
		case *syntax.Lit:
			w = x.Value
		case *syntax.SglQuoted:
			w = x.Value
		}
		w = strings.Trim(strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z':
				return r - 'a' + 'A'
			case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
				return r
			}
			return '_'
		}, w), "_")
		if strings.ContainsAny(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") && w != "TRUE" && w != "FALSE" && len(w) <= 32 {
			last = w
		}
		return !known
	})
	for strings.Contains(last, "__") {
		last = strings.ReplaceAll(last, "__", "_")
	}
	return last
}

func (t *translator) branch(list []*syntax.Stmt, cel string) {
	if cel == "" {
		t.cond++
		t.stmts(list)
		t.cond--
		return
	}
	// Under a condition khook decides at run time, an exit 0 or return
	// ends the branch, and what follows it runs only when cel does not hold.
	saveCond, before := t.cond, len(t.m.Steps)
	t.when, t.cond = append(t.when, cel), 0
	t.stmts(list)
	t.when, t.cond = t.when[:len(t.when)-1], saveCond
	if g := t.exitGuard; len(g) > 0 { // an exit deeper in: the rest runs where cel does not hold or g does
		t.exitGuard = []string{unless(cel, g)}
	}
	if t.stopped {
		switch {
		case t.failed && len(t.m.Steps) == before:
		case t.returned && t.inFunc && t.files == t.fnFiles: // not a sourced file's return, which ends the source
			// return ends the function: the rest of its body, also past
			// the if or the existence check the return is in, runs only
			// where cel does not hold (trial 46s69c's D3: the create
			// after fi carried always); callFunc drops it at the call
			t.exitGuard, t.retGuard = []string{"!(" + cel + ")"}, true
		case t.returned:
			t.guard = "!(" + cel + ")"
		default:
			// also a failure after steps (scale to 0, then exit 1, 46zzb's
			// D1): bash runs nothing after them, in no enclosing list
			t.exitGuard, t.exitSet = []string{"!(" + cel + ")"}, true
		}
		t.stopped, t.failed, t.returned = false, false, false
	}
}

// decidedIf walks the branch of c the import decided (static): the
// script's path, its exit the script's.
func (t *translator) decidedIf(c *syntax.IfClause, last *syntax.Stmt, static bool) {
	before := len(t.m.Steps)
	switch {
	case static && t.supplied(last, c.Then):
		return // the file is given: the script goes on past its guard
	case static:
		t.stmts(c.Then)
		t.stoppedAt(last, t.text(last))
	case c.Else != nil && len(c.Else.Cond) == 0 && t.absentFile == "":
		// the final else, walked as the script's path too (trial 46s70u's
		// D1: else cleanup, which exits, walked as a conditional list, so
		// the install after the fi ran always); not where a file absent
		// at import decided it (if [ -f .env.aws ]; … else exit 1): the
		// run may have it
		t.stmts(c.Else.Then)
		t.stoppedAt(last, t.text(last))
	case c.Else != nil:
		t.ifClause(c.Else)
	default:
		return
	}
	t.keepOnCheck(last, before)
}

// unless is one condition: where cel does not hold, or each of g does.
func unless(cel string, g []string) string {
	return "(!(" + cel + ") || (" + strings.Join(g, " && ") + "))"
}

// callsTool: helm or kubectl runs anywhere in n, also through a function
// of the script (grep -q x <<<"$(v vault status)", v running kubectl exec).
func (t *translator) callsTool(n syntax.Node, seen map[string]bool) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if found || !ok || len(c.Args) == 0 {
			return !found
		}
		name := lit(c.Args[0])
		if f := t.funcs[name]; f != nil && !seen[name] {
			seen[name] = true
			found = t.callsTool(f.decl.Body, seen)
		} else {
			found = isTool(name) || toolParam(c.Args[0])
		}
		return !found
	})
	return found
}

// checkBranches walks an if on an existence check (or a probe): both
// branches are carried; what runs only when the check finds something is
// said (whenFound), and an apply only where a Secret is absent keeps it.
func (t *translator) checkBranches(c *syntax.IfClause, last *syntax.Stmt, probe bool) {
	if !probe {
		t.checkOnly(last, "an existence check: the steps it guards are idempotent")
	}
	t.checks++
	defer func() { t.checks-- }()
	vars, keys := maps.Clone(t.vars), maps.Clone(t.secretKeys)
	before, cmds := len(t.m.Steps), len(t.m.Commands)
	retGuard, exitSet := t.retGuard, t.exitSet
	t.branch(c.Then, "")
	thenCmds, elseCmds := slices.Clone(t.m.Commands[min(cmds, len(t.m.Commands)):]), []importer.Command(nil)
	if t.retGuard && !retGuard && t.exitSet == exitSet && !last.Negated {
		// if kubectl get secret s; then read r; [ "$r" != y ] && return;
		// kubectl delete secret s; fi; kubectl create secret s: on a fresh
		// cluster the rest of the function runs whatever r is; where s is
		// found, only when the answer lets it (trial 46s69c's D3): no
		// when:, but skipIf: exists on what makes s (callFunc)
		t.exitGuard, t.retGuard = nil, false
		t.keeps = append(t.keeps, keep{check: last, from: len(t.m.Steps), depth: t.depth})
	}
	then := t.m.Steps[before:len(t.m.Steps):len(t.m.Steps)]
	thenVars, thenKeys := t.vars, t.secretKeys
	var other []*importer.Step
	if c.Else != nil {
		before = len(t.m.Steps)
		t.vars, t.secretKeys = maps.Clone(vars), keys // the else never ran the then's assignments
		cmds = len(t.m.Commands)
		t.ifClause(c.Else)
		other, elseCmds = t.m.Steps[before:], slices.Clone(t.m.Commands[min(cmds, len(t.m.Commands)):])
	}
	if probe {
		return
	}
	found, absent := then, other // the branch that runs where the check finds it
	if last.Negated {
		found, absent = other, then
		thenCmds = elseCmds
		t.vars, thenVars = thenVars, t.vars
		t.secretKeys = thenKeys
	}
	t.checkSets(last, c.Else == nil, vars, thenVars)
	t.whenFound(last, found)
	t.keepIfExists(last, absent, "as the script creates it only where the check finds nothing")
	t.absentOther(last, absent)
	t.foundChanges(last, thenCmds, absent)
	t.absentVars(last, thenVars)
}

// foundChanges: where the check finds the object the script changes it
// in place (adds a host to a shared Ingress with jq, then kubectl apply:
// not carried), and where it finds none a step makes it: that step puts
// the object back as a fresh cluster gets it on every run, dropping what
// the script added before (trial 46s70e's D2: each tenant's run of
// easy-kanban's deploy-pg.sh dropping the other tenants' hosts, unsaid).
func (t *translator) foundChanges(check *syntax.Stmt, found []importer.Command, absent []*importer.Step) {
	name := t.checkedName(check)
	var at []string
	for _, c := range found {
		if f := strings.Fields(c.Text); c.Fate == importer.FateNotCarried && !slices.ContainsFunc(f, func(w string) bool { return changesNothing[w] }) {
			at = append(at, c.Loc.String())
		}
	}
	if name == "" || len(at) == 0 {
		return
	}
	for _, st := range absent {
		if b, err := yaml.Marshal(st.Out); err == nil && st.Out.Apply != nil && (strings.Contains(string(b), name) || t.appliesNamed(st.Out.Apply, name)) {
			t.info(check, t.text(check.Cmd), "where this finds "+name+" the script changes it in place ("+strings.Join(slices.Compact(at), ", ")+", not carried) and keeps what it holds; khook runs step "+st.Out.Name+" always, so each run applies "+name+" as a fresh cluster gets it, dropping what earlier runs added to it: where several runs share "+name+", write every run's part into the step by hand")
		}
	}
}

// changesNothing are the kubectl subcommands that change no object of
// the cluster (a command not carried is a write otherwise: echo "$X" |
// kubectl apply -f - is named by its echo).
var changesNothing = set("exec", "cp", "port-forward", "logs", "wait", "rollout", "get", "describe")

// absentOther: a step the script runs only where the check finds
// nothing that does not make what the check looks for (if ! kubectl get
// deployment aws-load-balancer-controller; then kubectl apply -f
// cert-manager.yaml; fi) is no idempotent twin of the check: khook runs
// it always, said at the check (trial 46s68k's D1: silent, "faithful").
func (t *translator) absentOther(check *syntax.Stmt, absent []*importer.Step) {
	name := t.checkedName(check)
	if name == "" {
		return
	}
	for _, st := range absent {
		if h := st.Out.Helm; h != nil && name != h.Release && name != h.Namespace {
			// if ! kubectl get ingressclass nginx; then helm upgrade
			// --install ingress-nginx …: the release's name holds the
			// checked one, yet another install may have made it (trial
			// 46s70m's D1: silent, "faithful", by the substring below)
			t.info(check, t.text(check.Cmd), "the script installs step "+st.Out.Name+" only where this finds no "+name+", and leaves what is there alone (another controller's, an install of its own); khook runs the helm step always, over whatever is installed: put it under a when: on a variable if the cluster may have it already")
			continue
		}
		b, err := yaml.Marshal(st.Out)
		if a := st.Out.Apply; err == nil && strings.Contains(string(b), name) && a != nil && slices.ContainsFunc(a.Manifests, func(m importer.OutSource) bool { return m.URL != "" }) {
			// if ! kubectl get ns cert-manager; then kubectl apply -f
			// URL: a bundle khook does not read, put over whatever is
			// installed (trial 46s69b's D3: a v1.13.0 bundle over a newer
			// cert-manager, said nowhere)
			t.info(check, t.text(check.Cmd), "the script applies step "+st.Out.Name+" only where this finds no "+name+", and leaves one that is installed alone; khook applies it always, over whatever is installed (another version, a Helm-managed install): put it under a when: on a variable if the cluster may have it already")
			continue
		}
		if err != nil || strings.Contains(string(b), name) || st.Out.Delete != nil || t.appliesNamed(st.Out.Apply, name) {
			continue
		}
		t.info(check, t.text(check.Cmd), "the script runs step "+st.Out.Name+" only where this finds no "+name+", which that step does not make; khook runs it always: put it under a when: on a variable if it must not run where "+name+" exists")
	}
}

// appliesNamed: a file the apply step reads holds an object named name
// (if ! kubectl get namespace demo; then kubectl apply -f ns.yaml; fi,
// ns.yaml the Namespace demo): the create-if-missing idiom, not another
// object (trial 46s70e's D3: "which that step does not make", false).
func (t *translator) appliesNamed(a *importer.OutApply, name string) bool {
	if a == nil {
		return false
	}
	for _, src := range a.Manifests {
		text, _ := t.sourceText(src)
		dec := yaml.NewDecoder(strings.NewReader(text))
		for {
			var obj struct{ Metadata struct{ Name string } }
			if dec.Decode(&obj) != nil {
				break
			}
			if obj.Metadata.Name == name {
				return true
			}
		}
	}
	return false
}

// returnGuard is a function's `if kubectl get X; then return 0; fi`: the
// steps after it in the function run only where X is absent. With exit
// (`if present; then echo skip; exit 0; fi`) the steps after it anywhere
// in the script do: depth 0, said as the walk of the script ends.
type returnGuard struct {
	at            importer.Loc // the check's, kept: an exit's is said after its file's walk
	what          string
	depth, before int // the function's depth in t.callers; the steps before it
	exits         bool
}

// returnGuard records an existence check (or a call of a function that
// only checks: checkCall) whose branch returns from the function being
// walked or ends the script.
func (t *translator) returnGuard(c *syntax.IfClause, last *syntax.Stmt) {
	n := len(c.Then)
	if last.Negated || c.Else != nil || n == 0 {
		return
	}
	switch end, _ := c.Then[n-1].Cmd.(*syntax.CallExpr); {
	case end != nil && len(end.Args) > 0 && lit(end.Args[0]) == "exit" && (len(end.Args) == 1 || lit(end.Args[1]) == "0"):
		// `if present; then echo skip; exit 0; fi` (trial 46s69s's D4:
		// the skip dropped, said nowhere); not an exit 1, which refuses
		// the cluster (if detect_traefik; then exit 1): named elsewhere
		t.returnGuards = append(t.returnGuards, returnGuard{at: t.loc(last), what: t.text(last.Cmd), before: len(t.m.Steps), exits: true})
	case len(t.callers) > 0 && strings.HasPrefix(t.text(c.Then[n-1]), "return"):
		t.returnGuards = append(t.returnGuards, returnGuard{at: t.loc(last), what: t.text(last.Cmd), depth: len(t.callers), before: len(t.m.Steps)})
	}
}

// checkCall: s calls a function of the script that only looks
// (ingress_nginx_present: kubectl get … || return 1; return 0): an
// existence check under the script's own name for it (trial 46s69s's D4:
// the install it skips carried, nothing said).
func (t *translator) checkCall(s *syntax.Stmt) bool {
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 || t.funcs[lit(c.Args[0])] == nil {
		return false
	}
	looks, ok := t.onlyLooks(&syntax.Stmt{Cmd: c}, map[string]bool{})
	return looks && ok
}

// onlyLooks: s runs helm or kubectl checks (looks), and nothing but them,
// tests, returns and messages (ok).
func (t *translator) onlyLooks(s *syntax.Stmt, seen map[string]bool) (looks, ok bool) {
	if t.isCheck(s) {
		return true, true
	}
	if c, isCall := s.Cmd.(*syntax.CallExpr); isCall && len(c.Args) > 1 && t.toolOf(c.Args[0]) == "helm" {
		// helm -n "$ns" status "$rel": flags before the verb (helm_release_exists)
		pos := parseFlags(litArgs(c.Args[1:]), helmValued).pos
		reads := len(pos) > 0 && helmReads[pos[0]]
		return reads, reads
	}
	list := func(stmts ...*syntax.Stmt) {
		for _, s := range stmts {
			l, o := t.onlyLooks(s, seen)
			looks, ok = looks || l, ok && o
		}
	}
	ok = true
	switch x := s.Cmd.(type) {
	case *syntax.Block:
		list(x.Stmts...)
	case *syntax.BinaryCmd:
		list(x.X, x.Y)
	case *syntax.IfClause:
		for b := x; b != nil; b = b.Else {
			list(b.Cond...)
			list(b.Then...)
		}
	case *syntax.TestClause:
	case *syntax.DeclClause:
		ok = !substitutes(x)
	case *syntax.CallExpr:
		name := ""
		if len(x.Args) > 0 {
			name = lit(x.Args[0])
		}
		switch f := t.funcs[name]; {
		case len(x.Args) == 0, name == "return", name == "echo", name == "printf", name == "true", name == "false", name == ":", name == "[", name == "test":
			ok = !substitutes(x)
		case f != nil:
			if !seen[name] { // a function called twice is read once
				seen[name] = true
				list(f.decl.Body)
			}
		default:
			ok = false
		}
	default:
		ok = false
	}
	return looks, ok
}

// substitutes: n runs a command of its own ($(…), `…`, <(…)).
func substitutes(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			found = true
		}
		return !found
	})
	return found
}

// returnedGuards says, as a function's walk ends, the steps its return
// guards skip where what they check exists: khook applies them always,
// over the object installed (trial 46s69b's D3: matomo's ClusterIssuer
// overwritten where the script returns early, said nowhere).
func (t *translator) returnedGuards() {
	t.sayGuards(0, func(g returnGuard) bool { return g.depth >= len(t.callers) })
}

// sayGuards says the guards recorded since from that ends picks, and
// forgets them.
func (t *translator) sayGuards(from int, ends func(returnGuard) bool) {
	from = min(from, len(t.returnGuards))
	kept := slices.Clone(t.returnGuards[:from])
	for _, g := range t.returnGuards[from:] {
		if !ends(g) {
			kept = append(kept, g)
			continue
		}
		var skipped []string
		for _, st := range t.m.Steps[min(g.before, len(t.m.Steps)):] {
			if a := st.Out.Apply; a == nil && st.Out.Helm == nil || a != nil && len(a.Manifests) == 1 && strings.Count(a.Manifests[0].Inline, "kind:") == 1 && strings.Contains(a.Manifests[0].Inline, "kind: Namespace") {
				continue // a namespace made again is the same namespace
			}
			if !g.exits {
				t.m.Info = append(t.m.Info, importer.Note{Loc: g.at, What: g.what, Why: "where this finds something the script returns, and step " + st.Out.Name + " after it does not run; khook runs it always, over what is installed: put it under a when: on a variable if the cluster may have it already"})
			}
			skipped = append(skipped, st.Out.Name)
		}
		if g.exits && len(skipped) > 0 {
			them, do := words.Plural(len(skipped), "it", "them"), words.Plural(len(skipped), "does", "do")
			t.m.Info = append(t.m.Info, importer.Note{Loc: g.at, What: g.what, Why: "where this finds something the script stops (exit), and " + stepList(skipped) + " after it " + do + " not run; khook runs " + them + " always, over what is installed: put " + them + " under a when: on a variable if the cluster may have " + them + " already"})
		}
	}
	t.returnGuards = kept
}

// stepList names steps: "step a", "steps a, b and c", past five "and N more".
func stepList(names []string) string {
	if len(names) == 1 {
		return "step " + names[0]
	}
	if len(names) > 5 {
		return "steps " + strings.Join(names[:5], ", ") + " and " + strconv.Itoa(len(names)-5) + " more"
	}
	return "steps " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// checkedName is the one object name a kubectl get/describe or helm
// status check names ("" when it names none, or several).
func (t *translator) checkedName(s *syntax.Stmt) string {
	if p, ok := s.Cmd.(*syntax.BinaryCmd); ok && p.Op == syntax.Pipe {
		return ""
	}
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok {
		return ""
	}
	x := t.newCmd(s, c)
	if !x.ok || len(x.args) < 3 {
		return ""
	}
	var pos []string
	switch toolName(x.args[0]) {
	case "kubectl":
		f := parseFlags(x.args[1:], kubectlValued)
		if len(f.pos) < 2 || f.pos[0] != "get" && f.pos[0] != "describe" || f.get("l", "selector") != "" {
			return ""
		}
		pos = f.pos[1:]
		if len(pos) == 1 {
			_, n, ok := strings.Cut(pos[0], "/")
			if !ok {
				return ""
			}
			pos = []string{"", n}
		}
	case "helm":
		f := parseFlags(x.args[1:], helmValued)
		if len(f.pos) != 2 || f.pos[0] != "status" {
			return ""
		}
		pos = f.pos
	}
	if len(pos) != 2 || strings.Contains(pos[1], "${") || strings.Contains(pos[1], ",") {
		return ""
	}
	return pos[1]
}

// absentVars: after an existence check the script's variables are those
// of a fresh cluster's path, where it finds nothing (a password it
// generates), not those of a re-run's (the password read back from the
// Secret the release itself makes: trial 46s67i's D1); found are the
// other branch's. Each that differs and that the spec has is said once
// the spec is known (sayAbsentVars).
func (t *translator) absentVars(check *syntax.Stmt, found map[string]*shVar) {
	set := &absentSet{check: check, at: t.loc(check), text: t.text(check), fresh: map[string]*shVar{}, read: map[string]bool{}}
	for name, v := range found {
		if t.vars[name] != v {
			set.fresh[name] = t.vars[name]
		}
	}
	if len(set.fresh) > 0 {
		t.absentSets = append(t.absentSets, set)
	}
}

// absentSet is what an existence check's fresh-cluster path sets
// otherwise than the path where it finds the object: each variable's
// value on the path the spec follows, and which of them a command after
// the check read (not echo or printf).
type absentSet struct {
	check *syntax.Stmt
	at    importer.Loc
	text  string
	fresh map[string]*shVar
	read  map[string]bool
	said  bool
}

// readAfterCheck marks name read with v, its value on a check's
// fresh-cluster path.
func (t *translator) readAfterCheck(name string, v *shVar) {
	if t.printing {
		return
	}
	for _, set := range t.absentSets {
		if f, ok := set.fresh[name]; ok && f == v {
			set.read[name] = true
		}
	}
}

// sayAbsentVars says, at each existence check, what of the spec has the
// fresh-cluster path's values: a variable of the spec to give the value
// the script reads on a cluster where the check finds the object, and a
// value the steps have as written; never a variable only the other path
// reads (trial 46s70e's D2: "give them that value" of CURRENT_INGRESS_JSON,
// no variable of the spec).
func (t *translator) sayAbsentVars(m *importer.Model) {
	for _, set := range t.absentSets {
		var give, written []string
		for name, v := range set.fresh {
			switch {
			case v != nil && v.decl != nil && m.Var(v.decl.Name) != nil:
				give = append(give, v.decl.Name)
			case m.Var(name) != nil:
				// a test after the check reads it, made a when: on a
				// variable of that name (kcindia's uninstall.sh:101
				// SKIP_ISTIO: left unsaid by a test's read not counting)
				give = append(give, name)
			case v != nil && v.decl == nil && set.read[name]:
				written = append(written, name)
			}
		}
		if set.said || len(give)+len(written) == 0 {
			continue
		}
		set.said = true
		slices.Sort(give)
		slices.Sort(written)
		var said []string
		if len(written) > 0 {
			said = append(said, "its steps have "+strings.Join(written, ", ")+" as that path sets "+words.Plural(len(written), "it", "them")+", where the script uses what it reads from the object it finds: edit those steps by hand for a cluster that has it")
		}
		if len(give) > 0 {
			said = append(said, strings.Join(give, ", ")+" as that path sets "+words.Plural(len(give), "it", "them")+"; where it finds the object the script reuses what it reads there instead, so give "+words.Plural(len(give), "it", "them")+" that value on such a cluster")
		}
		m.Info = append(m.Info, importer.Note{Loc: set.at, What: set.text, Why: "the spec follows a fresh cluster's path, where it finds nothing: " + strings.Join(said, "; ")})
	}
}

// supplied: cond stops the script with a failure (then) because a file
// of the checkout is missing that the script does not make (a licence,
// an .env the README has the user place): the script asks for it, as for
// a required variable, so the walk goes on where it is there.
func (t *translator) supplied(cond *syntax.Stmt, then []*syntax.Stmt) bool {
	if t.absentFile == "" || !t.failsScript(then) {
		return false
	}
	if t.supplies == nil {
		t.supplies = map[string]importer.Loc{}
	}
	t.supplies[t.abs(t.absentFile)] = t.loc(cond)
	t.info(cond, t.text(cond), "the script stops unless "+t.absentFile+" is there, and it is not at import: the spec is carried as where it is (put it there before khook runs; a step that reads it is named)")
	return true
}

// stoppedAt says where a condition decided at import ends the script
// with a failure ([ ! -d "$ROOT/envs/x" ] && exit 1, the directory not
// there at import): bash stops there, so nothing after it is carried.
func (t *translator) stoppedAt(cond syntax.Node, what string) {
	if !t.stopped || !t.failed || t.cond != 0 {
		return
	}
	fix := "import where it holds otherwise (the file there, the variable set)"
	if strings.HasPrefix(what, "case ") {
		fix = "import with the value of a branch that goes on (the script's arguments after its name, the variable set)"
	}
	if strings.Contains(what, "$#") {
		fix = "it counts the arguments of a call: give the call the arguments it checks for"
	}
	if len(t.callers) > 1 {
		// _run exits one argument short, called by run, called at the
		// script's line to fix (trial 46s67j's D2: only the innermost named)
		fix += " (the script's call is at " + t.callers[0].at.String() + ")"
	}
	n := t.noteAt(cond, what, "decided at import, and the script stops there with a failure (exit): what comes after it is not carried; "+fix)
	if t.splitting > 0 {
		// said by splitOnAlts where every value stops here
		t.splitStops = append(t.splitStops, n)
		return
	}
	t.m.NotCarried = append(t.m.NotCarried, n)
}

// endsScript: the branch ends with exit (volcano's `--quit`: clean up,
// exit 0), or with a call of a function of the script that ends with one
// (rollback() { kubectl scale …; exit 1; }, 46zzb's D1): bash never
// comes back from it, so what follows it in the list (scaleBack; break:
// 46zzg's D1) never runs.
func (t *translator) endsScript(list []*syntax.Stmt) bool {
	return t.exitsList(list, map[string]bool{})
}

// exitsList: a statement of list ends the script.
func (t *translator) exitsList(list []*syntax.Stmt, seen map[string]bool) bool {
	return slices.ContainsFunc(list, func(s *syntax.Stmt) bool { return t.exitsScript(s, seen) })
}

// exitsScript: s is exit, a { …; exit 1; } block (check || { echo …;
// exit 1; }: trial 46s67k's D1, the import ended there), or a call of a
// function whose body ({ …; }, not a subshell's) ends the script.
func (t *translator) exitsScript(s *syntax.Stmt, seen map[string]bool) bool {
	if b, ok := s.Cmd.(*syntax.Block); ok {
		return t.exitsList(b.Stmts, seen)
	}
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 {
		return false
	}
	name := lit(c.Args[0])
	f := t.funcs[name]
	if name == "exit" || f == nil || seen[name] {
		return name == "exit"
	}
	seen[name] = true
	b, ok := f.decl.Body.Cmd.(*syntax.Block)
	return ok && t.exitsList(b.Stmts, seen)
}

// mayEndScript: the branch ends with exit, or exits under a condition of
// its own (if [[ ! $REPLY =~ ^[Yy]$ ]]; then exit 0; fi, [ -z "$X" ] &&
// exit 0, a case branch): not a command's failure (kubectl delete x ||
// exit 1), which a step's own failure stands for. Under an existence
// check (read -p "Reinstall?"; exit 0 unless y; kubectl delete …: 46zza's
// D8) the deletes are not on the script's path on a fresh cluster, nor
// on a re-run answered as by default.
func (t *translator) mayEndScript(list []*syntax.Stmt) bool {
	if t.endsScript(list) {
		return true
	}
	found := false
	for _, s := range list {
		syntax.Walk(s, func(n syntax.Node) bool {
			switch x := n.(type) {
			case *syntax.FuncDecl, *syntax.Subshell, *syntax.CmdSubst, *syntax.ProcSubst:
				return false
			case *syntax.IfClause:
				for b := x; b != nil; b = b.Else {
					found = found || t.mayEndScript(b.Then)
				}
				return false
			case *syntax.CaseClause:
				for _, it := range x.Items {
					found = found || t.mayEndScript(it.Stmts)
				}
				return false
			case *syntax.BinaryCmd:
				found = found || isTest(x.X) && t.endsScript([]*syntax.Stmt{x.Y})
			}
			return !found
		})
	}
	return found
}

// isTest: s is [[ … ]], [ … ] or test ….
func isTest(s *syntax.Stmt) bool {
	if _, ok := s.Cmd.(*syntax.TestClause); ok {
		return true
	}
	c, ok := s.Cmd.(*syntax.CallExpr)
	return ok && len(c.Args) > 0 && (lit(c.Args[0]) == "[" || lit(c.Args[0]) == "test")
}

// exitBranch is an if khook cannot decide whose branch ends the script:
// the spec follows the script's path on (where it does not hold), and the
// branch's commands are named not carried; carried "as if it held", the
// steps after its exit would contradict it.
func (t *translator) exitBranch(c *syntax.IfClause, cond *syntax.Stmt) {
	if t.notHeld == nil {
		t.notHeld = map[string]importer.Loc{}
	}
	if _, seen := t.notHeld[condKey(t.text(cond))]; !seen && !cond.Negated {
		t.notHeld[condKey(t.text(cond))] = t.loc(cond)
	}
	var status *syntax.Stmt
	if len(c.Cond) == 1 {
		status = t.statusOf(c, cond)
	}
	m := t.mark()
	vars := maps.Clone(t.vars) // the path on never ran the branch's assignments
	t.undecidedDepth++
	t.branch(c.Then, "")
	t.undecidedDepth--
	t.vars, t.exitGuard = vars, nil
	why := "under " + t.text(cond) + ", which khook cannot decide before the run, and after which the script exits: the spec follows the path where it does not hold; do this by hand when it does"
	if t.isCheck(cond) {
		then := "and then exits"
		if !t.endsScript(c.Then) {
			then = "where it may exit first (on an answer or a test of its own)"
		}
		why = "what the script does when " + t.text(cond) + " finds something, " + then + "; the spec follows a fresh cluster's path, where it finds nothing: do this by hand on a cluster where it does"
	}
	dropped := t.notCarriedSince(m, why)
	switch {
	case len(dropped) == 0 && t.outsideFailure(cond, status, c.Then):
		// X=$(nslookup "$HOST"); if [ $? -gt 0 ]; then exit 0; fi, and
		// if ! curl …; then exit 0; fi: the script stops where the check
		// fails, whatever its exit status (trial 46s70h's D1: not named)
		what := t.text(cond)
		if status != nil {
			what = condKey(t.text(status)) + "; " + condKey(what)
		}
		t.notCarried(cond, what, outsideCheck)
	case len(dropped) > 0 || !t.failsScript(c.Then):
	case t.guardsOutside(cond):
		// if ! s5cmd ls "s3://$BUCKET"; then echo …; exit 1; fi (trial 46ze's
		// D7): the script stops where the check fails; khook goes on
		t.notCarried(cond, t.text(cond), outsideCheck)
	case t.contextGuard(cond, true):
	case t.readsClusterValue(cond):
		// cfg=$(kubectl get cm …); [[ "$cfg" != *x* ]] && exit 1 (trial 46zh's D4)
		t.notCarried(cond, t.text(cond), clusterCheck)
	}
	if c.Else != nil {
		t.ifClause(c.Else)
	}
}

// outsideCheck is why a check outside the cluster that the script stops on
// is not carried.
const outsideCheck = "a check the script stops on when it fails, which khook does not run: a khook run goes on where the script would stop; check it before khook runs"

// statusOf is the statement whose failure cond tests ([ $? -gt 0 ]
// right after X=$(nslookup …)), nil for any other condition.
func (t *translator) statusOf(c syntax.Command, cond *syntax.Stmt) *syntax.Stmt {
	if prev, failed := t.statusTest(c, cond); failed {
		return prev
	}
	return nil
}

// statusTest is the statement whose exit status cond, the condition of
// c, tests, and whether it tests its failure ([ $? -ne 0 ], [ $? -eq 1 ])
// or its success ([ $? -eq 0 ], [ $? -ne 1 ]); nil for any other.
func (t *translator) statusTest(c syntax.Command, cond *syntax.Stmt) (prev *syntax.Stmt, failed bool) {
	if cond.Negated || t.lastStmt[0] == nil || t.lastStmt[0].Cmd != c || t.lastStmt[1] == nil {
		return nil, false
	}
	switch text := t.text(cond.Cmd); {
	case failedTest.MatchString(text):
		return t.lastStmt[1], true
	case passedTest.MatchString(text):
		return t.lastStmt[1], false
	}
	return nil, false
}

// statusCheck is the existence check whose exit status cond tests, the
// statement before it (kubectl get ns x >/dev/null 2>&1) or the one
// command of its substitution (X=$(kubectl get ns x)), and whether the
// test is of its failure: `if [ $? -ne 0 ]` after it is `if ! kubectl
// get ns x` (trial 46s70l's D1: the condition named not carried, with
// advice to add a when: on a variable, the import partial).
func (t *translator) statusCheck(c syntax.Command, cond *syntax.Stmt) (check *syntax.Stmt, failed bool) {
	prev, failed := t.statusTest(c, cond)
	if prev == nil || prev.Negated {
		return nil, false
	}
	check = prev
	if a, ok := prev.Cmd.(*syntax.CallExpr); ok && len(a.Args) == 0 && len(a.Assigns) == 1 && a.Assigns[0].Value != nil && len(a.Assigns[0].Value.Parts) == 1 {
		// X=$(kubectl get ns x): $? is the substitution's (not so of
		// export or local, whose own status it is)
		if cs, ok := a.Assigns[0].Value.Parts[0].(*syntax.CmdSubst); ok && len(cs.Stmts) == 1 {
			check = cs.Stmts[0]
		}
	}
	if !t.isCheck(check) {
		return nil, false
	}
	return check, failed
}

// asCheck walks the if or list that tests check's status as the one on
// check itself (walk), and counts check once, where walk counts it, not
// also at the walk of its own line before.
func (t *translator) asCheck(check *syntax.Stmt, walk func()) {
	from := len(t.m.Commands)
	walk()
	at := t.loc(check)
	if !slices.ContainsFunc(t.m.Commands[from:], func(c importer.Command) bool { return c.Loc == at }) {
		return
	}
	for i := from - 1; i >= 0; i-- {
		if c := t.m.Commands[i]; c.Loc == at && c.Fate == importer.FateReadOnly {
			t.m.Commands = slices.Delete(t.m.Commands, i, i+1)
			return
		}
	}
}

// statusIf is the if on $? of an existence check (statusCheck) as the if
// on the check.
func (t *translator) statusIf(c *syntax.IfClause) bool {
	if len(c.Cond) != 1 {
		return false
	}
	check, failed := t.statusCheck(c, c.Cond[0])
	if check == nil {
		return false
	}
	cond := *check
	cond.Negated = failed
	as := *c
	as.Cond = []*syntax.Stmt{&cond}
	t.asCheck(check, func() { t.ifClause(&as) })
	return true
}

// statusList is `[ $? -ne 0 ] && kubectl create ns x` after an existence
// check as `kubectl get ns x || kubectl create ns x` (and `[ $? -eq 0 ]
// && …` as `kubectl get ns x && …`; || the other way round).
func (t *translator) statusList(s *syntax.Stmt, c *syntax.BinaryCmd) bool {
	if c.Op != syntax.AndStmt && c.Op != syntax.OrStmt {
		return false
	}
	check, failed := t.statusCheck(c, c.X)
	if check == nil {
		return false
	}
	as := *c
	as.X = check
	if failed == (c.Op == syntax.AndStmt) {
		as.Op = syntax.OrStmt // what runs where the check finds nothing
	} else {
		as.Op = syntax.AndStmt
	}
	t.asCheck(check, func() { t.binary(s, &as) })
	return true
}

// outsideFailure: the branch ends the script where a check outside the
// cluster fails: if ! nslookup …, or $? of the command before it.
func (t *translator) outsideFailure(cond, status *syntax.Stmt, then []*syntax.Stmt) bool {
	switch {
	case !t.endsScript(then):
		return false
	case status != nil:
		return t.guardsOutside(status)
	}
	return cond.Negated && t.guardsOutside(cond)
}

// outsideStatus names X=$(curl …); [ $? -ne 0 ] && exit 1, the && form
// of the if exitBranch names (trial 46s70h's D1).
func (t *translator) outsideStatus(c *syntax.BinaryCmd, status *syntax.Stmt) bool {
	if status == nil || !t.outsideFailure(c.X, status, []*syntax.Stmt{c.Y}) {
		return false
	}
	t.notCarried(c.X, condKey(t.text(status))+"; "+condKey(t.text(c.X)), outsideCheck)
	return true
}

// condKey is a condition's text as notHeld keys it.
func condKey(text string) string {
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(text), ";"))
}

// notCarriedSince takes back the steps made since m, each command that
// made or folded into one named not carried for why; the lines dropped.
func (t *translator) notCarriedSince(m mark, why string) map[importer.Loc]bool {
	dropped := map[importer.Loc]bool{}
	for i := m.commands; i < len(t.m.Commands); i++ {
		if cm := &t.m.Commands[i]; cm.Fate == importer.FateStep || cm.Fate == importer.FateFolded {
			at := "" // a function's line: the call its step was made for (trial 46s68i's D3)
			if j := slices.IndexFunc(t.m.Steps[m.steps:], func(st *importer.Step) bool { return st.Out.Name == cm.Step }); j >= 0 && cm.Fate == importer.FateStep {
				at = t.m.Steps[m.steps+j].Call
			}
			cm.Fate, cm.Step, cm.Why = importer.FateNotCarried, "", why
			t.m.NotCarried = append(t.m.NotCarried, importer.Note{Loc: cm.Loc, What: cm.Text, Why: why + at})
			dropped[cm.Loc] = true
		}
	}
	// what was said of those steps is moot
	t.m.Info = append(t.m.Info[:m.info], slices.DeleteFunc(t.m.Info[m.info:], func(n importer.Note) bool { return dropped[n.Loc] })...)
	keep := t.mark()
	keep.steps = m.steps
	t.unmake(keep)
	return dropped
}

// clusterCheck is why a check of a value read from the cluster that the
// script stops on is not carried.
const clusterCheck = "a check of what the script read from the cluster, which it stops on: khook does not run it, and goes on where the script would stop; add a wait: step for the condition (for: jsonpath=…), or check it after khook runs"

// clusterGuard names `[[ $n -ge 1 ]] || die "none"` on a value read from
// the cluster, where die (or the block) ends the script with a failure
// (46zzc's N6), as the if form is named (exitBranch).
func (t *translator) clusterGuard(c *syntax.BinaryCmd) {
	stops := t.failsScript([]*syntax.Stmt{c.Y})
	if x, ok := c.Y.Cmd.(*syntax.CallExpr); ok && len(x.Args) > 0 && t.funcs[lit(x.Args[0])] != nil {
		stops = t.failsScript([]*syntax.Stmt{t.funcs[lit(x.Args[0])].decl.Body})
	}
	if stops && !t.contextGuard(c.X, c.Op == syntax.AndStmt) && t.readsClusterValue(c.X) {
		t.notCarried(c.X, t.text(c.X), clusterCheck)
	}
}

// contextGuard names ctx=$(kubectl config current-context); [[ $ctx !=
// dev-k8s ]] && exit 1: a check of which kubeconfig context the script is
// run with, not of the cluster's state, so a wait: step cannot be its
// remedy; khook's own --context is (trial 46s70j's D2). stops: the script
// stops where cond holds (&&, an if), else where it fails (||).
func (t *translator) contextGuard(cond *syntax.Stmt, stops bool) bool {
	var ctx bool
	var others []*syntax.Word
	words, eq := testWords(cond)
	for _, w := range words {
		switch pe := soleParam(w); {
		case pe != nil && t.ctxVars[pe.Param.Value]:
			ctx = true
		case !testOps[lit(w)]:
			others = append(others, w)
		}
	}
	if !ctx {
		return false
	}
	run := "the --context of the cluster it expects"
	if v, ok, _ := t.evalOne(others); ok && eq != 0 && v != "" && !strings.ContainsAny(v, "$*?[") {
		run = "--context " + v // [[ $ctx != v ]] && exit 1
		if (eq > 0) == stops {
			run = "a --context other than " + v // [[ $ctx == prod ]] && exit 1
		}
	}
	t.notCarried(cond, t.text(cond), "a check of which kubeconfig context the script is run with, which it stops on: khook does not run it, and works on the cluster it is given; run khook with "+run)
	return true
}

// evalOne is the value of the one word ws holds.
func (t *translator) evalOne(ws []*syntax.Word) (string, bool, string) {
	if len(ws) != 1 {
		return "", false, ""
	}
	return t.eval(ws[0])
}

// testOps are the words of a test that are no operand.
var testOps = set("[", "]", "test", "=", "==", "!=", "!")

// testWords are the words a test ([[ … ]], [ … ], test …) compares, and
// whether it holds where they are equal (1), differ (-1) or neither (0).
func testWords(cond *syntax.Stmt) ([]*syntax.Word, int) {
	var ws []*syntax.Word
	eq, neg := 0, cond.Negated
	var expr func(e syntax.TestExpr)
	expr = func(e syntax.TestExpr) {
		switch x := e.(type) {
		case *syntax.Word:
			ws = append(ws, x)
		case *syntax.BinaryTest:
			eq = map[syntax.BinTestOperator]int{syntax.TsMatch: 1, syntax.TsMatchShort: 1, syntax.TsNoMatch: -1}[x.Op]
			expr(x.X)
			expr(x.Y)
		case *syntax.UnaryTest:
			neg = neg != (x.Op == syntax.TsNot)
			expr(x.X)
		case *syntax.ParenTest:
			expr(x.X)
		}
	}
	switch c := cond.Cmd.(type) {
	case *syntax.TestClause:
		expr(c.X)
	case *syntax.CallExpr:
		ws = c.Args
		for _, w := range ws {
			switch lit(w) {
			case "=", "==":
				eq = 1
			case "!=":
				eq = -1
			case "!":
				neg = !neg
			}
		}
	}
	if neg {
		eq = -eq
	}
	return ws, eq
}

// soleParam is the one $NAME or "${NAME}" a word is, else nil.
func soleParam(w *syntax.Word) *syntax.ParamExp {
	parts := w.Parts
	if len(parts) == 1 {
		if dq, ok := parts[0].(*syntax.DblQuoted); ok {
			parts = dq.Parts
		}
	}
	if len(parts) != 1 {
		return nil
	}
	pe, ok := parts[0].(*syntax.ParamExp)
	if !ok || pe.Param == nil || pe.Exp != nil || pe.Index != nil || pe.Slice != nil || pe.Repl != nil || pe.Length || pe.Excl {
		return nil
	}
	return pe
}

// readsClusterValue: cond reads a variable set from helm or kubectl output.
func (t *translator) readsClusterValue(cond *syntax.Stmt) bool {
	found := false
	syntax.Walk(cond, func(n syntax.Node) bool {
		if pe, ok := n.(*syntax.ParamExp); ok && pe.Param != nil && t.clusterVals[pe.Param.Value] {
			found = true
		}
		return !found
	})
	return found
}

// clientOnly: every helm or kubectl command n runs asks the local client
// (helm version, kubectl version --client), not the cluster: trial
// 46s68j's D2 called bootstrap.sh's Helm v3 check "what the script read
// from the cluster"; khook brings its own helm.
func clientOnly(n syntax.Node) bool {
	only := true
	syntax.Walk(n, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if !only || !ok || len(c.Args) == 0 || !isTool(toolName(lit(c.Args[0]))) {
			return only
		}
		var words []string
		for _, a := range c.Args[1:] {
			words = append(words, lit(a))
		}
		sub := ""
		if i := slices.IndexFunc(words, func(w string) bool { return !strings.HasPrefix(w, "-") }); i >= 0 {
			sub = words[i]
		}
		switch toolName(lit(c.Args[0])) {
		case "helm":
			only = sub == "version" || sub == "env"
		default:
			only = sub == "version" && (slices.Contains(words, "--client") || slices.Contains(words, "--client=true"))
		}
		return only
	})
	return only
}

// guardsOutside: the condition runs a command that checks something
// outside the cluster (gh, aws, curl, s5cmd): not a look-up of a tool
// (command -v helm), which khook needs none of, nor a helm or kubectl
// look-up, which the steps meet themselves.
func (t *translator) guardsOutside(cond *syntax.Stmt) bool {
	found := false
	syntax.Walk(cond, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if !ok || len(c.Args) == 0 {
			return true
		}
		name := lit(c.Args[0])
		if v, ok, _ := t.eval(c.Args[0]); name == "" && ok {
			// ${S5} ls s3://…, S5 a command line: its first word, or a
			// command only the run knows
			name = strings.Fields(v + " x")[0]
			name = name[strings.LastIndex(name, "/")+1:]
			if strings.HasPrefix(name, "${") {
				name = "?"
			}
		}
		switch {
		case name == "" || name == "[" || name == "test" || name == "command" || name == "which" || name == "type" || name == "hash",
			toolName(name) != "", housekeeping[name], name == "echo", name == "printf", name == "grep", name == "jq", name == "yq",
			// the machine's own prerequisites (docker info, kind get clusters), which khook needs none of
			name == "docker" || name == "podman" || name == "kind" || name == "k3d" || name == "minikube" || name == "git":
		default:
			found = true
		}
		return true
	})
	return found
}

// isCheck: a read-only helm or kubectl command used as a condition.
func (t *translator) isCheck(s *syntax.Stmt) bool {
	if p, ok := s.Cmd.(*syntax.BinaryCmd); ok && p.Op == syntax.Pipe && filters(p.Y) {
		return t.isCheck(p.X) // kubectl get secret -n x | grep age-key
	}
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) < 2 {
		return false
	}
	tool, sub := t.toolOf(c.Args[0]), lit(c.Args[1])
	switch tool {
	case "kubectl", "oc":
		if sub == "describe" {
			return true
		}
		// kubectl -n ns get secret x: flags before the verb too (trial
		// 46s67d's D3); one that reads a field (-o jsonpath=… | grep -q
		// Running) tests a state, not what exists (46zza's)
		args := make([]string, len(c.Args)-1)
		for i, w := range c.Args[1:] {
			args[i] = strings.TrimLeft(t.text(w), `"'`) // -o 'jsonpath={…}'
		}
		f := parseFlags(args, kubectlValued)
		out := f.get("o", "output")
		return len(f.pos) > 0 && f.pos[0] == "get" && !strings.HasPrefix(out, "jsonpath") && !strings.HasPrefix(out, "go-template") && !strings.HasPrefix(out, "custom-columns")
	case "helm":
		return helmReads[sub]
	}
	return false
}

var helmReads = set("status", "list", "ls", "get", "history")

// toolOf is the command a word names, by the value it holds where it is a
// variable: CLI=kubectl; if $CLI get namespace x is the check all the same
// (trial 46s69b's D2: unleash's namespace check named not carried).
func (t *translator) toolOf(w *syntax.Word) string {
	if name := lit(w); name != "" {
		return name
	}
	v, ok, _ := t.eval(w)
	if m := varRef.FindStringSubmatch(v); ok && m != nil && m[0] == v && t.m.Var(m[1]) != nil && t.m.Var(m[1]).Default != nil {
		v = *t.m.Var(m[1]).Default
	}
	if !ok || strings.Contains(v, "${") {
		return ""
	}
	return v[strings.LastIndex(v, "/")+1:]
}

// labelGuard: if ! kubectl get ns x -o jsonpath=… | grep -q v; then
// kubectl label ns x name=v --overwrite; fi: the check reads what the
// steps under it set, and they set it whatever it finds (trial 46s69b's
// D2: matomo's label named not carried though carried right).
func (t *translator) labelGuard(c *syntax.IfClause, last *syntax.Stmt) bool {
	if !last.Negated || c.Else != nil && (len(c.Else.Cond) > 0 || t.mayChange(&syntax.Stmt{Cmd: c.Else})) || !t.readsCluster(last) {
		return false
	}
	sets := false
	for _, s := range c.Then {
		x, ok := s.Cmd.(*syntax.CallExpr)
		if !ok || len(x.Args) == 0 {
			return false
		}
		switch args := litArgs(x.Args[1:]); {
		case t.toolOf(x.Args[0]) == "kubectl" && len(args) > 0 && (args[0] == "label" || args[0] == "annotate") && slices.Contains(args, "--overwrite"):
			sets = true
		case lit(x.Args[0]) == "echo" || lit(x.Args[0]) == "printf" || t.funcs[lit(x.Args[0])] != nil && !t.mayChange(s):
		default:
			return false
		}
	}
	return sets
}

// readsCluster: s is a kubectl get, filtered or not.
func (t *translator) readsCluster(s *syntax.Stmt) bool {
	if p, ok := s.Cmd.(*syntax.BinaryCmd); ok && p.Op == syntax.Pipe && filters(p.Y) {
		return t.readsCluster(p.X)
	}
	c, ok := s.Cmd.(*syntax.CallExpr)
	return ok && len(c.Args) > 1 && (t.toolOf(c.Args[0]) == "kubectl" || t.toolOf(c.Args[0]) == "oc") && lit(c.Args[1]) == "get"
}

// filters: the stage only reads what is piped to it and answers
// (grep -q name, wc -l, jq -e …), a pipe of them too.
func filters(s *syntax.Stmt) bool {
	switch c := s.Cmd.(type) {
	case *syntax.BinaryCmd:
		return c.Op == syntax.Pipe && filters(c.X) && filters(c.Y)
	case *syntax.CallExpr:
		return len(c.Args) > 0 && filterCmd[lit(c.Args[0])]
	}
	return false
}

var filterCmd = set("grep", "egrep", "fgrep", "wc", "jq", "yq", "awk", "head", "tail", "cut", "sort", "uniq", "tr")

// keepOnCheck: the steps since before, of the fresh-cluster path an if
// on a flag a Secret check set took (kubectl get secret x && found=true),
// keep a Secret there as the script does (trial 46s69m's D2).
func (t *translator) keepOnCheck(cond *syntax.Stmt, before int) {
	if check := setOn(cond, t.checkSet); check != nil && len(t.m.Steps) > before {
		t.keepIfExists(check, t.m.Steps[before:], "as the script creates it only where the check finds nothing")
	}
}

// keepIfExists: steps the script runs only where a check on a Secret
// finds none (if kubectl get secret … | grep key; then echo; else kubectl
// apply -f secret.yaml; fi) create the Secret only where it is absent:
// skipIf: exists, so a re-run keeps the data the script protects.
func (t *translator) keepIfExists(check *syntax.Stmt, steps []*importer.Step, as string) {
	if !secretWord.MatchString(t.text(check.Cmd)) {
		return
	}
	ns, names := t.checked(check)
	for _, st := range steps {
		if a := st.Out.Apply; a != nil && a.SkipIf == "" && !makesChecked(a, ns, names) {
			t.info(check, t.text(check.Cmd), "it looks for another object than step "+st.Out.Name+" makes; the step is written to run always, as where that object is absent")
			continue
		}
		if a := st.Out.Apply; a != nil && a.SkipIf == "" {
			a.SkipIf = "exists"
			t.info(check, t.text(check.Cmd), "step "+st.Out.Name+" applies only where what it makes is absent (skipIf: exists), "+as+": a re-run keeps the Secret's data")
		}
	}
}

// checked is the namespace and the names a check on Secrets names
// (kubectl describe secret -n A S): "" and none when it does not say.
func (t *translator) checked(check *syntax.Stmt) (ns string, names []string) {
	s := check
	for {
		p, ok := s.Cmd.(*syntax.BinaryCmd)
		if !ok || p.Op != syntax.Pipe {
			break
		}
		s = p.X
	}
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok {
		return "", nil
	}
	x := t.newCmd(s, c)
	if len(x.args) < 2 || !x.ok {
		return "", nil
	}
	f := parseFlags(x.args[1:], kubectlValued)
	if len(f.pos) < 2 || !strings.HasPrefix(f.pos[1], "secret") {
		return f.get("n", "namespace"), nil
	}
	for _, n := range f.pos[2:] {
		names = append(names, strings.TrimPrefix(n, "secret/"))
	}
	return f.get("n", "namespace"), names
}

// makesChecked: the apply step makes what the check looks for (a Secret
// in its namespace, by one of its names), or the check names neither: a
// check on demo-system's Secret does not guard the one made in demo-worker
// (trial 46v's D7).
func makesChecked(a *importer.OutApply, ns string, names []string) bool {
	if ns == "" && len(names) == 0 {
		return true
	}
	for _, m := range a.Manifests {
		var obj struct {
			Kind     string
			Metadata struct{ Name, Namespace string }
		}
		if m.Inline == "" || yaml.Unmarshal([]byte(m.Inline), &obj) != nil {
			return true // a file or several objects: as before, by the words
		}
		inNS := ns == "" || obj.Metadata.Namespace == ns || obj.Metadata.Namespace == "" && a.Namespace == ns
		if obj.Kind == "Secret" && inNS && (len(names) == 0 || slices.Contains(names, obj.Metadata.Name)) {
			return true
		}
	}
	return false
}

// isProbe: `if ! kubectl wait … --timeout=5s; then kubectl apply …; fi`
// (or rollout status, or the install in the else of an unnegated one):
// the wait only asks whether the install is needed.
func (t *translator) isProbe(c *syntax.IfClause, s *syntax.Stmt) bool {
	x, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(x.Args) < 2 || !isTool(lit(x.Args[0])) || lit(x.Args[0]) == "helm" {
		return false
	}
	if sub := lit(x.Args[1]); sub != "wait" && !(sub == "rollout" && len(x.Args) > 2 && lit(x.Args[2]) == "status") {
		return false
	}
	if s.Negated {
		return runsWriter(&syntax.Block{Stmts: c.Then})
	}
	return c.Else != nil && runsWriter(c.Else)
}

// runsWriter: n runs a helm or kubectl command that changes the cluster
// (else kubectl get events … only reads: no install a probe decides,
// and the wait stays the step it is: trial 46zx's D5).
func runsWriter(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 && (isTool(lit(c.Args[0])) && !readOnlyTool(litArgs(c.Args)) || toolParam(c.Args[0])) {
			found = true
		}
		return !found
	})
	return found
}

// runsCommand: s is `eval "$cmd"` or a call of the script's own function,
// which may run helm or kubectl: an if's condition runs it whatever it
// returns (if eval "$retry_cmd"; then return 0; fi).
func (t *translator) runsCommand(s *syntax.Stmt) bool {
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 {
		return false
	}
	name := lit(c.Args[0])
	if v, ok, _ := t.eval(c.Args[0]); ok && name == "" {
		// K=kubectl; if $K apply …: the tool, by the value it holds
		if m := varRef.FindStringSubmatch(v); m != nil && m[0] == v && t.m.Var(m[1]) != nil && t.m.Var(m[1]).Default != nil {
			v = *t.m.Var(m[1]).Default
		}
		return toolName(v) != ""
	}
	return name == "eval" || t.funcs[name] != nil || runsScript(c)
}

// runsScript: c runs a script file (bash x.sh, sudo bash x.sh, ./x.sh),
// which an if's condition runs whatever it returns, and which is
// followed there as anywhere (trial 46s67l's D5: if bash
// configure-app-dns.sh; then …, neither followed nor named).
func runsScript(c *syntax.CallExpr) bool {
	i := 0
	for i < len(c.Args) && (wrappers[lit(c.Args[i])] && lit(c.Args[i]) != "command" || i > 0 && strings.HasPrefix(lit(c.Args[i]), "-")) {
		if lit(c.Args[i]) == "sudo" {
			n, _, _ := sudoRuns(litArgs(c.Args[i:])) // sudo -u "$U" bash x.sh
			i += n
			continue
		}
		i++ // sudo -E bash x.sh
	}
	if i >= len(c.Args) {
		return false
	}
	name := lit(c.Args[i])
	return name == "bash" || name == "sh" || strings.HasSuffix(name, ".sh") || strings.HasSuffix(name, ".bash")
}

// whenFound: steps the script runs only when the check finds what it
// asks for (`if kubectl get crd x; then kubectl delete crd x; fi`, `helm
// status x && helm upgrade x …`). A delete is the same with
// ignoreNotFound; any other step khook runs whatever the check would
// find, and fails where it finds nothing: said at its line.
func (t *translator) whenFound(check *syntax.Stmt, steps []*importer.Step) {
	for _, st := range steps {
		if d := st.Out.Delete; d != nil {
			yes := true
			d.IgnoreNotFound = &yes
			continue
		}
		if slices.ContainsFunc(t.m.Commands, func(c importer.Command) bool { return c.Fate == importer.FateFolded && c.Step == st.Out.Name }) {
			continue // the other branch makes it too (if helm status x; then upgrade; else install): it runs either way
		}
		t.info(check, t.text(check.Cmd), "the script runs step "+st.Out.Name+" only when this finds something; khook runs it always, and it fails where nothing is there: put it under a when: on a variable if it may be missing")
	}
}

func (t *translator) checkOnly(s *syntax.Stmt, why string) {
	t.account(s, importer.FateReadOnly, "", why)
}

// condition is a test on variables as a when: expression (CEL), or its
// value when the import can decide it (static).
func (t *translator) condition(s *syntax.Stmt) (cel string, static *bool, ok bool) {
	printing := t.printing
	t.printing = true // a test's words go into no step (untakenOnCheck says what they decide)
	defer func() { t.printing = printing }()
	switch c := s.Cmd.(type) {
	case *syntax.TestClause:
		cel, static, ok = t.test(c.X)
	case *syntax.CallExpr:
		if len(c.Args) == 1 && len(s.Redirs) == 0 {
			cel, static, ok = t.flagCommand(c.Args[0])
			break
		}
		if len(c.Args) < 2 || (lit(c.Args[0]) != "[" && lit(c.Args[0]) != "test") {
			return "", nil, false
		}
		args := c.Args[1:]
		if lit(c.Args[0]) == "[" {
			args = args[:len(args)-1]
		}
		before := t.notInteger
		t.notInteger = ""
		if cel, static, ok = t.bracket(args); t.notInteger != "" {
			// an operand of -eq that is no integer: the whole test fails
			// (status 2), whatever its ! or -o, and the if takes it as false
			no := false
			cel, static, ok = "", &no, true
		} else {
			t.notInteger = before
		}
	case *syntax.ArithmCmd:
		// (( i == 0 )): bash's arithmetic over what the script set, true
		// when not 0 (trial 46s68c's D3)
		if n, known, _ := t.arithmX(c.X); known {
			v := n != 0
			static, ok = &v, true
		}
	case *syntax.BinaryCmd:
		if c.Op != syntax.AndStmt && c.Op != syntax.OrStmt {
			return "", nil, false
		}
		l, ls, lok := t.condition(c.X)
		r, rs, rok := t.condition(c.Y)
		if !lok || !rok {
			return "", nil, false
		}
		op := " && "
		if c.Op == syntax.OrStmt {
			op = " || "
		}
		cel, static, ok = combine(l, ls, r, rs, op)
	default:
		return "", nil, false
	}
	if ok && s.Negated {
		cel, static = negate(cel, static)
	}
	return cel, static, ok
}

func negate(cel string, static *bool) (string, *bool) {
	if static != nil {
		v := !*static
		return "", &v
	}
	return "!(" + cel + ")", nil
}

func combine(l string, ls *bool, r string, rs *bool, op string) (string, *bool, bool) {
	if ls != nil && rs != nil {
		v := *ls && *rs
		if op == " || " {
			v = *ls || *rs
		}
		return "", &v, true
	}
	if ls != nil || rs != nil {
		// a test decided at import beside one on a variable: [ "$P" -eq 50 ]
		// && [ "$SKIP" != true ] with P known is decided (false) or the
		// other test; a test has no effect bash's short circuit would skip
		known, other := ls, r
		if rs != nil {
			known, other = rs, l
		}
		if *known == (op == " || ") {
			return "", known, true
		}
		return other, nil, true
	}
	return "(" + l + op + r + ")", nil, true
}

// bracket is `[ a = b ]`, `[ -n "$X" ]`, `[ "$X" ]`.
func (t *translator) bracket(args []*syntax.Word) (string, *bool, bool) {
	// [ A -a B -o C ]: test's -o binds looser than -a (trial 46s67p's D2:
	// "cannot decide" where [ A ] && [ B ] is decided)
	for _, op := range []string{"-o", "-a"} {
		if i := slices.IndexFunc(args, func(w *syntax.Word) bool { return lit(w) == op }); i > 0 && i < len(args)-1 {
			l, ls, lok := t.bracket(args[:i])
			r, rs, rok := t.bracket(args[i+1:])
			if !lok || !rok {
				return "", nil, false
			}
			return combine(l, ls, r, rs, map[string]string{"-o": " || ", "-a": " && "}[op])
		}
	}
	neg := false
	if len(args) > 0 && lit(args[0]) == "!" {
		neg, args = true, args[1:]
	}
	var cel string
	var static *bool
	ok := false
	switch {
	case len(args) == 1:
		cel, static, ok = t.compare(args[0], nil, "!=")
	case len(args) == 2 && (lit(args[0]) == "-n" || lit(args[0]) == "-z"):
		op := "!="
		if lit(args[0]) == "-z" {
			op = "=="
		}
		cel, static, ok = t.compare(args[1], nil, op)
	case len(args) == 2 && (lit(args[0]) == "-f" || lit(args[0]) == "-d" || lit(args[0]) == "-e"):
		cel, static, ok = t.fileTest(lit(args[0]), args[1])
	case len(args) == 3:
		switch o := lit(args[1]); o {
		case "=", "==", "!=":
			if o != "!=" {
				o = "=="
			}
			cel, static, ok = t.compare(args[0], args[2], o)
		case "-eq", "-ne", "-gt", "-ge", "-lt", "-le":
			if static, ok = t.numeric(args[0], args[2], o, false); !ok {
				if t.notInteger = t.noInteger(args[0], args[2]); t.notInteger != "" {
					return "", nil, false // condition decides it: bash's test fails
				}
				cel, ok = t.numericCEL(args[0], args[2], o, false)
			}
		}
	}
	if ok && neg {
		cel, static = negate(cel, static)
	}
	return cel, static, ok
}

// test is a [[ … ]] expression.
func (t *translator) test(x syntax.TestExpr) (string, *bool, bool) {
	switch e := x.(type) {
	case *syntax.Word:
		return t.compare(e, nil, "!=")
	case *syntax.ParenTest:
		return t.test(e.X)
	case *syntax.UnaryTest:
		switch e.Op {
		case syntax.TsNot:
			cel, st, ok := t.test(e.X)
			if !ok {
				return "", nil, false
			}
			cel, st = negate(cel, st)
			return cel, st, true
		case syntax.TsRegFile, syntax.TsDirect, syntax.TsExists:
			w, ok := e.X.(*syntax.Word)
			if !ok {
				return "", nil, false
			}
			return t.fileTest(map[syntax.UnTestOperator]string{syntax.TsRegFile: "-f", syntax.TsDirect: "-d", syntax.TsExists: "-e"}[e.Op], w)
		case syntax.TsNempStr, syntax.TsEmpStr:
			w, ok := e.X.(*syntax.Word)
			if !ok {
				return "", nil, false
			}
			op := "!="
			if e.Op == syntax.TsEmpStr {
				op = "=="
			}
			return t.compare(w, nil, op)
		}
	case *syntax.BinaryTest:
		switch e.Op {
		case syntax.AndTest, syntax.OrTest:
			l, ls, lok := t.test(e.X)
			r, rs, rok := t.test(e.Y)
			if !lok || !rok {
				return "", nil, false
			}
			op := " && "
			if e.Op == syntax.OrTest {
				op = " || "
			}
			return combine(l, ls, r, rs, op)
		case syntax.TsEql, syntax.TsNeq, syntax.TsGtr, syntax.TsGeq, syntax.TsLss, syntax.TsLeq:
			a, aok := e.X.(*syntax.Word)
			b, bok := e.Y.(*syntax.Word)
			if !aok || !bok {
				return "", nil, false
			}
			if st, ok := t.numeric(a, b, e.Op.String(), true); ok {
				return "", st, ok
			}
			cel, ok := t.numericCEL(a, b, e.Op.String(), true)
			return cel, nil, ok
		case syntax.TsMatch, syntax.TsMatchShort, syntax.TsNoMatch:
			a, aok := e.X.(*syntax.Word)
			b, bok := e.Y.(*syntax.Word)
			if !aok || !bok {
				return "", nil, false
			}
			op := "=="
			if e.Op == syntax.TsNoMatch {
				op = "!="
			}
			if hasGlob(b) { // [[ $src == kind* ]]: a pattern, as in a case
				return t.globTest(a, b, op)
			}
			return t.compare(a, b, op)
		case syntax.TsReMatch:
			return t.reMatch(e)
		}
	}
	return "", nil, false
}

// reMatch is [[ A =~ RE ]], decided when A is known at import: a quoted
// RE matches as a literal string, as bash does ([[ "$*" =~ "--use-prod" ]]:
// trial 46s68m's D1, its issuer never applied); unquoted, as an ERE.
func (t *translator) reMatch(e *syntax.BinaryTest) (string, *bool, bool) {
	a, aok := e.X.(*syntax.Word)
	b, bok := e.Y.(*syntax.Word)
	if !aok || !bok {
		return "", nil, false
	}
	l, lok := t.operand(a)
	p, pok, _ := t.eval(b)
	if !lok || !pok || strings.HasPrefix(l, "vars") || strings.Contains(p, "${") {
		return "", nil, false
	}
	v, err := strconv.Unquote(l)
	if err != nil {
		return "", nil, false
	}
	quoted := len(b.Parts) == 1
	if quoted {
		_, sq := b.Parts[0].(*syntax.SglQuoted)
		_, dq := b.Parts[0].(*syntax.DblQuoted)
		quoted = sq || dq
	}
	if quoted {
		m := strings.Contains(v, p)
		return "", &m, true
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return "", nil, false
	}
	// bash sets BASH_REMATCH to the match and its groups, "" for a
	// group that matched nothing (trial 46s69p's D1: ${BASH_REMATCH[6]}
	// of a known argument a variable "read from the environment")
	groups := re.FindStringSubmatch(v)
	m := groups != nil
	t.vars["BASH_REMATCH"] = &shVar{list: groups, array: true}
	return "", &m, true
}

// globTest is [[ A == PATTERN ]] (op "==" or "!="): decided when A is
// known at import, else a when: as a case pattern is.
func (t *translator) globTest(a, b *syntax.Word, op string) (string, *bool, bool) {
	l, lok := t.operand(a)
	p, pok, _ := t.eval(b)
	if !lok || !pok || strings.Contains(p, "${") {
		return "", nil, false
	}
	if !strings.HasPrefix(l, "vars") {
		v, _ := strconv.Unquote(l)
		m := shMatch(p, v)
		m = m == (op == "==")
		return "", &m, true
	}
	cel := globCEL(l, p, true)
	if op == "!=" {
		cel = "!(" + cel + ")"
	}
	return cel, nil, true
}

// compare is a == b (b nil: the empty string) as CEL over vars, or decided.
func (t *translator) compare(a, b *syntax.Word, op string) (string, *bool, bool) {
	t.emptiness = b == nil // [ -n "$TOKEN" ]: a when: on a secret writes no value of it
	l, lok := t.operand(a)
	t.emptiness = false
	r, rok := `""`, true
	if b != nil {
		r, rok = t.operand(b)
	}
	if !lok || !rok {
		return "", nil, false
	}
	if !strings.HasPrefix(l, "vars") && !strings.HasPrefix(r, "vars") {
		v := (l == r) == (op == "==")
		return "", &v, true
	}
	return l + " " + op + " " + r, nil, true
}

// numeric is `[ $# -ge 3 ]`: decided when both sides are numbers at
// import (a literal, the count of a function's arguments), else undecided.
// A $# of a script whose own arguments the import was not given counts
// none of them (guessedArgs), as a trailing "$@" of them is none.
// In [[ ]] (arith) each side is bash's arithmetic over its text: a bare
// name is the variable's value (trial 46s68c's D3: [[ i -eq 0 ]] in a
// loop over i left undecided); test's [ i -eq 0 ] is an error in bash.
func (t *translator) numeric(a, b *syntax.Word, op string, arith bool) (*bool, bool) {
	l, lok, _ := t.argCount(a)
	r, rok, _ := t.argCount(b)
	x, xerr := strconv.Atoi(strings.TrimSpace(l))
	y, yerr := strconv.Atoi(strings.TrimSpace(r))
	if arith && lok && xerr != nil {
		x, xerr = t.arithText(l)
	}
	if arith && rok && yerr != nil {
		y, yerr = t.arithText(r)
	}
	if !lok || !rok || xerr != nil || yerr != nil {
		return nil, false
	}
	v := map[string]bool{"-eq": x == y, "-ne": x != y, "-gt": x > y, "-ge": x >= y, "-lt": x < y, "-le": x <= y}[op]
	return &v, true
}

// noInteger is an operand of test's -eq, -gt, … known at import to be
// no integer ('ingress', quoted), which bash's [ ] refuses whatever the
// other is ("integer expression expected"); "" when there is none. [[ ]]
// reads it as arithmetic instead (numeric's arith).
func (t *translator) noInteger(a, b *syntax.Word) string {
	for _, w := range []*syntax.Word{a, b} {
		s, ok, _ := t.eval(w)
		if _, err := strconv.Atoi(strings.TrimSpace(s)); ok && err != nil && s != "" && !strings.Contains(s, "${") {
			return s
		}
	}
	return ""
}

// argCount is eval, but $# without the script's own arguments is the
// count of those known (guessedArgs says it was guessed).
func (t *translator) argCount(w *syntax.Word) (string, bool, string) {
	if pe, _ := paramOf(w.Parts[0]); len(w.Parts) == 1 && pe != nil && pe.Param != nil && pe.Param.Value == "#" && pe.Exp == nil && !pe.Length {
		if _, ok, _ := t.eval(w); !ok {
			t.guessedArgs = true
			t.info(w, "$#", "counted as "+strconv.Itoa(len(t.args))+": the script's own arguments were not given to the import (give them after the script's name)")
			return strconv.Itoa(len(t.args)), true, ""
		}
	}
	return t.eval(w)
}

// flagCommand is `if $DRY_RUN; then`: bash runs the variable's value as a
// command, true or false (an unset one runs nothing, which succeeds).
func (t *translator) flagCommand(w *syntax.Word) (string, *bool, bool) {
	if pe, _ := paramOf(w.Parts[0]); pe == nil || len(w.Parts) != 1 {
		return "", nil, false
	}
	v, ok := t.operand(w)
	switch {
	case !ok:
		return "", nil, false
	case v == `"true"` || v == `":"` || v == `""`:
		yes := true
		return "", &yes, true
	case v == `"false"`:
		no := false
		return "", &no, true
	case strings.HasPrefix(v, "vars.get("):
		return v + ` == "true" || ` + v + ` == ""`, nil, true
	}
	return "", nil, false
}

// ownArgs: w is $@ or $* (quoted or not) of the script's own arguments,
// none of which were given to the import.
func (t *translator) ownArgs(w *syntax.Word) bool {
	if len(w.Parts) != 1 || t.inFunc || t.argsGiven || t.argsRest > 0 || len(t.args) > 0 {
		return false
	}
	pe, _ := paramOf(w.Parts[0])
	return pe != nil && pe.Param != nil && (pe.Param.Value == "@" || pe.Param.Value == "*") && pe.Exp == nil && pe.Slice == nil && !pe.Length && pe.Repl == nil
}

// operand is a word as CEL: vars.get("X", "default") for a khook
// variable, a quoted literal for text, not ok for anything else.
func (t *translator) operand(w *syntax.Word) (string, bool) {
	vars := len(t.m.Vars)
	s, ok, _ := t.eval(w)
	if !ok {
		return "", false
	}
	if strings.HasPrefix(s, "${") && strings.HasSuffix(s, "}") && strings.Count(s, "${") == 1 {
		v := t.m.Var(s[2 : len(s)-1])
		if v == nil || v.Secret && !t.emptiness {
			return "", false
		}
		if len(t.m.Vars) > vars && v.Required && v.Default == nil && !t.nounset && !v.Computed {
			// First read by a test ([ "$SKIP" = 1 ]): unset, bash reads it
			// as empty; requiring it would refuse what the script runs. Not
			// one the script computes (vault_running=$(kubectl get …)):
			// empty by default, it would decide for the run (trial 46w's D3).
			empty := ""
			v.Required, v.Default = false, &empty
			v.Description += "; unset, it is empty, as in the script"
		}
		d := ""
		if v.Default != nil {
			d = *v.Default
		}
		return "vars.get(" + strconv.Quote(v.Name) + ", " + strconv.Quote(d) + ")", true
	}
	if strings.Contains(s, "${") {
		return "", false
	}
	return strconv.Quote(s), true
}

// caseClause: `case "$X" in a) … ;; *) … esac` → when: per branch.
func (t *translator) caseClause(c *syntax.CaseClause) {
	subject, ok := t.operand(c.Word)
	decided := ok
	if !ok && t.ownArgs(c.Word) {
		// case $@ in one) …;; *) …: bash run without arguments matches ""
		subject, ok = `""`, true
		t.info(c, "case "+t.text(c.Word), "the script's own arguments: none were given to the import, so bash matches \"\" here; give them after the script's name to import another branch")
	}
	if !ok && t.caseChoices(c) {
		return
	}
	if !ok {
		before := len(t.m.Steps)
		// a variable a branch sets is not known after it (OS='windows'
		// under mingw*) of a subject only the run knows: 46zzc's D2)
		t.undecided(c, func() {
			for _, it := range c.Items {
				t.branch(it.Stmts, "")
			}
		})
		if len(t.m.Steps) > before {
			t.notCarried(c, "case "+t.text(c.Word), "khook cannot decide it before the run; every branch is carried (add a when: on a variable)")
		}
		return
	}
	var seen []string
	var whens []string
	var walks []func()
	var ends []bool
	for _, it := range c.Items {
		var alts []string
		matched := false
		for _, p := range it.Patterns {
			s, pok, _ := t.eval(p)
			if !pok {
				continue
			}
			if s == "*" {
				alts = append(alts, "*")
				continue
			}
			if !strings.HasPrefix(subject, "vars") {
				v, _ := strconv.Unquote(subject)
				if shMatch(s, v) {
					matched = true
				}
			}
			alts = append(alts, globCEL(subject, s, hasGlob(p)))
		}
		if !strings.HasPrefix(subject, "vars") {
			if matched || slices.Contains(alts, "*") {
				if decided {
					// the subject known at import (deploy) picks bash's
					// path, as a decided if does: an exit 1 guard on it is
					// the script's, its variable required (trial 46s67q's
					// D1: the keys of a function called from the branch
					// stayed optional, and "" was applied)
					t.stmts(it.Stmts)
					// the other branches, never run with the arguments
					// given, named at their lines (trial 46s70k's D2)
					v, _ := strconv.Unquote(subject)
					t.untakenItems(c, it, v)
					// said at the case, as a decided if's exit is: the
					// script stops there, maybe before any command (trial
					// 46s69j's D3: "0 commands", no line, no reason)
					t.stoppedAt(c, "case "+t.text(c.Word)+" ("+subject+" at import)")
					return
				}
				t.branch(it.Stmts, "")
				return
			}
			continue
		}
		cel := "(" + strings.Join(alts, " || ") + ")"
		if slices.Contains(alts, "*") { // all|*) is *): it matches anything (trial 46u's D1)
			cel = "true"
			if len(seen) > 0 {
				cel = "!(" + strings.Join(seen, " || ") + ")"
			}
		}
		seen = append(seen, cel)
		whens, walks = append(whens, cel), append(walks, func() { t.branch(it.Stmts, cel) })
		ends = append(ends, len(it.Stmts) > 0 && exits(it.Stmts[len(it.Stmts)-1]))
	}
	if len(walks) == 0 {
		return
	}
	if whens[len(whens)-1] != "true" && !strings.HasPrefix(whens[len(whens)-1], "!(") { // no *): none may match
		whens, walks = append(whens, "!("+strings.Join(seen, " || ")+")"), append(walks, func() {})
	}
	t.branches(c, whens, walks, ends)
}

// caseChoices: case $(kubectl get nodes -o yaml) in *gke*) A;; *eks*) B;;
// esac, with steps in two branches or more: bash runs one of them, never
// two, so each is under a when: on a required variable (IF_<pattern's
// word>, "true" where its pattern would match), the first true one
// winning as bash's first match does (trial 46s67e's D5: both carried,
// the second StorageClass failing on every cluster).
func (t *translator) caseChoices(c *syntax.CaseClause) bool {
	n := 0
	for _, it := range c.Items {
		if slices.ContainsFunc(it.Stmts, t.mayStep) {
			n++
		}
	}
	if n < 2 {
		return false
	}
	var seen, whens []string
	var walks []func()
	var ends []bool
	for _, it := range c.Items {
		cel := t.patternChoice(c, it)
		when := cel
		if len(seen) > 0 {
			when = "!(" + strings.Join(seen, " || ") + ")"
			if cel != "true" {
				when = cel + " && " + when
			}
		}
		seen = append(seen, cel)
		whens, walks = append(whens, when), append(walks, func() { t.branch(it.Stmts, when) })
		ends = append(ends, len(it.Stmts) > 0 && exits(it.Stmts[len(it.Stmts)-1]))
		if cel == "true" {
			break // *): what follows it never matches
		}
	}
	if seen[len(seen)-1] != "true" { // no *): none may match
		whens, walks = append(whens, "!("+strings.Join(seen, " || ")+")"), append(walks, func() {})
	}
	t.branches(c, whens, walks, ends)
	return true
}

// patternChoice is the CEL of a case item whose subject only the run
// knows: "true" for *), else a required variable that says it matches.
func (t *translator) patternChoice(c *syntax.CaseClause, it *syntax.CaseItem) string {
	var pats []string
	for _, p := range it.Patterns {
		if s, ok, _ := t.eval(p); ok && s == "*" {
			return "true"
		}
		pats = append(pats, t.text(p))
	}
	if len(it.Patterns) == 0 {
		return "true"
	}
	return t.choiceOf(it.Patterns[len(it.Patterns)-1], false, "case "+t.text(c.Word)+" in "+strings.Join(pats, "|")+")", t.loc(it))
}

// hasGlob: the pattern has an unquoted * or ? (a quoted one is literal).
func hasGlob(p *syntax.Word) bool {
	for _, part := range p.Parts {
		if l, ok := part.(*syntax.Lit); ok && strings.ContainsAny(l.Value, "*?[") {
			return true
		}
	}
	return false
}

// globCEL is `subject` matching the case pattern p: *x* is contains,
// x* startsWith, *x endsWith, anything else a regular expression.
// shMatch is bash's pattern match of a [[ == ]] or a case: its * and ?
// match a / too, where path.Match's stop at one (library.sh's [[
// "$package" != *@* ]] on github.com/x/gum@v1 held, and the script was
// taken to abort there: trial 46s67e's D3, once kafka_setup.sh was followed).
func shMatch(p, v string) bool {
	m, _ := path.Match(strings.ReplaceAll(p, "/", "\x00"), strings.ReplaceAll(v, "/", "\x00"))
	return m
}

func globCEL(subject, p string, glob bool) string {
	if !glob {
		return subject + " == " + strconv.Quote(p)
	}
	inner := strings.Trim(p, "*")
	if !strings.ContainsAny(inner, "*?[") {
		switch {
		case strings.HasPrefix(p, "*") && strings.HasSuffix(p, "*"):
			return subject + ".contains(" + strconv.Quote(inner) + ")"
		case strings.HasSuffix(p, "*"):
			return subject + ".startsWith(" + strconv.Quote(inner) + ")"
		case strings.HasPrefix(p, "*"):
			return subject + ".endsWith(" + strconv.Quote(inner) + ")"
		}
	}
	re := regexp.QuoteMeta(p)
	re = strings.NewReplacer(`\*`, ".*", `\?`, ".", `\[`, "[", `\]`, "]").Replace(re)
	return subject + ".matches(" + strconv.Quote("^"+re+"$") + ")"
}

// undecided walks the branches of a condition khook cannot decide: a
// variable they set is not known after them (UNINSTALL=true under
// [[ "$*" == *--uninstall* ]] must not make the uninstall unconditional),
// so it becomes a khook variable.
func (t *translator) undecided(n syntax.Node, walk func()) {
	before := make(map[string]*shVar, len(t.vars))
	for k, v := range t.vars {
		before[k] = v
	}
	t.undecidedDepth++
	walk()
	t.undecidedDepth--
	for name, v := range t.vars {
		if before[name] == v || v.decl != nil {
			continue
		}
		if b := before[name]; t.optDefaults > 0 && b != nil && b.decl == nil && !b.unknown && !b.array && b.alts == nil && !strings.Contains(b.val, "${") && !secretLooking(name) && !splits(v) {
			// NAMESPACE="demo" before while [[ $# -gt 0 ]] … -n) NAMESPACE="$2"
			t.vars[name] = &shVar{decl: t.optionVar(n, name, b.val)}
			continue
		}
		was := v.val
		if b := before[name]; was == "" && b != nil {
			was = b.val
		} else if b != nil && b.unknown && b.was != "" {
			// cmd="$cmd -f b.yaml" under a second test: still the command
			// cmd held before the first (trial 46s69q's D2: "write helm in
			// its place", its helm command no longer named)
			was = strings.Replace(was, "${"+name+"}", b.was, 1)
		}
		t.vars[name] = t.undecidedVar(n, name, was)
	}
}

// splits: a value of v is several words or a flag (REPLICATION_ARGS="
// --set architecture=replicated"): unquoted, the run splits it, so no
// one-word variable stands for it.
func splits(v *shVar) bool {
	if v == nil {
		return false
	}
	if v.alts != nil {
		return slices.ContainsFunc(v.alts, func(a alt) bool { return splits(a.v) })
	}
	val := strings.TrimSpace(v.val)
	return strings.ContainsAny(val, " \t\n") || strings.HasPrefix(val, "-") || v.array
}

// optionVar is a variable an option of the script sets (its loop at n),
// the import not given the script's arguments: the script's default,
// which the run may change as an option would.
func (t *translator) optionVar(n syntax.Node, name, def string) *importer.Var {
	d := t.m.Var(name)
	if d == nil {
		d = &importer.Var{Name: name, Default: &def, From: t.loc(n), Description: "the script's default; an option of the script sets it (its loop at " + t.loc(n).String() + "): give it to do the same"}
	}
	return d
}

// undecidedWhy begins the description of a variable undecidedVar makes.
const undecidedWhy = "the script sets it under a condition khook cannot decide"

// undecidedVar is a variable set under a condition at n khook cannot
// decide: a required khook variable; was is its value before.
func (t *translator) undecidedVar(n syntax.Node, name, was string) *shVar {
	d := t.m.Var(name)
	if d == nil {
		d = &importer.Var{Name: name, Required: true, Computed: true, From: t.loc(n), Description: undecidedWhy + " (" + t.loc(n).String() + ")"}
	}
	return &shVar{decl: d, unknown: true, was: was}
}

// fileTest is -f/-d/-e on a path known at import: decided there, as the
// files the script sources are read there.
func (t *translator) fileTest(op string, w *syntax.Word) (string, *bool, bool) {
	p, ok, _ := t.eval(w)
	if ok && strings.Contains(p, "${") {
		// [[ -f "$KEY_PATH" ]] on a variable that is empty by default: a
		// file is given when the variable is; khook checks no file
		if m := varRef.FindStringSubmatch(p); m != nil && m[0] == p {
			if v := t.m.Var(m[1]); v != nil && !v.Secret && v.Default != nil && *v.Default == "" {
				t.info(w, op+" "+p, "carried as \"$"+m[1]+" is not empty\": khook does not look for the file when it runs")
				return "vars.get(" + strconv.Quote(m[1]) + `, "") != ""`, nil, true
			}
		}
	}
	if !ok || strings.Contains(p, "${") {
		return "", nil, false
	}
	if w := t.wrote[t.writeKey(p)]; w != nil && w.sure {
		// helm template --output-dir /tmp/m || helm template > /tmp/m.yaml,
		// then if [[ -d /tmp/m ]]: the script made it (46zx's D2)
		v := op != "-f" && op != "-d" || (op == "-d") == w.outDir
		return "", &v, true
	}
	if t.cwdUnknown != "" && !filepath.IsAbs(p) {
		// after cd "$TEMP_DIR" (a clone the run makes): a path there is
		// decided when the script runs (trial 46zx's D1: the CRD install
		// under [ -d config/crds ] dropped)
		return "", nil, false
	}
	if rel, err := filepath.Rel(t.runDir, t.abs(p)); err != nil || strings.HasPrefix(p, "~") || rel == ".." || strings.HasPrefix(rel, "../") {
		// /etc/rancher/k3s/k3s.yaml, ~/.kube/config: the machine the script
		// runs on, not the repository the import reads; decided then
		return "", nil, false
	}
	fi, err := os.Stat(t.abs(p))
	v := err == nil && (op != "-f" || fi.Mode().IsRegular()) && (op != "-d" || fi.IsDir())
	if err != nil && op != "-d" && t.madeBy(t.abs(p)) == "" {
		// a file the user places (a licence, an .env); a folder of the
		// checkout missing (envs/prod) is a wrong argument, not one
		t.absentFile = p
	}
	return "", &v, true
}

// rivals: two branches of c (its elif and else too) change the same
// object in place (kubectl patch svc web to green in one, to blue in
// another): the script runs one of them, and both would undo each other.
// So do two branches of an elif chain that change objects in place at all
// (if kubectl get kustomization platform; then patch platform; elif …
// flux-system; then patch flux-system): bash runs at most one, and each
// carried always fails where its object is missing (trial 46s69n's D3).
func (t *translator) rivals(c *syntax.IfClause) bool {
	seen := map[string]int{}
	changing := 0
	for i, b := 0, c; b != nil; i, b = i+1, b.Else {
		targets := t.inPlaceTargets(b.Then)
		if len(targets) > 0 {
			changing++
		}
		for _, tg := range targets {
			if j, ok := seen[tg]; ok && j != i {
				return true
			}
			seen[tg] = i
		}
	}
	return changing > 1 && c.Else != nil && len(c.Else.Cond) > 0
}

// inPlaceTargets are the objects the kubectl commands of list change in
// place (patch, scale, set, label, annotate), as written.
func (t *translator) inPlaceTargets(list []*syntax.Stmt) []string {
	var out []string
	for _, s := range list {
		syntax.Walk(s, func(n syntax.Node) bool {
			c, ok := n.(*syntax.CallExpr)
			if !ok || len(c.Args) < 3 || lit(c.Args[0]) != "kubectl" {
				return true
			}
			// kubectl -n flux-system patch …: the verb after the namespace
			// (trial 46s69n's D3)
			verb := 1
			for verb+2 < len(c.Args) && (lit(c.Args[verb]) == "-n" || lit(c.Args[verb]) == "--namespace") {
				verb += 2
			}
			switch lit(c.Args[verb]) {
			case "patch", "scale", "set", "label", "annotate":
			default:
				return true
			}
			var words []string
			for i := verb + 1; i < len(c.Args); i++ {
				w := t.text(c.Args[i])
				switch {
				case w == "-n" || w == "--namespace" || w == "-p" || w == "--patch" || w == "--type" || w == "-l" || w == "--selector":
					i++
				case strings.HasPrefix(w, "-") || strings.Contains(w, "="):
				default:
					words = append(words, w)
				}
			}
			if lit(c.Args[1]) == "set" && len(words) > 0 {
				words = words[1:] // set image deploy/x: the object after what is set
			}
			switch {
			case len(words) > 0 && strings.Contains(words[0], "/"):
				out = append(out, words[0])
			case len(words) > 1:
				out = append(out, words[0]+"/"+words[1])
			}
			return true
		})
	}
	return out
}

// numberStandIn gives the variable of operand (vars.get("N", "d")) a
// number to be checked with at import, where it has no default and no
// other: the check's stand-in "x" is no number, and int() refused the step
// as "type conversion error" (trial 46s69s's D3: [[ "$available" -ge
// "$desired" ]] over two values the script computes).
func (t *translator) numberStandIn(operand string) {
	if !strings.HasPrefix(operand, "vars.get(") {
		return
	}
	name, err := strconv.QuotedPrefix(strings.TrimPrefix(operand, "vars.get("))
	if err != nil {
		return
	}
	if name, err = strconv.Unquote(name); err != nil {
		return
	}
	if v := t.m.Var(name); v != nil && v.Example == "" {
		v.Example = "0"
		if v.Default == nil {
			v.Description += "; a number: the script compares it as one"
		}
	}
}

// numericCEL is [ "$MONITORING" -eq 1 ] on a variable the run gives
// against a number: a when: over the variable as a number, so that its
// default decides as bash's does (trial 46s69l's D1: carried as if it
// held, the variable not declared). Empty, as a value read from the
// cluster often is (an availableReplicas of none), [[ ]] reads it as 0
// and [ ] fails, which the if takes as false (trial 46s69s's D3); a value
// that is no number is refused at khook validate.
func (t *translator) numericCEL(a, b *syntax.Word, op string, arith bool) (string, bool) {
	cmp := map[string]string{"-eq": "==", "-ne": "!=", "-gt": ">", "-ge": ">=", "-lt": "<", "-le": "<="}[op]
	l, lok := t.operand(a)
	r, rok := t.operand(b)
	if !lok || !rok || cmp == "" {
		return "", false
	}
	var set []string // [ ]: the sides that are no number when empty
	side := func(s string) (string, bool) {
		if strings.HasPrefix(s, "vars") {
			switch {
			case !strings.HasSuffix(s, `, "")`):
			case arith:
				return "(" + s + ` == "" ? 0 : int(` + s + "))", true
			default:
				set = append(set, s+` != ""`)
			}
			return "int(" + s + ")", true
		}
		v, err := strconv.Unquote(s)
		if err != nil {
			return "", false
		}
		_, err = strconv.Atoi(strings.TrimSpace(v))
		return strings.TrimSpace(v), err == nil
	}
	x, xok := side(l)
	y, yok := side(r)
	if !xok || !yok || !strings.HasPrefix(l, "vars") && !strings.HasPrefix(r, "vars") {
		return "", false
	}
	t.numberStandIn(l)
	t.numberStandIn(r)
	return strings.Join(append(set, x+" "+cmp+" "+y), " && "), true
}
