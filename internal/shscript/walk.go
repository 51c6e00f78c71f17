package shscript

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/khook/khook/internal/importer"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/words"
)

// translator walks a script as bash would run it.
type translator struct {
	m               *importer.Model
	runDir, specDir string
	top             string          // the checkout's top (checkoutTop), found once
	rebased         map[string]bool // variables whose default specPath wrote from the spec's folder
	cwd             string
	cwdUnknown      string // where a cd to a directory known only at run time was (FILE:LINE), "" after a known one
	dirStack        []string
	inDq            int    // inside "…" being evaluated: ${X:-'v'} keeps its quotes there (trial 46s69l's D3)
	file            string // the file being walked, as shown (relative to runDir)
	scriptPath      string // its absolute path ($0, BASH_SOURCE)
	src             []byte
	vars            map[string]*shVar
	funcs           map[string]*function
	trapped         map[string]bool   // the trap handlers said (a function trapped on EXIT and ERR is said once)
	aliases         map[string]string // alias k=kubectl: bash expands none in a script unless expandAliases
	unset           map[string]string // a variable of the environment's default in the script: its value where it is unset
	expandAliases   bool              // shopt -s expand_aliases
	emptiness       bool              // operand is read by a test of emptiness (-n, -z)
	helm2           bool              // the script runs helm init: its helm is Helm 2
	repos           map[string]string // helm repo name → URL
	when            []string          // conditions of the branches being walked (CEL)
	args            []string          // positional parameters of the function being walked
	inFunc          bool
	depth           int
	cond            int          // > 0 inside a branch or loop: exit/return do not end the walk
	stopped         bool         // exit at the top level, return in a function
	mayHaveReturned importer.Loc // a return the function being walked (or one calling it) may have taken, under a test khook cannot decide
	funcWhen        int          // len(when) where the function being walked was called
	failed          bool         // … with a non-zero status
	returned        bool         // … by return: it ends the function only
	guard           string       // !(cel) of a branch that returned: the condition of what follows it in its list
	retGuard        bool         // t.exitGuard holds a function's return: it ends at the call (callFunc)
	exitSet         bool         // … and an exit's, which does not
	keeps           []keep       // existence checks whose found path may return from the function being walked
	procSubst       string       // -f <(cat <<EOF …), walked as the pipe cat <<EOF … | cmd -f -: what a note names
	files, fnFiles  int          // the files being walked (a sourced one in another), and how many when the function walked was called
	locals          []frame      // the locals of the functions being walked
	poll            bool         // inside a poll loop: its sleep is the loop's
	keys            map[string]string
	names           map[string]bool
	depUpdate       map[string]bool        // chart dirs `helm dependency update` ran in
	pulled          []importer.PulledChart // charts helm pull --untar fetched, in order
	prev            *importer.OutStep
	lastStmt        [2]*syntax.Stmt // the statement a list walks, and the one before it, whose status $? is (trial 46s70h's D1)
	inputErr        error
	sourcing        []string
	fromFileSecrets bool
	rd              *redact.Redactor  // learns the literal secret values seen: never in a note's text
	secretVars      map[string]string // a literal secret value: the secret variable made of it
	lineBase        int               // a fragment's first line in the file it was read from, less one
	argsGiven       bool              // the script's own positional parameters are known (Options.Args)
	scriptArgs      []string          // those parameters, as given to the import
	argsRest        int               // > 0: the parameters past args are the script's own, unknown at import, from $argsRest on (bash x.sh "$@")
	undecidedElse   int               // > 0 in the else branch of an if khook cannot decide
	checks          int               // > 0 under an existence check (if helm status x; then … else …)
	frame, frames   int               // the function call being walked, and how many there were
	substSeen       map[string]bool
	ctxNS           string                        // the namespace the script set on the current kubeconfig context
	made            []made                        // local paths named by commands khook does not run, in order
	wrote           map[string]*written           // files the script writes from a here-document, by path
	unrendered      []*written                    // helm template whose file or folder another wrote over (unreadWrites)
	cmdInfo         int                           // len(m.Info) when the command being walked began
	pipeTo          string                        // the command a pipe's output feeds (helm: values, not manifests)
	pipeToStmt      *syntax.Stmt                  // that command
	pipeNS          string                        // the -n of the kubectl apply a pipe feeds: where helm template's objects go
	nsCopies        []copied                      // objects the script copies into another namespace (not carried)
	uncreated       []copied                      // objects a kubectl create not carried makes (kind, name, into: to)
	generated       bool                          // the value being assigned is a secret made by openssl rand, pwgen
	computedSecret  bool                          // … computed by a pipeline (talosctl … | yq …), not read from a file
	hoisted         map[*syntax.Word]*syntax.Word // KEY=$(…) arguments, as a variable's (hoist)
	urlNSSaid       bool                          // the no -n note of a URL apply said (contextNamespace)
	shellTimeout    string                        // timeout N bash -c '…': N, for the string's waits (unwrap)
	pods            map[string]podPick            // variables holding a pod picked by label
	guessedArgs     bool                          // a condition counted $# of arguments the import was not given
	argVals         map[string]bool               // variables set from the script's own arguments (readsScriptArgs)
	untakenWhys     map[string]bool               // why untakenOnGiven names a line (untakenAgain)
	machineVals     map[string]bool               // variables set from what machine runs the script (readsMachine)
	machine         int                           // > 0 in an if chain that picks by the machine, changing nothing of the cluster (machineChain)
	notScriptArgs   bool                          // the positional parameters walked are a call's words that are not the script's arguments
	notInteger      string                        // a condition decided false: test's -eq on this word, no integer
	retriedLast     *importer.OutStep             // the last step of the last retry loop carried once
	returnGuards    []returnGuard                 // if kubectl get X; then return 0; fi in the functions being walked
	optLoop         int                           // > 0 in an option loop run over the script's arguments
	optSets         map[string]importer.Loc       // the variables an option loop run over the given arguments can set, at the loop
	inLoop          int                           // > 0 in the body of a for loop over known values
	undecidedDepth  int                           // > 0 under a condition khook cannot decide
	pipeIn          *input                        // what a pipe or heredoc feeds the function being walked: its first helm or kubectl reads it
	errexit         bool                          // set -e is on where the walk is
	nounset         bool                          // set -u: an unset variable stops the script
	allexport       bool                          // set -a: each assignment exports its variable
	exporting       bool                          // the assignments walked are export's (or declare -x's)
	shellOnly       map[string]bool               // variables the script assigns and never exports: no command it runs sees them
	kubectlMade     map[string]map[string]any     // objects kubectl's generators made (Kind/ns/name), for an expose of them
	carriesOn       []*importer.Step              // the steps made where set -e was off
	errexitSteps    bool                          // a step was made where set -e was on
	errexitAt       importer.Loc                  // where the script first turned set -e on
	ends            map[*importer.OutStep]bool    // a step whose failure ends bash's run (set -e, no test around it)
	// ranOn: steps made where set -e was off; passed: those a command
	// followed, so their failure is not the fragment's exit status
	ranOn, passed []*importer.Step
	rivalElse     int             // > 0 in the else of an if whose branches are alternatives (rivals)
	splitting     int             // > 0 while a command is walked once per value of a variable set under when: (condvars.go)
	notATool      bool            // the command accounted is envsubst or sed writing a file: said, not counted among helm/kubectl's
	splitWhens    int             // how many of when are those values' (every value walks the command: no condition of its path)
	unsetOnPath   map[string]bool // variables the script sets on another branch, unset on the one walked (splitOnAlts)
	splitStops    []importer.Note // where a condition decided at import stopped the walk of a value, one each
	splitFrom     int             // len(m.Commands) where the outermost such walk began
	cluster       clusters
	callers       []caller  // the calls of the functions being walked, innermost last
	hdoc          hdocKind  // the here-document being read, if any
	holes         *[]string // while a values document is read with holes: why each expansion left as holeMark is unknown
	installs      []install // the releases steps install on every run that reaches them (reinstall.go)
	retrying      int       // > 0 in the turns of a for loop whose body does not use its variable (a retry, if they repeat)

	// repoAuth and registries are the credentials of a repository the
	// script added (by name) and of a registry it logged in to (by host).
	repoAuth, registries map[string]*importer.OutAuth
	// packages are the .tgz files helm pull wrote (their absolute path):
	// the chart each is, which a step that installs the file installs.
	packages map[string]pulledPackage
	plugins  []string // helm plugins the script installs (helm-spray: spray)
	deps     []depCmd // helm dependency commands, in order
	// pluginRuns are helm plugin commands not carried (their index in
	// m.Commands), for pluginsBeforeCharts
	pluginRuns []int
	ctxVars    map[string]bool   // variables holding the current context's name
	asRun      map[string]string // a variable's value by the script's defaults, where the spec writes another (clusters.go)
	// absent is the checkout file a -f/-d/-e test found missing, which the
	// script does not make: set by the last condition decided at import
	absentFile string
	supplies   map[string]importer.Loc // checkout files a guard asks the user to place, by absolute path
	failing    map[string]bool         // the functions failsScript is reading, against recursion
	whenElse   int                     // t.cond in a plain else carried under a when: (its condition's negation), else 0
	loopCond   int                     // t.cond in the body of a for loop over known values at no other condition (1), else 0
	// optDefaults > 0 in an option loop over the script's arguments, which
	// the import was not given: a variable it sets keeps its default
	optDefaults int
	clusterVals map[string]bool               // variables set from helm or kubectl output
	secretKeys  map[string]importer.OutKeyRef // variables read from a key of a cluster Secret (secretkeys.go)
	secretReads map[string]importer.OutKeyRef // the same, also without -n (clusterSecretLiteral)
	unrunPods   map[string]importer.Loc       // pods a kubectl run that is not carried starts, by name
	runJobs     map[string]bool               // pods a kubectl run carried as a job: step starts, by name: their command ends
	strayDoc    bool                          // lines of a here-document a mistyped << left as commands follow (halts.go)
	repoUpdates []importer.Loc                // helm repo updates folded into the steps that install from a repository
	repoAdds    []repoAdd                     // helm repo adds folded into the steps that install from them
	repoMissing []string                      // chart REPO/NAME whose REPO the script does not add, and where
	halts       []halt                        // a command after which bash runs nothing more (halts.go)
	bg          int                           // > 0 walking a statement run in the background (cmd &)
	tested      map[*syntax.CallExpr]bool     // calls whose failure bash tests: set -e does not stop there
	bundled     map[*syntax.CallExpr]string   // k3s kubectl …, read as kubectl: the tool that bundles it
	bundledSaid map[string]bool               // which cluster such a kubectl (helm) works on is said
	// notHeld are the conditions khook cannot decide whose branch ends the
	// script, where the spec follows the path on which they do not hold
	notHeld map[string]importer.Loc
	// choices are the choice variables declared (choiceOf), by their
	// condition's line and the values it reads there
	choices map[string]string
	// exitGuard is !(cel) of a branch under when: cel that exited: the
	// conditions of everything after it (stmts raises them out of each list)
	exitGuard []string
	turns     map[string]string // the variables of the for loops over known values being walked: this turn's value
	callReads map[string]string // per computed variable, what its computation read (callVarName)
	// absentSets are the variables each existence check's paths set
	// otherwise (absentVars), said once the spec is known (sayAbsentVars)
	absentSets []*absentSet
	printing   bool // the words being read are echo's, printf's or a test's: no step has them
	// checkSet are the variables an existence check's fresh-cluster path
	// sets otherwise than the path where it finds the object: the check
	checkSet map[string]*syntax.Stmt
	// argSet are the variables an if on $# (counted without the script's
	// arguments) sets on the path the import did not take (trial 46s69m's D1)
	argSet map[string]*syntax.Stmt
}

// keep is an existence check on a Secret whose found path returns from
// the function on an answer: the steps after it (from on) that make the
// Secret keep it where it exists (keepIfExists).
type keep struct {
	check       *syntax.Stmt
	from, depth int
}

// hdocKind is how a here-document's text is read.
type hdocKind int

const (
	hdocNone   hdocKind = iota
	hdocPlain           // <<EOF: expanded
	hdocQuoted          // <<'EOF': as it is
)

// made is a local path a command khook does not run names (an argument,
// a file it writes): what may make a manifest missing at import.
type made struct {
	path string
	at   importer.Loc
	name string // the command
}

type function struct {
	decl *syntax.FuncDecl
	file string
	path string
	src  []byte
}

func (t *translator) runFile(f *syntax.File, src []byte, abs string) {
	saveFile, savePath, saveSrc, saveBase := t.file, t.scriptPath, t.src, t.lineBase
	t.file, t.scriptPath, t.src, t.lineBase = t.display(abs), abs, src, 0
	t.files++
	t.stmts(f.Stmts)
	t.files--
	t.file, t.scriptPath, t.src, t.lineBase = saveFile, savePath, saveSrc, saveBase
}

func (t *translator) stmts(list []*syntax.Stmt) {
	n := len(t.when)
	var exits []string // the exitGuards met in list: what follows list is under them too
	take := func() {
		for _, g := range t.exitGuard {
			if !slices.Contains(exits, g) {
				t.when, exits = append(t.when, g), append(exits, g)
			}
		}
		t.exitGuard = nil
	}
	defer func() {
		take()
		t.when, t.exitGuard = t.when[:n], exits
	}()
	for i, s := range list {
		take()
		if t.stopped || t.inputErr != nil {
			return
		}
		if i > 0 && t.retriesPrev(list[i-1], s) {
			continue
		}
		t.lastStmt = [2]*syntax.Stmt{s, nil}
		if i > 0 {
			t.lastStmt[1] = list[i-1]
		}
		t.stmt(s)
		if t.stopped && t.failed {
			t.neverRun(s, list[i+1:])
		}
		if t.guard != "" { // the rest of this list runs only when an exiting branch did not
			t.when, t.guard = append(t.when, t.guard), ""
		}
	}
}

func (t *translator) stmt(s *syntax.Stmt) {
	if t.splitOnAlts(s) || t.requires(s) {
		return
	}
	if s.Background {
		t.bg++
		defer func() { t.bg-- }()
	}
	t.accountRedirSubst(s)
	switch c := s.Cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		t.passed, t.ranOn = append(t.passed, t.ranOn...), nil
		if len(c.Args) == 0 && len(c.Assigns) == 1 && t.printedCapture(c.Assigns[0]) {
			return
		}
		if t.fileFromProcSubst(s, c) {
			return
		}
		t.call(s, c, nil)
	case *syntax.BinaryCmd:
		t.binary(s, c)
	case *syntax.IfClause:
		t.ifClause(c)
	case *syntax.WhileClause:
		t.whileClause(s, c)
	case *syntax.ForClause:
		t.forClause(s, c)
	case *syntax.CaseClause:
		t.caseClause(c)
	case *syntax.Block:
		t.stmts(c.Stmts)
	case *syntax.Subshell:
		cwd := t.cwd
		t.stmts(c.Stmts)
		t.cwd, t.exitGuard = cwd, nil // an exit there ends the subshell only
	case *syntax.FuncDecl:
		if c.Name != nil { // nil only for a zsh anonymous function, or what bash refuses to run
			t.funcs[c.Name.Value] = &function{decl: c, file: t.file, path: t.scriptPath, src: t.src}
		}
	case *syntax.DeclClause:
		t.declClause(s, c)
	case *syntax.TimeClause:
		if c.Stmt != nil {
			t.stmt(c.Stmt)
		}
	case *syntax.TestClause, *syntax.ArithmCmd, *syntax.LetClause:
	default:
		t.notCarried(s, t.text(s), "khook runs no shell commands; do it in a job: step or by hand")
	}
}

// secret remembers a literal secret value, so no note quotes it. It is
// registered as a value read (redact.Found): a flag's word or a value too
// short to keep ("app", the user of --from-literal=user=app) would blur
// every note it occurs in ("kubectl ***ly") and protect nothing.
func (t *translator) secret(v string) {
	if v == "no" || strings.Contains(v, "${") {
		return
	}
	t.rd.Found(v)
}

// secretVar: the literal value v is the secret variable name, so the same
// literal elsewhere in the spec is written as it too (echoedSecrets).
func (t *translator) secretVar(v, name string) {
	t.secret(v)
	if v == "no" || strings.Contains(v, "${") {
		return
	}
	if t.secretVars == nil {
		t.secretVars = map[string]string{}
	}
	if _, ok := t.secretVars[v]; !ok {
		t.secretVars[v] = name
	}
}

// line is a node's line in the file being walked.
func (t *translator) line(n syntax.Node) int { return int(n.Pos().Line()) + t.lineBase }

func (t *translator) loc(n syntax.Node) importer.Loc {
	return importer.Loc{File: t.file, Line: t.line(n)}
}

// text is a node's source on one line, shortened.
// execArgs is an exec's `-- PROG` and the arguments after it.
var execArgs = regexp.MustCompile(`\bexec\b.*? -- (?:\S+/)?\S+( \S.*)$`)

func (t *translator) text(n syntax.Node) string {
	a, b := int(n.Pos().Offset()), int(n.End().Offset())
	if a < 0 || b > len(t.src) || a >= b {
		return ""
	}
	s := strings.ReplaceAll(string(t.src[a:b]), "\\\n", " ")
	if i := strings.Index(s, "\n"); i >= 0 {
		s = s[:i] + " …"
	}
	s = strings.Join(strings.Fields(s), " ")
	s = t.masked(s)
	if m := execArgs.FindStringSubmatchIndex(s); m != nil {
		// kubectl exec … -- setup email add admin@x PASSWORD: the command
		// run in the container is named by its program only; its
		// arguments are a credential as often as not (trial 46s68i's D6)
		s = s[:m[2]] + " …"
	}
	if len(s) > 120 {
		s = s[:117] + "…"
	}
	return s
}

func (t *translator) notCarried(n syntax.Node, what, why string) {
	t.m.NotCarried = append(t.m.NotCarried, t.noteAt(n, what, why))
}

// noteAt is a not-carried note at n, said as notCarried says it.
func (t *translator) noteAt(n syntax.Node, what, why string) importer.Note {
	why = t.masked(why)     // a why may quote arguments (Unexpected args: …)
	why += t.callSite(true) // a function's line: which call of it
	return importer.Note{Loc: t.loc(n), What: what, Why: why}
}

// callSite is " (in k, called at FILE:LINE)" in a function, "" outside
// one: the function the line is in, and the call of the script's main
// flow it was walked for — through `retry k …` retry's, not retry's own
// "$@" line (trial 46s67k's D7: every call of k named at k's body).
func (t *translator) callSite(args bool) string {
	if len(t.callers) == 0 {
		return ""
	}
	in, out := t.callers[len(t.callers)-1], t.callers[0]
	if len(t.callers) == 1 && args && out.call != "" && out.call != out.name {
		// a note's command names "$1", a step's its value: the call's words say which
		return " (in " + in.name + ", called at " + out.at.String() + " as `" + out.call + "`)"
	}
	if len(t.callers) == 1 || in.name == out.name {
		return " (in " + in.name + ", called at " + out.at.String() + ")"
	}
	// main → deploy_phase1 → apply_manifest: the call that gives the
	// command its arguments too, with them, not only main's (trial
	// 46s68i's D2: 33 applies of one line, "through main", told apart by nothing)
	for i := len(t.callers) - 1; i > 0; i-- {
		if c := t.callers[i]; c.call != "" {
			return " (in " + in.name + ", called at " + c.at.String() + " as `" + c.call + "`, through " + out.name + " called at " + out.at.String() + ")"
		}
	}
	return " (in " + in.name + ", through " + out.name + " called at " + out.at.String() + ")"
}

// callText is the call x of a script function with its arguments as
// known at import, masked and shortened; "" where the function's name is
// itself an argument passed on (retry's "$@": retry's call says it).
func (t *translator) callText(x *cmd) string {
	c, ok := x.stmt.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 || len(c.Args[0].Parts) != 1 {
		return ""
	}
	if _, ok := c.Args[0].Parts[0].(*syntax.Lit); !ok {
		return ""
	}
	s := t.masked(strings.Join(x.args, " "))
	if len(s) > 100 {
		s = s[:97] + "…"
	}
	return s
}

// waitsAgain folds a wait or rollout status into the same one a retry
// loop made just before it (its turns, then its last try after the loop:
// karmada's util::wait_pod_ready), its time added to that step's.
func (t *translator) waitsAgain(n syntax.Node, st *importer.OutStep) bool {
	p := t.prev
	if p == nil || p != t.retriedLast || len(t.when) > 0 && strings.Join(t.when, " && ") != p.When || len(t.when) == 0 && p.When != "" ||
		!(st.Wait != nil && p.Wait != nil && *st.Wait == *p.Wait || st.Rollout != nil && p.Rollout != nil && *st.Rollout == *p.Rollout) {
		return false
	}
	a, aerr := time.ParseDuration(p.Timeout)
	b, berr := time.ParseDuration(st.Timeout)
	if aerr == nil && berr == nil {
		p.Timeout = words.ShortDuration(a + b)
	}
	t.account(n, importer.FateFolded, p.Name, "the same wait as step "+p.Name+" just before it (a retry's last try): its time is added to that step's")
	return true
}

// caller is a function call being walked: its name and line.
type caller struct {
	name string
	at   importer.Loc
	call string // the call with its arguments; "" where its name was passed on ("$@")
}

func (t *translator) info(n syntax.Node, what, why string) {
	t.m.Info = append(t.m.Info, importer.Note{Loc: t.loc(n), What: what, Why: why})
}

// same is a note of how a line was read where nothing the cluster gets
// differs (sleep 10: nothing to carry): listed apart from the differences.
func (t *translator) same(n syntax.Node, what, why string) {
	t.m.Info = append(t.m.Info, importer.Note{Loc: t.loc(n), What: what, Why: why, Same: true})
}

// account records the fate of a helm or kubectl command.
func (t *translator) account(n syntax.Node, fate importer.Fate, step, why string) {
	if t.notATool && fate == importer.FateNotCarried {
		// envsubst < t.yaml > s.yaml is no helm/kubectl command: named
		// at its line, not in their count (trial 46s69c's D5)
		t.notCarried(n, t.text(n), why)
		return
	}
	c := importer.Command{Loc: t.loc(n), Text: t.text(n), Fate: fate, Step: step, Why: why}
	if fate == importer.FateNotCarried && t.cmdInfo <= len(t.m.Info) {
		// what the command's words said is moot: no step carries them
		at := t.loc(n)
		t.m.Info = append(t.m.Info[:t.cmdInfo], slices.DeleteFunc(t.m.Info[t.cmdInfo:], func(i importer.Note) bool { return i.Loc == at })...)
	}
	if t.splitting > 0 && step == "" && slices.ContainsFunc(t.m.Commands, func(o importer.Command) bool { return o.Loc == c.Loc && o.Fate == c.Fate && o.Step == "" }) &&
		(fate != importer.FateNotCarried || t.namedAtThisCall(c.Loc)) {
		// the same command, walked again for another value of a variable:
		// said once; a function's line at another call is another command
		// (46zzh's D2: psql_exec's kubectl exec at each of its calls)
		return
	}
	if t.splitting > 0 && t.resplit(n, c) {
		return
	}
	t.m.Commands = append(t.m.Commands, c)
	if fate == importer.FateNotCarried {
		t.notCarried(n, t.text(n), why)
	}
}

// resplit: the command at n, walked again for another value of a
// variable, is the one line it was in this walk's first pass: counted
// once, as a step where any value made one, and what another value does
// not carry named at the line (trial 46s68b's D2: a step and "not carried
// … write the step by hand" for one kubectl line, two in the count).
func (t *translator) resplit(n syntax.Node, c importer.Command) bool {
	i := slices.IndexFunc(t.m.Commands[min(t.splitFrom, len(t.m.Commands)):], func(o importer.Command) bool { return o.Loc == c.Loc })
	if i < 0 {
		return false
	}
	o := &t.m.Commands[t.splitFrom+i]
	const other = "on the script's other path (where the step of this line does not run): "
	if c.Fate == importer.FateNotCarried {
		why := c.Why
		if o.Fate != importer.FateNotCarried {
			why = other + why
		}
		if !slices.ContainsFunc(t.m.NotCarried, func(nc importer.Note) bool { return nc.Loc == c.Loc && nc.Why == why }) {
			t.notCarried(n, t.text(n), why)
		}
		return true
	}
	if o.Fate == importer.FateNotCarried && c.Fate == importer.FateStep {
		// the other value's not-carried note stays, saying which path it is
		for i, nc := range t.m.NotCarried {
			if nc.Loc == c.Loc && nc.Why == o.Why {
				t.m.NotCarried[i].Why = other + nc.Why
			}
		}
	}
	if o.Fate == importer.FateNotCarried || o.Fate == importer.FateReadOnly && c.Fate != importer.FateReadOnly {
		o.Fate, o.Step, o.Why = c.Fate, c.Step, c.Why
	}
	return true
}

// namedAtThisCall: a not-carried note at loc names the call of the
// function being walked (any, outside a function).
func (t *translator) namedAtThisCall(loc importer.Loc) bool {
	at := t.callSite(true)
	return slices.ContainsFunc(t.m.NotCarried, func(n importer.Note) bool { return n.Loc == loc && strings.HasSuffix(n.Why, at) })
}

// addStep appends a step for the command at n: named after base (unique),
// under the conditions being walked, after the step before it. key names
// what the step makes (a release, an object): a second step for the same
// key is folded into the first (both branches of an existence check).
func (t *translator) addStep(n syntax.Node, base, key string, st *importer.OutStep) *importer.OutStep {
	if t.otherCluster(n, base) { // before folding: the same object on another cluster is another object
		return nil
	}
	conds, dead := stepWhen(t.when)
	if dead {
		// X && !(X): a branch walked again for a value of a variable it
		// cannot have there (trial 46v's D3); another walk accounts for it
		if t.splitting == 0 {
			t.account(n, importer.FateNotCarried, "", "it is under conditions that cannot both hold ("+strings.Join(t.when, " && ")+"), so bash never runs it")
		}
		return nil
	}
	if key != "" {
		// Branches under when: and its negation are both steps: the key
		// holds the conditions, so only a repeat under the same ones folds.
		key += "|" + strings.Join(conds, " && ")
		if name, ok := t.keys[key]; ok && (t.checks > 0 || t.undecidedElse > 0 || !strings.HasPrefix(key, "helm/")) {
			if t.undecidedElse > 0 && strings.HasPrefix(key, "helm/") {
				t.account(n, importer.FateNotCarried, "", "the other branch of a condition khook cannot decide installs the release again, and step "+name+" carries the first branch's; write this install as its own step under a when: by hand")
				return nil
			}
			t.account(n, importer.FateFolded, name, "it makes what step "+name+" already makes (the other branch of an existence check)")
			t.foldInto(name, st)
			return nil
		}
	}
	if t.waitsAgain(n, st) {
		return nil
	}
	name := dnsName(base)
	if name == "" {
		name = "step"
	}
	for i := 2; t.names[name]; i++ {
		name = fmt.Sprintf("%s-%d", dnsName(base), i)
	}
	t.names[name] = true
	st.Name = name
	if len(conds) > 0 {
		st.When = strings.Join(conds, " && ")
	}
	if t.prev != nil {
		st.Needs = []string{t.prev.Name}
	}
	t.prev = st
	if key != "" {
		t.keys[key] = name
	}
	t.m.Steps = append(t.m.Steps, &importer.Step{From: t.loc(n), Out: st, Call: t.callSite(false)})
	if d := st.Delete; d != nil && d.IgnoreNotFound != nil && !*d.IgnoreNotFound && !t.errexit {
		// without set -e a failed removal is no stop (helm uninstall of a
		// release not there yet, on a first run)
		t.failureIgnored(n, "no set -e", t.m.Steps[len(t.m.Steps)-1:])
	}
	if !t.errexit {
		t.carriesOn = append(t.carriesOn, t.m.Steps[len(t.m.Steps)-1])
		t.ranOn = append(t.ranOn, t.m.Steps[len(t.m.Steps)-1])
	}
	t.errexitSteps = t.errexitSteps || t.errexit
	if t.errexit && t.cond == 0 {
		t.ends[st] = true
	}
	t.account(n, importer.FateStep, name, "")
	return st
}

// stepWhen is the conditions a step is under, each once (X && X is X);
// dead when one is there with its negation.
func stepWhen(when []string) (conds []string, dead bool) {
	for _, c := range when {
		if !slices.Contains(conds, c) {
			conds = append(conds, c)
		}
	}
	for _, c := range conds {
		if slices.Contains(conds, "!("+c+")") {
			return nil, true
		}
	}
	return conds, false
}

// binary is `a && b`, `a || b` and pipes.
func (t *translator) binary(s *syntax.Stmt, c *syntax.BinaryCmd) {
	if t.statusList(s, c) { // kubectl get ns x; [ $? -ne 0 ] && …
		return
	}
	switch c.Op {
	case syntax.Pipe, syntax.PipeAll:
		t.pipe(s, c)
		t.exitGuard = nil // … | while read x; do …; exit 0; done: each part is a subshell, whose exit ends only it
	case syntax.AndStmt:
		if t.defaulting(c.X, []*syntax.Stmt{c.Y}) { // [ -z "$NS" ] && NS=default
			return
		}
		t.absentFile, t.notInteger = "", ""
		if _, static, ok := t.condition(c.X); ok && static != nil {
			// `[ -z "$NS" ] && NS=default`, decided at import
			if *static && t.supplied(c.X, []*syntax.Stmt{c.Y}) {
				return
			}
			if *static {
				t.stmt(c.Y)
				t.stoppedAt(c.X, t.text(c.X))
			}
			t.untakenOnNoInteger(&syntax.IfClause{Then: []*syntax.Stmt{c.Y}}, c.X, *static)
			return
		}
		if t.setsUnder(c) {
			return
		}
		if a := onlyAssign(c.Y); a != nil && a.Name != nil && t.isCheck(c.X) {
			// kubectl get secret x && exists=true: on a fresh cluster's
			// path the check finds nothing and the flag keeps its value;
			// an if on it names the other path (untakenOnCheck), where the
			// spec had taken the found one (trial 46s69m's D2: the prompt
			// and the Secrets of the else dropped without a word)
			t.stmt(c.X)
			if t.checkSet == nil {
				t.checkSet = map[string]*syntax.Stmt{}
			}
			t.checkSet[a.Name.Value] = c.X
			return
		}
		status := t.statusOf(c, c.X) // before c.Y's walk moves on
		t.stmt(c.X)
		before := len(t.m.Steps)
		t.cond++
		t.stmt(c.Y)
		t.cond--
		if t.isCheck(c.X) { // `kubectl get crd x && kubectl delete crd x`
			t.whenFound(c.X, t.m.Steps[before:])
		}
		if len(t.m.Steps) == before && !t.outsideStatus(c, status) {
			t.clusterGuard(c) // [ "$n" == 0 ] && exit 1 (trial 46s68j's D2)
		}
	case syntax.OrStmt:
		switch {
		case isLookup(c.X) && !t.callsTool(c.Y, map[string]bool{}):
			// command -v kubectl || missing+=(kubectl): the tools the
			// script needs are there, as the import takes them (46zza's
			// N-haayap: the array then read as holding one, an exit decided)
		case t.isCheck(c.X):
			// `kubectl get ns x || kubectl create ns x`: the step is idempotent.
			t.checkOnly(c.X, "an existence check: the command after || becomes an idempotent step")
			t.checks++
			before := len(t.m.Steps)
			if t.endsScript([]*syntax.Stmt{c.Y}) {
				// kubectl get nodes || fail "no cluster": the spec follows
				// the path where the check passes, and goes on
				t.cond++
				defer func() { t.cond-- }()
			}
			t.stmt(c.Y)
			t.keepIfExists(c.X, t.m.Steps[before:], "as the script creates it only where the check finds nothing")
			t.checks--
		case t.isHousekeeping(c.Y):
			// `kubectl create ns x || true`
			before := len(t.m.Steps)
			t.stmt(c.X)
			t.clusterGuard(c)
			if ignoresFailure(c.Y) {
				t.failureIgnored(c, t.text(c.Y), t.m.Steps[before:])
			}
		default:
			first := len(t.m.Steps)
			t.stmt(c.X)
			m := t.mark()
			t.cond++
			t.stmt(c.Y)
			t.cond--
			if len(t.m.Steps) == m.steps {
				t.clusterGuard(c)
			}
			t.failureFallback(first, m, c.X.Cmd, c.Y)
		}
	}
}

// setsUnder walks `[ -z "$DOMAIN" ] && missing+=(domain)`, a test khook
// cannot decide before the run that only sets variables, as the if it
// is: each variable holds a value per branch. Walked unconditionally,
// the array held one and a later `[ ${#missing[@]} -gt 0 ] && exit 1`
// was decided as always stopping the script (trial 46s69h's D1: all 45
// later commands "bash never runs it", nothing written).
func (t *translator) setsUnder(c *syntax.BinaryCmd) bool {
	if _, static, ok := t.condition(c.X); !ok || static != nil || !onlySets(c.Y) {
		return false
	}
	t.ifClause(&syntax.IfClause{Position: c.X.Pos(), Cond: []*syntax.Stmt{c.X}, Then: []*syntax.Stmt{c.Y}})
	return true
}

// onlySets: s only assigns variables (missing+=(x), NS=default).
func onlySets(s *syntax.Stmt) bool {
	c, ok := s.Cmd.(*syntax.CallExpr)
	return ok && len(c.Args) == 0 && len(c.Assigns) > 0 && len(s.Redirs) == 0
}

// isLookup: s looks a command up (command -v X, which X, type X, hash X).
func isLookup(s *syntax.Stmt) bool {
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) < 2 {
		return false
	}
	switch lit(c.Args[0]) {
	case "command":
		return lit(c.Args[1]) == "-v" || lit(c.Args[1]) == "-V"
	case "which", "type", "hash":
		return true
	}
	return false
}

// failureFallback: the steps made since m (of the command at fallback)
// run only where those made since first (of the command failed) fail;
// whether they were named not carried.
func (t *translator) failureFallback(first int, m mark, failed, fallback syntax.Node) bool {
	switch {
	case len(t.m.Steps) == m.steps:
	case t.sameRelease(t.m.Steps[first:m.steps], m):
		// helm upgrade x … || helm install x …: khook's helm step
		// installs the release where the upgrade finds none
	case m.steps > first:
		// kubectl apply -f v1.yaml || kubectl apply -f master.yaml
		// (trial 46zi's D6): the fallback never runs after a success
		t.notCarriedSince(m, "a fallback the script runs only when "+t.text(failed)+" fails; "+fallbackAdvice(t.m.Steps[first:m.steps]))
		return true
	default:
		t.info(fallback, t.text(fallback), "the script runs it only when "+t.text(failed)+" fails; khook runs it after it")
	}
	return false
}

// fallbackAdvice is what to do where the steps of the command a fallback
// follows fail. A job's (kubectl run … psql -c "SELECT 1") failure is
// often the check's answer on a fresh cluster, which retries never change
// (trial 46s67i's D2: "give the step retries:").
func fallbackAdvice(failed []*importer.Step) string {
	if !slices.ContainsFunc(failed, func(st *importer.Step) bool { return st.Out.Job == nil }) {
		return "khook's job step fails the run there instead, and retries do not change a check's answer (its failure may be the usual path, as on a fresh cluster): write that job's command by hand as sh -c running its command || the fallback's, so the job runs the fallback where the check fails"
	}
	return "khook's step fails the run there instead (give the step retries:, or run the fallback by hand)"
}

// failureBranch: an if's condition is a command that made steps (since
// first), and the branch its failure takes makes steps too (if ! kubectl
// create -f "$URL"; then kubectl create -f "https://mirror/$URL"; fi, or
// the else of an unnegated one): a fallback, as after ||, which bash runs
// only when the command fails (46zza's D9); the other branch is the
// script's path.
func (t *translator) failureBranch(c *syntax.IfClause, cond *syntax.Stmt, first int) bool {
	var onFail, onOK []*syntax.Stmt
	plainElse := c.Else != nil && len(c.Else.Cond) == 0
	switch {
	case c.Else != nil && !plainElse:
		return false
	case cond.Negated:
		onFail = c.Then
		if plainElse {
			onOK = c.Else.Then
		}
	case plainElse:
		onFail, onOK = c.Else.Then, c.Then
	}
	if !slices.ContainsFunc(onFail, t.mayStep) {
		return false
	}
	m := t.mark()
	t.cond++
	t.stmts(onFail)
	t.cond--
	if t.failureFallback(first, m, cond.Cmd, &syntax.Block{Stmts: onFail}) {
		// none of it runs: what its own conditions and loops were said
		// to carry is moot (if ! retry "$MIRROR"; then exit 1; fi)
		cmds := map[importer.Loc]bool{}
		for _, c := range t.m.Commands[m.commands:] {
			cmds[c.Loc] = true
		}
		t.m.NotCarried = append(t.m.NotCarried[:m.notCarried], slices.DeleteFunc(t.m.NotCarried[m.notCarried:], func(n importer.Note) bool { return !cmds[n.Loc] })...)
	}
	t.stmts(onOK)
	return true
}

// sameRelease: each step made since m installs a release one of steps
// installs (helm upgrade x || helm install x): folded into it, a
// --create-namespace of the fallback's with it.
func (t *translator) sameRelease(steps []*importer.Step, m mark) bool {
	into := map[int]*importer.Step{}
	for i, st := range t.m.Steps[m.steps:] {
		h := st.Out.Helm
		j := slices.IndexFunc(steps, func(x *importer.Step) bool {
			return h != nil && x.Out.Helm != nil && x.Out.Helm.Release == h.Release && x.Out.Helm.Namespace == h.Namespace && x.Out.When == st.Out.When
		})
		if j < 0 {
			return false
		}
		into[i] = steps[j]
	}
	for i, st := range t.m.Steps[m.steps:] {
		into[i].Out.Helm.CreateNamespace = into[i].Out.Helm.CreateNamespace || st.Out.Helm.CreateNamespace
	}
	for i := m.commands; i < len(t.m.Commands); i++ {
		if cm := &t.m.Commands[i]; cm.Fate == importer.FateStep {
			cm.Fate, cm.Step = importer.FateFolded, steps[0].Out.Name
			cm.Why = "the fallback installs the release step " + steps[0].Out.Name + " installs: khook's helm step installs it where it is absent"
		}
	}
	keep := t.mark()
	keep.steps, keep.info = m.steps, m.info // what was said of the fallback's step is moot
	t.unmake(keep)
	return true
}

// isHousekeeping: a statement that only prints, exits or succeeds.
func (t *translator) isHousekeeping(s *syntax.Stmt) bool {
	return t.housekeepingIn(s, map[string]bool{})
}

// housekeepingIn is isHousekeeping, a function of the script that only
// prints (log_warn() { echo "WARN $*"; }: trial 46s67n's D3, its || lost
// its warning) too; seen stops a recursion.
func (t *translator) housekeepingIn(s *syntax.Stmt, seen map[string]bool) bool {
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		if len(c.Args) == 0 {
			return false
		}
		name := lit(c.Args[0])
		if f := t.funcs[name]; f != nil && !seen[name] {
			seen[name] = true
			b, ok := f.decl.Body.Cmd.(*syntax.Block)
			return ok && len(b.Stmts) > 0 && !slices.ContainsFunc(b.Stmts, func(x *syntax.Stmt) bool { return !t.housekeepingIn(x, seen) })
		}
		return housekeeping[name]
	case *syntax.Block:
		for _, x := range c.Stmts {
			if !t.housekeepingIn(x, seen) {
				return false
			}
		}
		return true
	case *syntax.BinaryCmd:
		return t.housekeepingIn(c.X, seen) && t.housekeepingIn(c.Y, seen)
	}
	return false
}

// housekeeping commands change nothing khook would do: output, shell state.
var housekeeping = map[string]bool{
	"echo": true, "printf": true, "true": true, "false": true, ":": true, "exit": true, "return": true,
	"set": true, "shopt": true, "trap": true, "shift": true, "unset": true, "date": true, "wait": true,
	"command": true, "which": true, "type": true, "hash": true, "clear": true, "tput": true, "read": true,
	"break": true, "continue": true, "log": true, "info": true, "warn": true, "die": true, "umask": true,
	"pwd": true,               // prints where it runs (trial 46s70i's N4: "run it in a job")
	"[":   true, "test": true, // a test on its own only sets $?
}

// lit is a word's literal text, "" when it has expansions.
func lit(w *syntax.Word) string {
	if w == nil {
		return ""
	}
	return w.Lit()
}

// display is a path as the user sees it: relative to where the script
// runs (--dir), also above it (../dev/x.sh), never a machine's absolute path.
func (t *translator) display(abs string) string {
	// a path that climbs to / shares nothing with the run directory
	// (../../../dev/zero): its absolute name says more
	if rel, err := filepath.Rel(t.runDir, abs); err == nil && !strings.HasPrefix(rel, strings.Repeat("../", strings.Count(filepath.Clean(t.runDir), string(filepath.Separator)))) {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(abs)
}

// abs resolves a path of the script against the directory it is in now.
func (t *translator) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(t.cwd, p)
}

// specPath is a path of the script as the spec writes it: relative to the
// spec's directory, starting with ./ or ../ (a local chart's form).
func (t *translator) specPath(p string) string {
	if strings.HasPrefix(p, "${") && t.namePrefix(p) {
		// "${PREFIX}gce-volumes.yaml": the variable is part of the file's
		// name, in the script's directory, as a path without one is
		// (trial 46s69e's D1: written from the checkout, read from out/)
		return strings.TrimSuffix(t.specPath("."), "/.") + "/" + p
	}
	if strings.HasPrefix(p, "${") { // under a directory only the run knows
		t.rebaseDefault(p)
		return p
	}
	rel, err := filepath.Rel(t.specDir, t.abs(p))
	if err != nil {
		return filepath.ToSlash(t.abs(p))
	}
	rel = filepath.ToSlash(rel)
	if !strings.HasPrefix(rel, ".") {
		rel = "./" + rel
	}
	return rel
}

// namePrefix: p starts with ${NAME} that begins a file's name
// (${PREFIX}x.yaml, ${ENV}-values.yaml), not a directory (${DIR}/x.yaml)
// nor a whole path or URL: its default, if any, names no directory.
func (t *translator) namePrefix(p string) bool {
	m := varRef.FindStringSubmatch(p)
	if m == nil || !strings.HasPrefix(p, m[0]) {
		return false
	}
	rest := p[len(m[0]):]
	if rest == "" || strings.HasPrefix(rest, "/") || strings.HasPrefix(rest, "${") {
		return false
	}
	v := t.m.Var(m[1])
	return v != nil && v.Format == "" && (v.Default == nil || !strings.ContainsAny(*v.Default, "/:"))
}

// defaultPath is where a path under a variable with a default
// (${REPO_ROOT_DIR}/hack/x.yaml after REPO_ROOT_DIR=${REPO_ROOT_DIR:-$(git
// rev-parse --show-toplevel)}) is at import: under the default's
// directory, as bash finds it with the variable unset; "" when p starts
// with no such variable.
func (t *translator) defaultPath(p string) string {
	m := varRef.FindStringSubmatch(p)
	if m == nil || !strings.HasPrefix(p, m[0]) {
		return ""
	}
	d, ok := t.unset[m[1]] // as the script has it, not the spec's form
	if v := t.m.Var(m[1]); !ok || v == nil || v.Required || v.Secret || d == "" || strings.Contains(d, "${") || strings.Contains(d, "://") {
		return ""
	}
	return filepath.Join(t.abs(d), p[len(m[0]):])
}

// foldInto keeps what the folded branch's install needs on the step that
// carries both (helm list | grep web && helm upgrade web … || helm install
// web … --create-namespace: on a fresh cluster the install runs, and its
// namespace must be made).
func (t *translator) foldInto(name string, st *importer.OutStep) {
	for _, s := range t.m.Steps {
		if s.Out.Name == name && s.Out.Helm != nil && st.Helm != nil {
			s.Out.Helm.CreateNamespace = s.Out.Helm.CreateNamespace || st.Helm.CreateNamespace
			// the install's --timeout 7m bounds the fresh cluster's run (trial 46x's D6)
			if longer(st.Timeout, s.Out.Timeout) {
				s.Out.Timeout = st.Timeout
			}
		}
	}
}

// longer: duration a is set and longer than b (unset: helm's 5m).
func longer(a, b string) bool {
	da, err := time.ParseDuration(a)
	if err != nil {
		return false
	}
	db, err := time.ParseDuration(b)
	if err != nil {
		db = 5 * time.Minute
	}
	return da > db
}

// rebasedAlready: NAME's default is a path from the spec's folder already.
func (t *translator) rebasedAlready(name string) {
	if t.rebased == nil {
		t.rebased = map[string]bool{}
	}
	t.rebased[name] = true
}

// rebaseDefault: p is under ${NAME}, whose default is a directory of the
// script's (K8S_DIR=${K8S_DIR:-./k8s/kind}): the spec reads paths from its
// own folder, so the default is written from there (46zzh's D1: a spec
// written to out/ looked for out/k8s/kind).
func (t *translator) rebaseDefault(p string) {
	m := varRef.FindStringSubmatch(p)
	if m == nil || !strings.HasPrefix(p, m[0]) || t.rebased[m[1]] {
		return
	}
	v := t.m.Var(m[1])
	if v == nil || v.Secret || v.Default == nil || *v.Default == "" || strings.Contains(*v.Default, "${") || strings.Contains(*v.Default, "://") || filepath.IsAbs(*v.Default) {
		return
	}
	t.rebasedAlready(m[1])
	if d := t.specPath(*v.Default); d != *v.Default {
		v.Default = &d
		v.Description = strings.TrimPrefix(strings.TrimSuffix(v.Description, ".")+"; ", "; ") + "a path from the spec's folder"
	}
}
