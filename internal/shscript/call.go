package shscript

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/khook/khook/internal/importer"
)

// cmd is one simple command with its evaluated arguments.
type cmd struct {
	stmt  *syntax.Stmt
	words []*syntax.Word
	args  []string
	ok    bool
	why   string
	split []string // unquoted $NAME of unknown value: the words it gives are only known when the script runs
	stdin *input   // a heredoc, a file redirected in, or what a pipe feeds it
}

// input is what a command reads on its standard input.
type input struct {
	src   *importer.OutSource // a manifest source (file, url, kustomize, inline)
	text  string              // the text, when known (heredocs)
	known bool
	why   string           // why the text is not known
	hdoc  bool             // a here-document
	doc   *syntax.Redirect // the here-document, read again with holes where its text is not known (values.go)
	// missing: a file of the checkout that is not there, which the
	// script fails to read as well (a name's case wrong)
	missing bool
}

// nameFlag takes a namespace or a context: a name, no whitespace in it, so
// an unquoted variable after it is that one word (trial 46s68r's D2: -n
// ${NS} refused, the same $NS inside $K carried).
var nameFlag = map[string]bool{"-n": true, "--namespace": true, "--context": true, "--kube-context": true}

func (t *translator) newCmd(s *syntax.Stmt, c *syntax.CallExpr) *cmd {
	x := &cmd{stmt: s, ok: true, words: c.Args}
	tool := len(c.Args) > 0 && isTool(toolName(lit(c.Args[0])))
	fn := len(c.Args) > 0 && t.funcs[lit(c.Args[0])] != nil
	printing := t.printing
	t.printing = len(c.Args) > 0 && (lit(c.Args[0]) == "echo" || lit(c.Args[0]) == "printf")
	defer func() { t.printing = printing }()
	for i, w := range c.Args {
		if tool { // only a helm or kubectl argument: echo "x=$(date)" sets no X
			w = t.hoist(w)
		}
		if fn && i > 0 {
			w = t.hoistArg(w, lit(c.Args[0]), i)
		}
		if tool && i == len(c.Args)-1 && len(x.args) > 2 && t.droppedArg(w, x.args) {
			continue
		}
		if name := t.unknownWord(w); name != "" && !(i > 0 && nameFlag[lit(c.Args[i-1])]) {
			x.split = append(x.split, "$"+name)
		}
		fs, ok, why := t.fields(w)
		if !ok && x.ok {
			x.ok, x.why = false, why
		}
		x.args = append(x.args, fs...)
	}
	t.commandSecrets(x.args)
	for _, r := range s.Redirs {
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			text, ok, why := t.heredoc(r)
			x.stdin = &input{text: text, known: ok, why: why, src: &importer.OutSource{Inline: text}, hdoc: true, doc: r}
		case syntax.WordHdoc:
			text, ok, _ := t.eval(r.Word)
			x.stdin = &input{text: text + "\n", known: ok, src: &importer.OutSource{Inline: text + "\n"}}
		case syntax.RdrIn:
			if p, ok, _ := t.eval(r.Word); ok {
				x.stdin = t.fileInput(p)
			}
		}
	}
	return x
}

// commandSecrets registers the credentials on any command line, so no
// note that quotes the command shows them: --password X, --token=X,
// --enroll-secret=X (a flag named like a secret: trial 46zd's D6), -p X of
// a login, password=X pairs, a header's value (curl -H "Token: X",
// "Authorization: Bearer X": 46zd's D7), curl -u user:X.
func (t *translator) commandSecrets(args []string) {
	if len(args) > 0 && strings.Contains(filepath.Base(args[0]), "passwd") {
		// mosquitto_passwd -c -b FILE USER PASSWORD, htpasswd -bc …: the
		// password is a word of its own (trial 46zn's D5); every word after
		// the file is masked, the user too (over-masking, never under)
		file := true
		for _, a := range args[1:] {
			if !strings.HasPrefix(a, "-") {
				if !file {
					t.secret(a)
				}
				file = false
			}
		}
	}
	for i, a := range args {
		name, val, eq := strings.Cut(strings.TrimLeft(a, "-"), "=")
		next := ""
		if i+1 < len(args) {
			next = args[i+1]
		}
		if strings.HasPrefix(a, "-") && (importer.SecretKey(name) || secretLooking(name) || (name == "p" && i > 0 && args[1] == "login")) {
			if eq {
				t.secret(val)
			} else {
				t.secret(next)
			}
		}
		if !strings.HasPrefix(a, "-") && eq {
			// vault login … password=s3cr3t, --set-style pairs of any tool,
			// a,b=c pairs each (a value only the run knows is no text)
			for _, part := range strings.Split(a, ",") {
				if k, v, ok := strings.Cut(part, "="); ok && importer.SecretKey(strings.TrimLeft(k, "-")) {
					t.secret(v)
				}
			}
		}
		if a == "--from-literal" {
			a = a + "=" + next
		}
		if lit, ok := strings.CutPrefix(a, "--from-literal="); ok && slices.Contains(args, "secret") {
			// kubectl create secret … --from-literal=K=V: every value of a
			// Secret (46ze's D9: a typed Secret's line quoted whole)
			// but a user name's (secretData says why)
			t.literalSecret(strings.Cut(lit, "="))
		}
		switch {
		case a == "-H" || a == "--header":
			t.headerSecret(next)
		case strings.HasPrefix(a, "--header="), strings.HasPrefix(a, "-H") && len(a) > 2:
			t.headerSecret(strings.TrimPrefix(strings.TrimPrefix(a, "--header="), "-H"))
		case (a == "-u" || a == "--user") && strings.Contains(next, ":") && args[0] == "curl":
			_, pw, _ := strings.Cut(next, ":")
			t.secret(pw)
		}
	}
}

// headerSecret registers the value of an HTTP header that carries a
// credential (Authorization, Cookie, X-Api-Key, Token), and the token
// after its scheme (Bearer X).
func (t *translator) headerSecret(h string) {
	name, val, ok := strings.Cut(h, ":")
	if !ok {
		return
	}
	n := strings.ToLower(strings.TrimSpace(name))
	if n != "authorization" && n != "proxy-authorization" && n != "cookie" && !secretLooking(n) {
		return
	}
	val = strings.TrimSpace(val)
	t.secret(val)
	if _, tok, ok := strings.Cut(val, " "); ok {
		t.secret(strings.TrimSpace(tok))
	}
}

// call is a simple command; stdin is what a pipe feeds it.
func (t *translator) call(s *syntax.Stmt, c *syntax.CallExpr, stdin *input) {
	if len(c.Args) == 0 {
		for _, a := range c.Assigns {
			t.assign(a)
		}
		return
	}
	t.cmdInfo = len(t.m.Info)
	x := t.newCmd(s, c)
	if stdin != nil {
		x.stdin = stdin
	}
	if len(x.args) == 0 {
		return
	}
	name := t.toolVar(x)
	if name == "watch" && t.watchString(x) {
		return
	}
	if wrappers[name] {
		name = t.unwrap(x)
	}
	if tool, v := t.builtTool(c, x); tool != "" {
		t.account(s, importer.FateNotCarried, "", "a "+tool+" command the script builds in $"+v+" (it starts with "+t.vars[v].first()+"): its words are only known when the script runs; write the command out in the script to import it")
		return
	}
	if f := t.funcs[name]; f != nil {
		t.callScriptFunc(x, name, f)
		return
	}
	name, expanded := t.unalias(x, name)
	if !expanded {
		return
	}
	base := name[strings.LastIndex(name, "/")+1:]
	t.forgetInstalls(base, x.args[1:])
	if isTool(base) && x.stdin == nil && t.pipeIn != nil {
		x.stdin, t.pipeIn = t.pipeIn, nil
	}
	switch {
	case base == "helm":
		t.sayBundled(c, x, base)
		t.helm(x)
	case base == "kubectl" || base == "oc":
		t.sayBundled(c, x, "kubectl")
		t.kubectlWrites(x, base)
	case name == "eval":
		t.evalCmd(x, c)
	case name == "source" || name == ".":
		t.source(x)
	case name == "cd" || name == "pushd" || name == "popd":
		t.chdir(x)
	case name == "sleep":
		t.sleep(x)
	case name == "read" && slices.ContainsFunc(x.args, func(a string) bool { return strings.HasPrefix(a, "-") && strings.Contains(a, "p") }):
		t.prompt(s, c, x)
	case t.readsOrVaries(x, c, name):
	case name == "exit" || name == "return":
		t.exitOrReturn(x, name)
	case name == "shift":
		t.shift(x)
	case name == "trap":
		t.trap(x)
	case name == "alias", name == "shopt" && slices.Contains(x.args, "expand_aliases"):
		t.aliasCmd(x)
	case name == "set":
		t.setOpts(x.args[1:])
		if t.errexit && t.errexitAt.File == "" {
			t.errexitAt = t.loc(x.stmt)
		}
	case (name == "cat" && len(x.args) == 1 || name == "tee" && len(x.args) == 2) && x.stdin != nil && x.stdin.hdoc && (writesFile(s) || name == "tee"):
		t.writeFiles(x, name)
	case name == "envsubst" && x.stdin != nil && writesFile(s):
		t.envsubstWrites(x)
	case name == "sed" && writesFile(s) && t.sedWrites(x):
		// sed 's|X|$V|' tmpl > "$F": F is what it prints (46zzf's D2)
	case name == "cp" && t.copies(x), name == "sed" && t.sedInPlace(x):
		// recorded: a step that reads the file carries its text
	case name == "cat" && x.stdin != nil && x.stdin.missing:
		t.readsMissing(x)
	case housekeeping[name], name == "cat" && len(x.args) == 1 && x.stdin != nil && !writesFile(s):
		// cat <<EOF to the terminal prints a message; echo >> f changes f
		t.madeByRedirect(x, name)
	case base == "kind" || base == "k3d" || base == "minikube" || base == "k3s" || base == "kubeadm":
		t.clusterTool(s, x, base)
	case name == "bash" || name == "sh" || strings.HasSuffix(name, ".sh") || strings.HasSuffix(name, ".bash"):
		t.script(x)
	case base == "kustomize":
		t.recordMade(x, base)
		t.notCarried(s, t.text(s), "its output goes nowhere khook can follow; an apply step with kustomize: DIR applies a kustomization")
	case t.moot(x, base):
	case picksCluster(base, x.args[1:]):
		t.notCarried(s, t.text(s), "it picks the cluster the script works on; khook runs against the cluster it is given: point --kubeconfig or --context at it (in CI, the cloud's own login action before khook)")
	default:
		t.otherCommand(s, c, x, name, base)
	}
}

// exitOrReturn is exit or return: the end of the script or function
// where no condition khook cannot decide is around it.
func (t *translator) exitOrReturn(x *cmd, name string) {
	switch {
	case t.cond > 0 && name == "return" && t.inFunc:
		t.mayHaveReturned = t.loc(x.stmt) // curl … && return 0 in a retry loop
	case t.cond == 0 && name == "exit" && t.inFunc && t.mayHaveReturned.Line > 0 && len(x.args) > 1 && x.args[1] != "0":
		// for _ in 1 2 3; do curl … && return 0; sleep 1; done; exit 1:
		// the exit runs only where every try failed (trial 46s68s's D1:
		// the rest of the script dropped, nothing written)
		t.info(x.stmt, t.text(x.stmt), "the script stops here only where the function did not return first (at "+t.mayHaveReturned.String()+", on a test khook cannot decide): the spec follows the path where it returned")
	case t.cond == 0 && (name == "exit" || t.inFunc):
		t.stopped, t.failed, t.returned = true, len(x.args) > 1 && x.args[1] != "0", name == "return"
		if name == "return" && t.inFunc && len(t.when) > t.funcWhen {
			// if [ -n "${IP:-}" ]; then return 0; fi; …; exit 1: the
			// return under a when: of the function's own (found with trial
			// 46s69h's D1: the exit after it decided, the rest dropped)
			t.mayHaveReturned = t.loc(x.stmt)
		}
	}
}

// prompt is read -p "press enter when argocd is ready", a person's
// go-ahead, or an answer (read -p "Namespace: " NS) the spec asks for.
func (t *translator) prompt(s *syntax.Stmt, c *syntax.CallExpr, x *cmd) {
	why := "the script waits for a person here; khook does not: each step waits for what it needs (add a wait: step for something specific)"
	if names := t.reads(c, t.loc(s), "the script asks a person for it ("+t.loc(s).String()+")"); len(names) > 0 {
		// read -p "Switch? (y/N)" CONFIRM: an answer that picks a branch (46zzb's N9)
		why = "the script asks a person here, and khook asks no one: the answer (" + strings.Join(names, ", ") + ") is only known when the script runs, so a step that uses it asks for it as a variable"
	}
	t.info(x.stmt, t.text(x.stmt), why)
}

// clusterTool is a command of kind, k3d, minikube, k3s or kubeadm: said.
func (t *translator) clusterTool(s *syntax.Stmt, x *cmd, base string) {
	t.cluster.created(base, x.args[1:])
	if printsOnly(base, x.args[1:]) {
		// minikube service list, ip, status (trial 46s68d's D1 and N5):
		// it only prints, as echo does; nothing is lost, nothing to say
		return
	}
	if why, nothing := clusterToolWhy(base, x.args[1:]); nothing {
		t.same(s, t.text(s), why) // minikube service --url: a note, no difference (trial 46s68d's N5)
	} else {
		t.notCarried(s, t.text(s), why)
	}
}

// printsOnly: a command of minikube, kind or k3d that only prints what the
// tool knows (an address, a URL, a list, a status, a kubeconfig).
func printsOnly(base string, args []string) bool {
	f := parseFlags(args, set("name", "n", "namespace", "p", "profile", "o", "output", "format", "f"))
	pos := f.pos
	if len(pos) == 0 {
		return false
	}
	sub := strings.Join(pos[:min(2, len(pos))], " ")
	switch base {
	case "minikube":
		switch pos[0] {
		case "ip", "status", "version", "logs", "update-check":
			return true
		case "service":
			return sub == "service list" || slices.Contains(args, "--url")
		case "dashboard":
			return slices.Contains(args, "--url")
		}
		return sub == "addons list" || sub == "profile list" || sub == "node list" || sub == "config view" || sub == "config get" || sub == "image ls" || sub == "image list"
	case "kind":
		return pos[0] == "get" || pos[0] == "version"
	case "k3d":
		return pos[0] == "version" || len(pos) >= 2 && (pos[1] == "list" || pos[1] == "get" || pos[1] == "ls")
	}
	return false
}

// clusterToolWhy is why a command of kind, k3d, minikube, k3s or kubeadm
// is not carried: it makes or removes the cluster, loads an image into
// its nodes, enables an add-on, or opens a connection for a person
// (minikube service web, tunnel: nothing to carry, 46zzc's N1); what only
// prints is printsOnly's.
func clusterToolWhy(base string, args []string) (why string, nothing bool) {
	var pos []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			pos = append(pos, a)
		}
	}
	sub := strings.Join(pos[:min(2, len(pos))], " ")
	switch {
	case sub == "load docker-image" || sub == "load image-archive" || sub == "image load" || sub == "image build" || sub == "image import" || base == "minikube" && sub == "cache add":
		return "it puts an image into the cluster's nodes, which khook does not: build it and push it to a registry the cluster pulls from (or load it) before khook runs", false
	case base == "minikube" && len(pos) >= 3 && (sub == "addons enable" || sub == "addons disable"):
		return "it " + pos[1] + "s minikube's " + pos[2] + " add-on, a component of the cluster: do it before khook runs (or install the component's chart in a helm: step)", false
	case base == "kind" && sub == "export kubeconfig":
		return "it makes the kind cluster it names the kubeconfig's current context; khook runs against the cluster it is given: give khook that cluster (its --context or --kubeconfig)", false
	case base == "minikube" && len(pos) >= 1 && (pos[0] == "service" || pos[0] == "tunnel" || pos[0] == "dashboard"):
		return "it opens a local connection to the cluster (a browser, a tunnel) for a person: nothing to carry for the cluster", true
	}
	return "khook runs against the cluster it is given; create the cluster before khook runs (in CI, a kind or k3d action)", false
}

// otherCommand is a command khook does not run: named at its line, with
// what to do, and the helm or kubectl commands it runs remotely.
func (t *translator) otherCommand(s *syntax.Stmt, c *syntax.CallExpr, x *cmd, name, base string) {
	if t.strayLine(name) {
		return // said at the cat < FILE before it
	}
	if t.downloads(x, base) || t.findExec(x) {
		return // said where a step reads the file, or with the files no step reads; find -exec kubectl: findfiles.go
	}
	if base == "kubens" && len(x.args) == 2 && x.ok && x.args[1] != "-" && !strings.HasPrefix(x.args[1], "-") {
		// kubens ns: kubectl config set-context --current --namespace ns
		// (trial 46zu's D1: ten steps in default)
		t.ctxNS = x.args[1]
		t.info(s, t.text(s), "it sets the current context's namespace: the helm and kubectl steps after it that name none work in "+x.args[1])
		return
	}
	t.recordMade(x, base)
	if why := t.undefinedCommand(s, c, name); why != "" {
		t.notCarried(s, t.text(s), why)
		return
	}
	t.stringCommand(x, base, "khook runs no shell commands; "+whatToDo(base, x.args[1:]))
	t.remoteTools(x, base)
}

// stringCommand names a command khook does not run, and the helm and
// kubectl commands its strings run (toolsInStrings), its line once: a
// string of nothing but helm or kubectl commands (ssh host "export
// KUBECONFIG=… && helm upgrade …") is named by what its commands say,
// not again as the command that runs it (trial 46s70l's N1: each ssh
// line named twice), and one of commands that only read is nothing to
// carry (N2: ssh host "kubectl get pods" named not carried).
func (t *translator) stringCommand(x *cmd, base, why string) {
	named, reads, others := t.toolsInStrings(x, base)
	switch {
	case others:
		t.notCarried(x.stmt, t.text(x.stmt), why)
	case named:
	case reads:
		t.same(x.stmt, t.text(x.stmt), "the helm or kubectl commands "+base+" runs from a string only read (what they print is not carried): nothing to carry")
	default:
		t.notCarried(x.stmt, t.text(x.stmt), why)
	}
}

// callsToolText: text runs helm or kubectl somewhere.
func (t *translator) callsToolText(text string) bool {
	return toolsInText.MatchString(text)
}

// toolsInText finds kubectl or helm commands in a command string.
var toolsInText = regexp.MustCompile(`(?:^|[\s;&|(])(kubectl|helm)\s+[a-z]`)

// toolsInStrings accounts for the helm and kubectl commands a command
// runs from a string (find … -exec sh -c 'kubectl apply -f "$1"', xargs
// … sh -c, ssh host "kubectl …"): each tool is a helm/kubectl command of
// the script at the line (trial 46zk's D2: missing from the count),
// read-only where its commands only read (reads), else not carried
// (named: the line is named). others: a string runs some other command
// (or one the import cannot parse).
func (t *translator) toolsInStrings(x *cmd, base string) (named, reads, others bool) {
	var tools []string
	changes := map[string]bool{}
	for _, a := range x.args[1:] {
		ms := toolsInText.FindAllStringSubmatch(a, -1)
		if len(ms) == 0 {
			continue
		}
		parsed := map[string]bool{} // a tool's commands the parser found: whether one changes the cluster
		f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(a), "")
		others = others || err != nil
		if err == nil {
			syntax.Walk(f, func(n syntax.Node) bool {
				if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
					argv := make([]string, len(c.Args))
					for i, w := range c.Args {
						argv[i] = w.Lit()
					}
					for len(argv) > 1 && (argv[0] == "sudo" || argv[0] == "-E") {
						argv = argv[1:] // sudo -E kubectl …: the tool it runs
					}
					if tool := toolName(argv[0]); tool != "" {
						parsed[tool] = parsed[tool] || !readOnlyTool(argv)
					} else if !housekeeping[argv[0]] && argv[0] != "export" && argv[0] != "cd" {
						others = true
					}
				}
				return true
			})
		}
		for _, m := range ms {
			ch, found := parsed[m[1]]
			if _, ok := changes[m[1]]; !ok {
				tools = append(tools, m[1])
			}
			changes[m[1]] = changes[m[1]] || ch || !found // sudo kubectl …: as the pattern finds it
		}
	}
	for _, tool := range tools {
		if !changes[tool] {
			reads = true
			t.account(x.stmt, importer.FateReadOnly, "", "it only reads, run by "+base+" from a string: nothing to carry")
			continue
		}
		named = true
		runs := base + " runs"
		if base == "find" || base == "xargs" {
			runs += " (for what it finds or reads when the script runs)"
		}
		t.account(x.stmt, importer.FateNotCarried, "", "a "+tool+" command in a string "+runs+", which khook does not: write it in the script itself to import it")
	}
	return named, reads, others
}

// readsOrVaries: read -r -a nodes <<< "$OPTARG" fills a variable only the
// run knows (a loop over it is carried once: trial 46ze's D4); a command
// named by a variable (eval $default: trial 46zd's D9) is only known then.
func (t *translator) readsOrVaries(x *cmd, c *syntax.CallExpr, name string) bool {
	switch {
	case name == "read" && t.readsKnownArray(x, c):
	case name == "read" || name == "readarray" || name == "mapfile":
		t.reads(c, t.loc(x.stmt), "the script reads it when it runs ("+t.loc(x.stmt).String()+")")
	case strings.HasPrefix(name, "${") && !exists(t.defaultPath(name)) && toolOfParam(c.Args[0]) != "":
		// KUBECTL=$(command -v kubectl); $KUBECTL apply …: a helm or kubectl
		// command, counted as one (trial 46s69g's D4: "0 helm/kubectl
		// commands" under the lines naming them)
		tool := toolOfParam(c.Args[0])
		t.account(x.stmt, importer.FateNotCarried, "", "the command is the value of "+name+", only known when the script runs: write "+tool+" in its place to import it")
	case strings.HasPrefix(name, "${") && !exists(t.defaultPath(name)):
		t.notCarried(x.stmt, t.text(x.stmt), "the command is the value of "+name+", only known when the script runs: write it out in the script to import it")
	default:
		return false
	}
	return true
}

// readsKnownArray is `IFS=, read -r -a nodes <<< "$OPTARG"` of a text
// known at import (the script's arguments given): the array holds its
// fields, split as bash splits them, so a loop over it is unrolled.
func (t *translator) readsKnownArray(x *cmd, c *syntax.CallExpr) bool {
	if x.stdin == nil || !x.stdin.known || strings.Contains(x.stdin.text, "${") {
		return false
	}
	name := ""
	for i, a := range x.args[1:] {
		if strings.HasPrefix(a, "-") && strings.HasSuffix(a, "a") && i+2 < len(x.args) {
			name = x.args[i+2]
		}
	}
	if !validName(name) {
		return false
	}
	ifs := " \t\n"
	for _, as := range c.Assigns {
		if as.Name != nil && as.Name.Value == "IFS" && as.Value != nil {
			v, ok, _ := t.eval(as.Value)
			if !ok {
				return false
			}
			ifs = v
		}
	}
	line, _, _ := strings.Cut(x.stdin.text, "\n") // read reads one line
	t.vars[name] = &shVar{array: true, list: strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(ifs, r) })}
	return true
}

// moot says of a command khook does not run that the spec needs nothing
// of it: a mkdir alone (a file written into the folder is carried, or
// named, where a step reads it), the rm of a package helm pull fetched.
func (t *translator) moot(x *cmd, base string) bool {
	switch {
	case base == "mkdir":
		t.recordMade(x, base)
		t.same(x.stmt, t.text(x.stmt), "khook needs no folder made: what the script writes into it is carried, or named, where a step reads it")
	case textFilter[base] && !slices.Contains(x.args, "-i") && t.outputDiscarded(x.stmt):
		// base64 -w0 /dev/null >/dev/null 2>&1; if [ $? -eq 0 ]: which flags
		// the local tool takes (trial 46s69p's D3: named not carried)
		t.same(x.stmt, t.text(x.stmt), "its output goes to /dev/null: it only tries the local "+base+" (a probe of its flags), which changes nothing: nothing to carry")
	case base == "rm" && t.removesPackages(x.args[1:]):
		t.same(x.stmt, t.text(x.stmt), "it removes the package helm pull fetched; the step fetches the chart itself, so there is nothing to remove")
	case installsToolCLI(x.args):
		// wget get.helm.sh/helm-v3…; tar -zxvf helm-v3…; sudo mv linux-amd64/helm
		// /usr/local/bin (trial 46s67f's D1: partial, "run tar in a job: step")
		t.same(x.stmt, t.text(x.stmt), "it fetches or installs the helm or kubectl command on the machine the script runs on; khook runs Helm and the Kubernetes API itself, so there is nothing to carry")
	case base == "rm" && t.removesWritten(x.args[1:]):
		t.same(x.stmt, t.text(x.stmt), "it removes a file the script wrote, whose text the steps that read it carry inline: nothing to carry")
	default:
		return false
	}
	return true
}

// installsToolCLI: the command downloads, unpacks, moves or marks
// executable the helm or kubectl binary (or its archive), and nothing else.
func installsToolCLI(args []string) bool {
	i := 0
	for i < len(args) && args[i] == "sudo" {
		n, _, _ := sudoRuns(args[i:])
		i += n
	}
	if i >= len(args) {
		return false
	}
	switch args[i] {
	case "wget", "curl", "tar", "mv", "cp", "install", "chmod", "rm":
	default:
		return false
	}
	n := 0
	for _, a := range args[i+1:] {
		if strings.HasPrefix(a, "-") {
			continue
		}
		if !toolCLIPath.MatchString(a) && !(args[i] == "mv" || args[i] == "cp" || args[i] == "install") || strings.Contains(a, "${") {
			return false
		}
		if toolCLIPath.MatchString(a) {
			n++
		}
	}
	return n > 0
}

// toolCLIPath is the helm or kubectl binary, its release archive or
// download address (get.helm.sh, dl.k8s.io), or the folder helm's
// archive unpacks to.
var toolCLIPath = regexp.MustCompile(`(^|/)(helm|kubectl)$|(^|/)helm-v[0-9][^/]*\.(tar\.gz|tgz|zip)$|^https?://(get\.helm\.sh|dl\.k8s\.io|storage\.googleapis\.com/kubernetes-release)/|^(linux|darwin)-(amd64|arm64)/?$`)

// removesWritten: rm's arguments are all files the script wrote and a
// step read (sed … > "$F"; kubectl apply -f "$F"; rm -f "$F"); they are
// gone after it, as in bash.
func (t *translator) removesWritten(args []string) bool {
	var keys []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			if w := t.wrote[t.writeKey(a)]; w == nil || !w.read {
				return false
			}
			keys = append(keys, t.writeKey(a))
		}
	}
	for _, k := range keys {
		delete(t.wrote, k)
	}
	return len(keys) > 0
}

// removesPackages: rm's arguments are all packages helm pull fetched.
func (t *translator) removesPackages(args []string) bool {
	n := 0
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		if _, ok := t.packages[t.abs(a)]; !ok {
			return false
		}
		n++
	}
	return n > 0
}

// shift drops the parameters being walked, as bash's shift does.
func (t *translator) shift(x *cmd) {
	n := 1
	if len(x.args) > 1 {
		fmt.Sscanf(x.args[1], "%d", &n)
	}
	if n > len(t.args) {
		if t.argsRest > 0 { // shifts the script's own, unknown ones
			t.argsRest += n - len(t.args)
		}
		n = len(t.args)
	}
	t.args = t.args[n:]
}

// picksCluster: a cloud CLI's command that writes the kubeconfig context
// the script's kubectl then uses (trial 46u's D5).
func picksCluster(tool string, args []string) bool {
	pos := slices.DeleteFunc(slices.Clone(args), func(a string) bool { return strings.HasPrefix(a, "-") })
	// in order, a flag's value between them (aws eks --region R
	// update-kubeconfig: trial 46zc's D10)
	has := func(words ...string) bool {
		i := 0
		for _, p := range pos {
			if i < len(words) && p == words[i] {
				i++
			}
		}
		return i == len(words) && len(pos) > 0 && pos[0] == words[0]
	}
	switch tool {
	case "aws":
		return has("eks", "update-kubeconfig")
	case "gcloud":
		return has("container", "clusters", "get-credentials")
	case "az":
		return has("aks", "get-credentials")
	case "doctl":
		return has("kubernetes", "cluster", "kubeconfig", "save")
	}
	return false
}

// remoteTools accounts the helm and kubectl commands of a here-document
// a command khook does not run is fed (ssh node <<'EOS' … kubectl create
// ns data … EOS): they run elsewhere, not in the spec, each said.
func (t *translator) remoteTools(x *cmd, base string) {
	if x.stdin == nil || !x.stdin.hdoc || x.stdin.text == "" {
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(x.stdin.text), "")
	if err != nil {
		return
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 && toolName(lit(c.Args[0])) != "" {
			said := t.masked(strings.Join(strings.Fields(x.stdin.text[c.Pos().Offset():c.End().Offset()]), " "))
			if len(said) > 60 {
				said = said[:57] + "…"
			}
			t.account(x.stmt, importer.FateNotCarried, "", "its here-document runs `"+said+"` through "+base+", which the spec does not do: make it steps of the spec, or do it by hand")
		}
		return true
	})
}

// callScriptFunc runs a function of the script with the command's
// arguments, fed what the command is fed.
func (t *translator) callScriptFunc(x *cmd, name string, f *function) {
	save := t.pipeIn
	if x.stdin != nil { // cat <<EOF | fn -f -, fn -f - <<EOF: its kubectl apply "$@" reads it
		t.pipeIn = x.stdin
	}
	t.madeByRedirect(x, name) // render_template t.yml > out.yml
	if !t.readsArgs(f, map[*function]bool{}) {
		// main "$@" where main reads no argument: none given changes
		// nothing, so nothing to say (46zzc's N5)
		t.m.Info = append(t.m.Info[:t.cmdInfo], slices.DeleteFunc(t.m.Info[t.cmdInfo:], func(n importer.Note) bool { return n.Why == noArgs })...)
	}
	t.callers = append(t.callers, caller{name: name, at: t.loc(x.stmt), call: t.callText(x)})
	t.withCallArgs(x.words, func() { t.callFunc(f, x.args[1:]) })
	t.returnedGuards()
	t.callers = t.callers[:len(t.callers)-1]
	t.pipeIn = save
}

// readsArgs: function f reads its positional parameters ($1, $#, shift,
// getopts, "$@" to a command), or passes them to a function that does.
func (t *translator) readsArgs(f *function, seen map[*function]bool) bool {
	if seen[f] {
		return false
	}
	seen[f] = true
	reads := false
	syntax.Walk(f.decl.Body, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.FuncDecl:
			return false
		case *syntax.CallExpr:
			if len(x.Args) == 0 {
				return true
			}
			switch name := lit(x.Args[0]); {
			case name == "shift" || name == "getopts":
				reads = true
			case t.funcs[name] != nil && slices.ContainsFunc(x.Args[1:], allArgs):
				// helper "$@": its own reads count; its other arguments are words
				reads = reads || t.readsArgs(t.funcs[name], seen) || slices.ContainsFunc(x.Args[1:], func(w *syntax.Word) bool { return !allArgs(w) && readsParam(w) })
				return false
			}
		case *syntax.ParamExp:
			reads = reads || readsParam(x)
		}
		return !reads
	})
	return reads
}

// readsParam: n reads a positional parameter ($1, ${@}, $*, $#).
func readsParam(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		if pe, ok := n.(*syntax.ParamExp); ok && pe.Param != nil {
			switch v := pe.Param.Value; {
			case v == "@" || v == "*" || v == "#":
				found = true
			default:
				_, err := strconv.Atoi(v)
				found = found || err == nil && v != "0"
			}
		}
		return !found
	})
	return found
}

// wrappers run the command they are given: sudo [-E], nohup, timeout
// [-s SIG] DURATION, command, exec, nice [-n N], stdbuf -oL, env [-i].
var wrappers = set("sudo", "nohup", "timeout", "command", "exec", "nice", "stdbuf", "env", "watch", "summon")

// summonValued are summon's flags that take a value (summon -f secrets.yml
// kubectl …: it only adds variables, as env does; trial 46s69l's D6).
var summonValued = set("-f", "-p", "--provider", "-D", "--yaml", "-i", "--ignore", "-e", "--environment")

// unwrap is the command a wrapper runs, when it is helm or kubectl (sudo -E
// kubectl create ns falco, nohup kubectl port-forward …, timeout 300
// kubectl wait …): khook runs its own, as the identity it is given; any
// other stays the wrapper, named as a command khook does not run
// (command -v kubectl only looks it up). What the wrapper changes is said.
func (t *translator) unwrap(x *cmd) string {
	w := x.args[0]
	i := wrapped(x.args)
	if i < 0 {
		return w // command -v kubectl
	}
	if i+3 == len(x.args) && w == "timeout" && (x.args[i] == "bash" || x.args[i] == "sh") && x.args[i+1] == "-c" {
		// timeout 600 bash -c 'until kubectl get … | grep -q Deployed; do
		// sleep 5; done' (46zza's N4): the string's lines, walked by script
		t.shellTimeout = x.args[i-1] // timeout's duration, before what it runs
		if _, err := strconv.Atoi(t.shellTimeout); err == nil {
			t.shellTimeout += "s"
		}
		t.info(x.stmt, strings.Join(x.args[:i], " "), "the steps of the string it runs take it as their timeout (timeout: "+t.shellTimeout+")")
		x.args = x.args[i:]
		return x.args[0]
	}
	if i < len(x.args) && w == "sudo" && (x.args[i] == "bash" || x.args[i] == "sh" || strings.HasSuffix(x.args[i], ".sh")) {
		// sudo bash update-dns.sh: the script it runs, followed, its
		// commands named at their lines (trial 46s67l's D5)
		t.dropWrapper(x, i)
		return x.args[0]
	}
	if i == len(x.args) || toolName(x.args[i]) == "" {
		return w
	}
	tool := toolName(x.args[i])
	switch w {
	case "sudo":
		t.saySudo(x.stmt, x.args[:i], tool)
	case "timeout":
		t.info(x.stmt, strings.Join(x.args[:i], " "), "khook gives each step its own timeout (timeout:), not this one")
	case "watch":
		// watch kubectl get pods: a display that repeats until stopped
		// (trial 46zo's N4), and stopping it ends the script
		if t.foreground(x) {
			t.halted(x.stmt, "watch repeats it until it is stopped, and stopping it (Ctrl-C) ends the script", "drop what follows it if it was never meant to run")
		}
	case "summon":
		file := "secrets.yml"
		for j := 1; j+1 < i; j++ {
			if x.args[j] == "-f" {
				file = x.args[j+1]
			}
		}
		t.info(x.stmt, strings.Join(x.args[:i], " "), "summon gives "+tool+" the variables "+file+" names, secrets from a secrets store, and khook runs its own "+tool+" without them: run khook under summon (summon -f "+file+" khook …) if something it runs reads them")
	case "env":
		var names []string
		for _, a := range x.args[1:i] {
			if k, _, ok := strings.Cut(a, "="); ok && k == "KUBECONFIG" {
				t.info(x.stmt, "env KUBECONFIG", ownKubeconfig)
			} else if ok {
				names = append(names, k) // never the value: it may be a secret
			}
		}
		if len(names) > 0 {
			t.info(x.stmt, "env "+strings.Join(names, " "), "khook runs its own "+tool+" without these variables")
		}
	}
	t.dropWrapper(x, i)
	return x.args[0]
}

// watchString is `watch -d 'kubectl get pods; kubectl get svc;'`: watch
// runs its words as one string with sh -c, over and over, so its commands
// are walked as the script's, once, a get read-only as it is bare (trial
// 46s69r's D3: named not carried, "write it in the script itself").
// Stopping it ends the script, as for `watch kubectl get pods`.
func (t *translator) watchString(x *cmd) bool {
	i := 1
	for ; i < len(x.args) && strings.HasPrefix(x.args[i], "-"); i++ {
		switch a := x.args[i]; {
		case a == "-x" || a == "--exec" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "x"):
			return false // no shell: the words are the command (unwrap)
		case a == "-n" || a == "--interval":
			i++
		}
	}
	if i == len(x.args) || toolName(x.args[i]) != "" || !x.ok {
		return false
	}
	text := strings.Join(x.args[i:], " ")
	if !t.callsToolText(text) {
		return false
	}
	if t.foreground(x) {
		t.halted(x.stmt, "watch repeats it until it is stopped, and stopping it (Ctrl-C) ends the script", "drop what follows it if it was never meant to run")
	}
	vars := maps.Clone(t.vars)
	defer func() { t.vars = vars }() // sh -c: a shell of its own
	return t.walkText(text, x.stmt)
}

// dropWrapper leaves the command the wrapper runs, its first i words
// dropped: a word of the wrapper's own that only the run knows (sudo -u
// "$U": trial 46s70g's D2) leaves the command's own words known.
func (t *translator) dropWrapper(x *cmd, i int) {
	if len(x.words) != len(x.args) {
		x.args = x.args[i:]
		return
	}
	dropped := x.words[:i]
	x.args, x.words = x.args[i:], x.words[i:]
	x.split = slices.DeleteFunc(x.split, func(s string) bool {
		return slices.ContainsFunc(dropped, func(w *syntax.Word) bool { return "$"+t.unknownWord(w) == s }) && !slices.ContainsFunc(x.words, func(w *syntax.Word) bool { return "$"+t.unknownWord(w) == s })
	})
	if !x.ok {
		x.ok, x.why = true, ""
		for _, w := range x.words {
			if _, ok, why := t.fields(w); !ok {
				x.ok, x.why = false, why
				break
			}
		}
	}
}

// saySudo says what sudo changes for the helm or kubectl it runs: khook
// runs its own as the identity it is given, not as root or the user -u
// names, and without the VAR=value sudo sets (names only, never values).
func (t *translator) saySudo(st *syntax.Stmt, sudo []string, tool string) {
	_, user, env := sudoRuns(sudo)
	if user != "" {
		t.info(st, "sudo -u "+user, "khook runs its own "+tool+" with the kubeconfig it is given, not as the user sudo -u names: give khook that user's kubeconfig")
	} else {
		t.info(st, "sudo", "khook runs its own "+tool+", with the identity it is given (its kubeconfig), not root's")
	}
	if slices.Contains(env, "KUBECONFIG") {
		t.info(st, "sudo KUBECONFIG", ownKubeconfig)
		env = slices.DeleteFunc(env, func(n string) bool { return n == "KUBECONFIG" })
	}
	if len(env) > 0 {
		t.info(st, "sudo "+strings.Join(env, " "), "khook runs its own "+tool+" without these variables")
	}
}

// wrapped is the index in args of the command wrapper args[0] runs, past
// its flags and their values, timeout's duration, env's NAME=value (-1
// for command -v, which only looks it up).
func wrapped(args []string) int {
	w := args[0]
	if w == "sudo" {
		i, _, _ := sudoRuns(args)
		return i
	}
	i := 1
	for i < len(args) {
		a := args[i]
		switch {
		case w == "command" && (a == "-v" || a == "-V"):
			return -1
		case strings.HasPrefix(a, "-"):
			if (w == "timeout" && (a == "-s" || a == "-k" || a == "--signal" || a == "--kill-after")) || (w == "nice" && a == "-n") || (w == "env" && (a == "-u" || a == "-C")) || (w == "watch" && (a == "-n" || a == "--interval")) || (w == "summon" && summonValued[a]) {
				i++ // its value
			}
			i++
			continue
		case w == "timeout" && i == firstArg(args):
			i++ // the duration
			continue
		case w == "env" && strings.Contains(a, "="):
			i++
			continue
		}
		break
	}
	return i
}

// sudoRuns is the index in args (args[0] is sudo) of the command sudo
// runs, past its options (-E, -H, --preserve-env, -u USER, --user=USER,
// -iu USER), a -- and the VAR=value operands it sets for the command;
// with the user -u names ("" for root) and those variables' names, never
// their values (trial 46s70g's D2 and D3: sudo -u "$U" helm … and sudo
// DEBIAN_FRONTEND=noninteractive apt-get … read $U and the variable as
// the command).
func sudoRuns(args []string) (i int, user string, env []string) {
	i = 1
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "-" {
		a := args[i]
		i++
		if a == "--" {
			break
		}
		val := ""
		if long, v, eq := strings.Cut(a, "="); strings.HasPrefix(a, "--") {
			if val = v; !eq && sudoLongValued[long] && i < len(args) {
				val, i = args[i], i+1
			}
			if long == "--user" {
				user = val
			}
			continue
		}
		// a cluster of short options: the first that takes a value takes
		// the rest of the word, or the next one (-uUSER, -Eu USER)
		for k := 1; k < len(a); k++ {
			if strings.IndexByte(sudoShortValued, a[k]) < 0 {
				continue
			}
			if val = a[k+1:]; val == "" && i < len(args) {
				val, i = args[i], i+1
			}
			if a[k] == 'u' {
				user = val
			}
			break
		}
	}
	for i < len(args) {
		k, _, ok := strings.Cut(args[i], "=")
		if !ok || !validName(k) {
			break
		}
		env, i = append(env, k), i+1
	}
	return i, user, env
}

// sudoShortValued and sudoLongValued are sudo's options that take a
// value (sudo(8): -u user, -g group, -C num, -D directory, …).
const sudoShortValued = "aCcDgpRrTtUu"

var sudoLongValued = set("--auth-type", "--close-from", "--login-class", "--chdir", "--group", "--host", "--prompt", "--chroot", "--role", "--type", "--command-timeout", "--other-user", "--user")

// firstArg is the index of the first argument of a wrapper that is no
// flag (timeout's duration).
func firstArg(args []string) int {
	for i := 1; i < len(args); i++ {
		if !strings.HasPrefix(args[i], "-") {
			return i
		}
		if args[i] == "-s" || args[i] == "-k" || args[i] == "--signal" || args[i] == "--kill-after" {
			i++
		}
	}
	return len(args)
}

// unalias is the command name an alias stands for, when bash expands it
// (after shopt -s expand_aliases); else the command is named (alias
// k=kubectl; k apply …: a script's bash expands no alias) and ok is false.
func (t *translator) unalias(x *cmd, name string) (string, bool) {
	a, ok := t.aliases[name]
	if !ok && name == "k" && t.funcs[name] == nil {
		// k apply …: kubectl's shorthand of an interactive shell, which a
		// script does not have (trial 46s67b's D1): a kubectl command, named
		t.account(x.stmt, importer.FateNotCarried, "", "k is not defined in the script (kubectl's alias in an interactive shell, which bash does not have when it runs a script): the command fails as written; write kubectl in the script")
		return name, false
	}
	if !ok || t.funcs[name] != nil {
		return name, true
	}
	if t.expandAliases {
		x.args = append(strings.Fields(a), x.args[1:]...)
		return t.toolVar(x), true
	}
	if isTool(toolName(name)) {
		// alias helm=/usr/local/bin/helm: not expanded, helm runs as
		// written, from PATH (trial 46zo's D2)
		t.info(x.stmt, "alias "+name, "bash does not expand an alias in a script, so "+name+" runs as written; khook runs its own")
		return name, true
	}
	if toolName(strings.Fields(a + " x")[0]) != "" {
		t.account(x.stmt, importer.FateNotCarried, "", name+" is an alias of "+a+", which bash does not expand in a script (only after shopt -s expand_aliases): the command fails as written; write "+a+" in the script")
	} else {
		t.notCarried(x.stmt, t.text(x.stmt), name+" is an alias, which bash does not expand in a script: the command fails as written")
	}
	return name, false
}

// aliasCmd records alias NAME=VALUE and shopt -s|-u expand_aliases.
func (t *translator) aliasCmd(x *cmd) {
	if x.args[0] == "shopt" {
		t.expandAliases = slices.Contains(x.args, "-s")
		return
	}
	for _, a := range x.args[1:] {
		if k, v, ok := strings.Cut(a, "="); ok {
			if t.aliases == nil {
				t.aliases = map[string]string{}
			}
			t.aliases[k] = v
		}
	}
}

// madeByRedirect remembers the files a command's output goes to (a
// function's call: what it prints is only known when it runs).
func (t *translator) madeByRedirect(x *cmd, name string) {
	for _, r := range x.stmt.Redirs {
		if r.Op == syntax.RdrOut || r.Op == syntax.AppOut || r.Op == syntax.ClbOut || r.Op == syntax.RdrAll || r.Op == syntax.AppAll {
			p, ok, _ := t.eval(r.Word)
			switch {
			case ok && strings.Contains(p, "${"):
				// echo … > $DIR/values.yaml: a step reading it is told who
				// makes it (trial 46s69t's D1)
				t.made = append(t.made, made{path: t.abs(p), at: t.loc(x.stmt), name: name})
			case ok && p != "/dev/null":
				t.overwritten(p, x)
				t.changed(p, x)
				t.made = append(t.made, made{path: t.abs(p), at: t.loc(x.stmt), name: name})
			}
		}
	}
}

// recordMade remembers the local paths a command khook does not run
// names (its arguments, the files it writes to), so an apply of a path
// missing at import can name the commands that make it (mkdir -p
// manifests/setup, jsonnet -m manifests). A removal makes nothing.
func (t *translator) recordMade(x *cmd, name string) {
	if name == "rm" || name == "rmdir" || name == "unlink" {
		return
	}
	if name == "csplit" {
		t.csplitMade(x)
	}
	if name == "git" && len(x.args) > 2 && x.args[1] == "clone" {
		// git clone URL [DIR]: DIR, or the URL's last name without .git
		// (trial 46s68l's D1: its files named as made by nothing)
		if dir := cloneDir(x.args[2:]); dir != "" {
			t.made = append(t.made, made{path: t.abs(dir), at: t.loc(x.stmt), name: "git clone"})
		}
		return
	}
	var paths []string
	for _, a := range x.args[1:] {
		if strings.HasPrefix(a, "-") {
			_, v, ok := strings.Cut(a, "=")
			if !ok {
				continue
			}
			a = v
		}
		if w := t.wrote[t.writeKey(a)]; w != nil && w.readBy == "" {
			w.readBy = name + " at " + t.loc(x.stmt).String()
		}
		if name == "sed" && !strings.Contains(a, "${") && !exists(t.abs(a)) && t.madeBy(t.abs(a)) == "" {
			continue // sed makes no file it reads (sed -i of one not there fails: 46zza's D7)
		}
		paths = append(paths, a)
		t.changed(a, x) // yq -i f, perl -pi f, tee -a f
	}
	t.redirected(x)
	for _, r := range x.stmt.Redirs {
		if r.Op == syntax.RdrOut || r.Op == syntax.AppOut || r.Op == syntax.RdrAll || r.Op == syntax.AppAll || r.Op == syntax.ClbOut {
			if p, ok, _ := t.eval(r.Word); ok {
				paths = append(paths, p)
			}
		}
	}
	for _, p := range paths {
		if p == "" || strings.Contains(p, "${") || strings.Contains(p, "://") {
			continue
		}
		if abs := t.abs(p); !within(t.cwd, abs) { // the directory it runs in, or above: not what it makes
			t.made = append(t.made, made{path: abs, at: t.loc(x.stmt), name: name})
		}
	}
}

// envsubstWrites is envsubst < tmpl > out.yaml: out.yaml is what it prints.
func (t *translator) envsubstWrites(x *cmd) {
	info := len(t.m.Info)
	t.notATool = true
	in, ok := t.envsubst(x, []*syntax.Stmt{x.stmt})
	t.notATool = false
	if ok {
		x.stdin = in
		t.writeFiles(x, "envsubst")
		if w := t.wrote[t.outFile(x)]; w != nil {
			// said where a step reads it (trial 46s67h's D6)
			w.info, t.m.Info = append(w.info, t.m.Info[info:]...), t.m.Info[:info]
		}
	} else if key := t.outFile(x); key != "" {
		// named not carried at its line: what reads the file says who makes it (trial 46zv's D3)
		t.wrote[key] = &written{why: "made by the envsubst at " + t.loc(x.stmt).String() + ", which is not carried: see that line", at: t.loc(x.stmt)}
	}
}

// csplitMade records the pieces csplit writes where it runs, xx00, xx01,
// … (-f PREFIX, -n DIGITS), none of which its arguments name (trial
// 46s67h's D5: kubectl apply -f xx00 said nothing in the script made it).
func (t *translator) csplitMade(x *cmd) {
	prefix, digits := "xx", 2
	for i := 1; i < len(x.args); i++ {
		a := x.args[i]
		switch {
		case (a == "-f" || a == "--prefix" || a == "-n" || a == "--digits") && i+1 < len(x.args):
			i++
			if a == "-f" || a == "--prefix" {
				prefix = x.args[i]
			} else if n, err := strconv.Atoi(x.args[i]); err == nil {
				digits = n
			}
		case strings.HasPrefix(a, "--prefix="):
			prefix = a[len("--prefix="):]
		case strings.HasPrefix(a, "--digits="):
			if n, err := strconv.Atoi(a[len("--digits="):]); err == nil {
				digits = n
			}
		}
	}
	if prefix == "" || strings.Contains(prefix, "${") || digits < 1 || digits > 6 {
		return
	}
	for i := 0; i < 100; i++ { // the first hundred pieces: more is no script's
		t.made = append(t.made, made{path: t.abs(fmt.Sprintf("%s%0*d", prefix, digits, i)), at: t.loc(x.stmt), name: "csplit"})
	}
}

// madeBy names the commands khook does not run that name abs, a
// directory it is in, or a path in it, as "FILE:LINE command, …".
// cloneDir is the folder git clone's arguments make ("" when unknown).
func cloneDir(args []string) string {
	valued := set("b", "branch", "depth", "o", "origin", "c", "config", "reference", "separate-git-dir", "j", "jobs", "filter", "u", "upload-pack", "template", "shallow-since", "shallow-exclude")
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			if valued[strings.TrimLeft(a, "-")] && !strings.Contains(a, "=") {
				i++
			}
			continue
		}
		pos = append(pos, a)
	}
	switch {
	case len(pos) >= 2:
		return pos[1]
	case len(pos) == 1:
		base := strings.TrimSuffix(strings.TrimSuffix(pos[0], "/"), ".git")
		return base[strings.LastIndexAny(base, "/:")+1:]
	}
	return ""
}

func (t *translator) madeBy(abs string) string {
	var by []string
	for _, m := range t.made {
		// mkdir makes the folder, not the files in it (46zzg's D7)
		if within(abs, m.path) && m.name != "mkdir" || within(m.path, abs) {
			if s := m.at.String() + " " + m.name; !slices.Contains(by, s) {
				by = append(by, s)
			}
		}
	}
	return strings.Join(by, ", ")
}

// within: path is dir or inside it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// toolVar reads a command word that is a variable whose value at import
// is helm or kubectl (HELM=${HELM:-helm}, then $HELM upgrade …) as that
// command, with a note; the command word otherwise.
func (t *translator) toolVar(x *cmd) string {
	if len(x.words) > 0 {
		if tool := t.paramTool(x.stmt, x.args[0], x.words[0]); tool != "" {
			x.args[0] = tool
		}
	}
	return x.args[0]
}

// paramTool is the helm or kubectl a command word w (its value name)
// stands for, said at s; "" when it is none. ${KUBECTL}, ${HELM} the
// script never sets (the harness that runs it exports the binary:
// uptest's KUBECTL) are read as kubectl or helm, as the defaulted form is
// (trial 46s69g's D2: every command "only known when the script runs",
// nothing written).
func (t *translator) paramTool(s *syntax.Stmt, name string, w *syntax.Word) string {
	if !strings.HasPrefix(name, "${") || !strings.HasSuffix(name, "}") || strings.Count(name, "${") != 1 {
		return ""
	}
	v := t.m.Var(name[2 : len(name)-1])
	switch {
	case v != nil && v.Default != nil && toolName(*v.Default) != "":
		t.toolVarNote(s, name, "read as its default "+*v.Default+" ("+v.From.String()+"); khook runs its own "+toolName(*v.Default)+", whatever the variable is set to")
		return *v.Default
	case v == nil || v.Secret || t.vars[v.Name] != nil || !toolParam(w):
		return ""
	}
	tool := toolOfParam(w)
	t.toolVarNote(s, name, "read as "+tool+": the script never sets "+v.Name+", so it is the "+tool+" the environment that runs it names; khook runs its own "+tool)
	return tool
}

// toolVarNote says once at a line (however often a function holding it
// is called) how a variable in the command word was read.
func (t *translator) toolVarNote(s *syntax.Stmt, name, why string) {
	note := importer.Note{Loc: t.loc(s), What: name, Why: why}
	if !slices.Contains(t.m.Info, note) { // once for a function's line, however often it is called
		t.m.Info = append(t.m.Info, note)
	}
}

// downloadURL is a URL of a file to download (a manifest, an archive, a
// script), not of a service's API.
var downloadURL = regexp.MustCompile(`^https?://.*\.(ya?ml|json|tgz|tar\.gz|zip|sh)$`)

// whatToDo is the advice for a command khook does not run.
func whatToDo(name string, args []string) string {
	switch name {
	case "docker", "podman", "buildah":
		if len(args) > 0 && (args[0] == "build" || args[0] == "push" || args[0] == "tag" || args[0] == "buildx" || args[0] == "login") {
			return "build and push images in CI before khook runs"
		}
		// docker exec node1 ip link …: the host's containers (trial 46zd's D8)
		return "it works on " + name + "'s containers on the machine the script runs on, not the cluster: do it before khook runs, by hand or in CI"
	case "curl", "wget":
		if slices.ContainsFunc(args, func(a string) bool { return downloadURL.MatchString(a) || a == "-o" || a == "-O" || a == "--output" }) {
			return "download in CI before khook runs, or reference a manifest by url: in an apply step"
		}
		// curl -X POST …/api/v1/login: a call to a service (trial 46t's D5)
		return "it calls a service's API, which khook does not; run it in a job: step (a container image that has " + name + ") or by hand"
	case "vault", "aws", "gcloud", "az":
		// gcloud iam … create makes no value to hand in (trial 46s69g's N6)
		return "it works on the cloud account or the vault, not the cluster: run it before khook (in CI) or in a job: step, and where the script uses what it prints, hand that in as a secret variable (KHOOK_SECRET_NAME)"
	case "git":
		return "check out what the spec needs before khook runs"
	case "sudo":
		// sudo mv virtctl /usr/local/bin/: the advice of what it runs
		// (46zza's N3), past sudo's -u USER and VAR=value (trial 46s70g's D3)
		all := append([]string{name}, args...)
		if i, _, _ := sudoRuns(all); i < len(all) {
			return whatToDo(all[i], all[i+1:])
		}
	case "rm", "rmdir", "unlink":
		return "it removes local files and makes none: nothing for the spec to do"
	case "mv", "cp", "install", "ln", "chmod":
		if slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, "/bin") }) {
			return "it installs a command on the machine the script runs on, which khook needs none of: install it by hand where you use it"
		}
	}
	switch name {
	case "mkdir", "cp", "mv", "touch", "ln", "chmod", "install", "tee", "sed", "awk", "envsubst", "openssl", "ssh-keygen":
		return "it works on local files: do it before khook runs, or commit the file it makes"
	}
	if strings.HasSuffix(name, ":") || name == "EOF" {
		// replicas: 1 after cat < f instead of cat << EOF (trial 46zo's D4)
		return "bash runs " + name + " as a command, which is not found: is it a line of a here-document whose << is missing above? fix the script"
	}
	if strings.HasPrefix(name, "-") {
		// pod=/usr/local/bin/kubectl -n x get …: a $( ) missing (trial 46ze's D10)
		return "bash runs " + name + " as a command, which fails (is a $( ) missing around the command before it?); fix the script"
	}
	return "run it in a job: step (a container image that has " + name + ") or by hand before khook"
}

// callFunc follows a function the script calls, with its arguments.
func (t *translator) callFunc(f *function, args []string) {
	if t.depth > 30 {
		return
	}
	saveArgs, saveIn, saveFile, savePath, saveSrc, saveFrame, saveRest, saveRet := t.args, t.inFunc, t.file, t.scriptPath, t.src, t.frame, t.argsRest, t.mayHaveReturned
	saveGuard, saveRetGuard, saveExitSet, saveFiles := t.exitGuard, t.retGuard, t.exitSet, t.fnFiles
	t.exitGuard, t.retGuard, t.exitSet, t.fnFiles = nil, false, false, t.files
	// the caller's return khook cannot decide stays the callee's: an exit
	// in log_err after if …; then return 0; fi runs only where the caller
	// did not return (trial 46s69s's D1: the rest of the script dropped)
	t.args, t.inFunc, t.file, t.scriptPath, t.src, t.argsRest = args, true, f.file, f.path, f.src, 0
	saveWhen := t.funcWhen
	t.funcWhen = len(t.when)
	defer func() { t.funcWhen = saveWhen }()
	t.frames++
	t.frame = t.frames
	t.depth++
	t.locals = append(t.locals, frame{})
	t.stmt(f.decl.Body)
	for name, v := range t.locals[len(t.locals)-1] {
		if v == nil {
			delete(t.vars, name)
		} else {
			t.vars[name] = v
		}
	}
	t.locals = t.locals[:len(t.locals)-1]
	for len(t.keeps) > 0 && t.keeps[len(t.keeps)-1].depth == t.depth {
		k := t.keeps[len(t.keeps)-1]
		t.keepIfExists(k.check, t.m.Steps[k.from:], "as the script, where the check finds it, returns before it on an answer that keeps it")
		t.keeps = t.keeps[:len(t.keeps)-1]
	}
	t.depth--
	if t.returned || !t.stopped { // return ends the function, not the script; exit ends both
		t.stopped, t.failed, t.returned = false, false, false
	}
	if t.retGuard && !t.exitSet {
		t.exitGuard = nil // only returns: what follows the call runs
	}
	t.exitGuard, t.retGuard, t.exitSet, t.fnFiles = append(saveGuard, t.exitGuard...), saveRetGuard, saveExitSet || t.exitSet, saveFiles
	t.args, t.inFunc, t.file, t.scriptPath, t.src, t.frame, t.argsRest, t.mayHaveReturned = saveArgs, saveIn, saveFile, savePath, saveSrc, saveFrame, saveRest, saveRet
}

// source reads a sourced file into the walk; a missing one is bad input.
func (t *translator) source(x *cmd) {
	if len(x.args) < 2 || !x.ok {
		t.notCarried(x.stmt, t.text(x.stmt), "the file it sources is only known when the script runs ("+x.why+")")
		return
	}
	if path, ok := t.sourcedByDefault(x); ok {
		t.followSourced(x, path)
		return
	}
	if strings.Contains(x.args[1], "${") {
		// source "$CONFIG_DIR/env.sh" with CONFIG_DIR from the environment:
		// which file is only known when the script runs
		how := "import again from where that path resolves, or write its values as variables"
		if strings.Contains(x.args[1], "${ARG") {
			how = "give the script's arguments after FILE (khook import script FILE ARG…)"
		}
		t.notCarried(x.stmt, t.text(x.stmt), "the file it sources is only known when the script runs ("+x.args[1]+"), so what it defines is missing below: "+how)
		return
	}
	t.followSourced(x, x.args[1])
}

// followSourced walks a sourced file. Arguments after FILE are its
// positional parameters, and the caller's come back after it, as bash
// does: a shift there leaves the caller's $1 (source entry.sh "$@" that
// reads ACTION=$1 and shifts: trial 46s69j's D2). Without arguments the
// file shares the caller's, and its shift is the caller's; "$@" of
// arguments not given to the import stands for the script's own, still
// given back after it.
func (t *translator) followSourced(x *cmd, path string) {
	if len(x.words) < 3 {
		t.follow(x, path, true)
		return
	}
	saveArgs, saveRest, saveGiven := t.args, t.argsRest, t.argsGiven
	if len(x.args) > 2 {
		t.args, t.argsRest, t.argsGiven = x.args[2:], 0, true
	}
	t.withCallArgs(x.words[1:], func() { t.follow(x, path, true) })
	t.args, t.argsRest, t.argsGiven = saveArgs, saveRest, saveGiven
}

// sourcedByDefault is the file a source of a path made of variables of
// the environment with defaults reads where they are unset, as bash does
// (ENV_FILE="${APP_ENV_FILE:-$ROOT/.env}"; source "$ENV_FILE": 46zzc's
// D1), when that file is there; said at the line, since a run that sets
// one sources another file.
func (t *translator) sourcedByDefault(x *cmd) (string, bool) {
	path, names := x.args[1], []string{}
	for _, m := range varRef.FindAllStringSubmatch(x.args[1], -1) {
		d, ok := t.unset[m[1]]
		if v := t.m.Var(m[1]); !ok || v == nil || v.Required || v.Secret {
			return "", false
		}
		path, names = strings.Replace(path, m[0], d, 1), append(names, m[1])
	}
	if len(names) == 0 || strings.Contains(path, "${") {
		return "", false
	}
	if st, err := os.Stat(t.abs(path)); err != nil || st.IsDir() {
		return "", false
	}
	t.info(x.stmt, t.text(x.stmt), "it sources "+t.display(t.abs(path))+", where bash reads it with "+strings.Join(names, ", ")+" unset (the script's default); a run that sets "+strings.Join(names, ", ")+" sources another file, which the spec does not follow: write what that file sets as variables")
	return path, true
}

// unsetValue keeps the value bash gives ${NAME:-d} where NAME is unset
// (d as the script has it, not the spec's form of a path), for a source
// of it.
func (t *translator) unsetValue(name, d string) {
	if t.unset == nil {
		t.unset = map[string]string{}
	}
	t.unset[name] = d
}

// follow walks another script file: sourced (its variables and functions
// stay) or run (`bash other.sh`, `./other.sh`).
func (t *translator) follow(x *cmd, path string, sourced bool) {
	abs := t.abs(path)
	for _, s := range t.sourcing {
		if s == abs {
			return
		}
	}
	if _, err := os.Stat(abs); err != nil && !sourced {
		t.notCarried(x.stmt, t.text(x.stmt), "it runs "+t.display(abs)+", which is not there at import; import that script too, or run it before khook")
		return
	}
	f, src, err := t.parse(abs, t.display(abs), t.line(x.stmt))
	if err != nil && sourced && t.notSourced(x, path, abs) {
		return
	}
	if err != nil {
		t.inputErr = err
		return
	}
	t.sourcing = append(t.sourcing, abs)
	cwd, guards := t.cwd, len(t.returnGuards)
	t.runFile(f, src, abs)
	t.stopped = false
	if !sourced { // an exit there ends that script, not this one
		t.cwd, t.exitGuard = cwd, nil
		t.sayGuards(guards, func(g returnGuard) bool { return g.exits })
	}
	t.sourcing = t.sourcing[:len(t.sourcing)-1]
}

// notSourced names a source of a file the import cannot read that is no
// input of it: one the script writes before (echo … >> .bashrc && source
// .bashrc), or one of the machine the script runs on, outside the
// checkout (/local/setup/parameters). A file of the checkout that is
// not there stays bad input.
func (t *translator) notSourced(x *cmd, path, abs string) bool {
	if _, err := os.Stat(abs); err == nil {
		return false // there, but not a script: bad input
	}
	how := ": what it sets is only known %s: give those values as variables (NAME=value khook import script …)"
	by := t.madeBy(abs)
	if w := t.wrote[t.writeKey(path)]; w != nil && by == "" {
		by = w.at.String()
	}
	if at, ok := t.supplies[abs]; ok {
		t.notCarried(x.stmt, t.text(x.stmt), "it sources "+t.display(abs)+", which you place before the run (the script's guard at "+at.String()+")"+fmt.Sprintf(how, "then"))
		return true
	}
	if by != "" {
		t.notCarried(x.stmt, t.text(x.stmt), "it sources "+t.display(abs)+", which the script makes when it runs ("+by+")"+fmt.Sprintf(how, "then"))
		return true
	}
	if !outside(t.runDir, abs) {
		return false
	}
	t.notCarried(x.stmt, t.text(x.stmt), "it sources "+abs+", a file of the machine the script runs on, not of the checkout"+fmt.Sprintf(how, "there")+", or import where the file is")
	return true
}

// script is `bash file.sh`, `sh -c '…'`, `./file.sh`: a script whose
// path is known is followed with its arguments, also when they end in
// the script's own "$@" and those are not known at import (run with no
// arguments): there the called script's $1 is the caller's.
func (t *translator) script(x *cmd) {
	args, words, to := x.args, x.words, t.shellTimeout
	t.shellTimeout = ""
	errexit, nounset, direct := false, false, true // a new shell: set -e and -u only from its options or its #! line
	if args[0] == "bash" || args[0] == "sh" {
		args, words, direct = args[1:], words[1:], false
		for len(args) > 0 && strings.HasPrefix(args[0], "-") {
			if args[0] == "-c" && len(args) == 2 && x.ok && t.callsToolText(args[1]) {
				// bash -c 'until kubectl get …; do sleep 5; done': its lines
				// are the script's, in a shell of their own (its variables
				// stay there)
				vars, before := maps.Clone(t.vars), len(t.m.Steps)
				walked := t.walkText(args[1], x.stmt)
				t.vars = vars
				for _, st := range t.m.Steps[before:] {
					if to != "" && (st.Out.Wait != nil || st.Out.Rollout != nil) {
						st.Out.Timeout = to
					}
				}
				if walked {
					return
				}
			}
			if args[0] == "-c" {
				t.stringCommand(x, x.args[0], "a command string; write its commands in the script itself to import them")
				return
			}
			errexit = errexit || shortOpt(args[0], '-', 'e')
			nounset = nounset || shortOpt(args[0], '-', 'u')
			args, words = args[1:], words[1:]
		}
	}
	if len(args) == 0 && x.stdin != nil && x.stdin.hdoc && t.callsToolText(x.stdin.text) {
		// sudo -u "$U" bash <<EOF … kubectl apply … EOF: bash runs the
		// here-document's lines, in a shell of its own, as it does bash
		// -c's (trial 46s70g's D2: named "only known when it runs")
		var at syntax.Node = x.stmt
		for _, r := range x.stmt.Redirs {
			if r.Hdoc != nil {
				at = r.Hdoc // its lines are the body's
			}
		}
		vars := maps.Clone(t.vars)
		walked := t.walkText(x.stdin.text, at)
		t.vars = vars
		if walked {
			return
		}
	}
	same := len(words) == len(args) // no word gave several (braces, splitting)
	if len(args) == 0 || (same && !t.known(words[0])) {
		t.notCarried(x.stmt, t.text(x.stmt), "the script it runs is only known when it runs")
		return
	}
	ok, why, rest := x.ok, x.why, 0
	if len(words) > 1 && allArgs(words[len(words)-1]) && t.openArgs() > 0 || !ok && len(words) > 1 && same {
		// bash x.sh apply "$@": the script's unknown arguments go on as its own
		t.m.Info = append(t.m.Info[:t.cmdInfo], slices.DeleteFunc(t.m.Info[t.cmdInfo:], func(n importer.Note) bool { return n.Why == noArgs })...)
		// an unquoted $* or $@ with none given is no word at all
		args, ok, why, rest = t.passArgs(words)
	}
	if !ok {
		t.notCarried(x.stmt, t.text(x.stmt), "its arguments are only known when the script runs ("+why+")")
		return
	}
	args = t.emptyArgs(x, words, args)
	if d := t.defaultPath(args[0]); d != "" {
		// "${REPO_ROOT_DIR}"/x/setup.sh: the script at the variable's
		// default, as bash runs it with the variable unset (trial 46s67e's D3)
		args = append([]string{d}, args[1:]...)
	}
	if b, err := readFile(t.abs(args[0])); err == nil && direct {
		errexit, nounset = shebangOpt(b, 'e'), shebangOpt(b, 'u')
	}
	saveArgs, saveIn, saveRest, saveE, saveU := t.args, t.inFunc, t.argsRest, t.errexit, t.nounset
	t.args, t.inFunc, t.argsRest, t.errexit, t.nounset = args[1:], true, rest, errexit, nounset
	// a new process: what it sets, defines or cd's to is not the
	// caller's after it (trial 46zo's D5: its BASE_DIR, set under a
	// condition there, made the caller's files "computed")
	vars, funcs, cwd, only := maps.Clone(t.vars), maps.Clone(t.funcs), t.cwd, maps.Clone(t.shellOnly)
	t.childEnv(x, args[0])
	m := t.mark()
	t.withCallArgs(words, func() { t.follow(x, args[0], false) })
	t.vars, t.funcs, t.cwd, t.shellOnly = vars, funcs, cwd, only
	t.madeByRedirect(x, filepath.Base(args[0])) // ./gen.sh > values.yaml: what it prints is made when it runs
	t.machineOnly(x, args[0], m)
	t.args, t.inFunc, t.argsRest, t.errexit, t.nounset = saveArgs, saveIn, saveRest, saveE, saveU
}

// emptyArgs drops from a script run's arguments its last, an unquoted
// variable the run may set that is empty by default (${EXTRA_PARAMS}, grown by the
// caller's option loop over arguments the import was not given): bash
// passes no word for it, so the script is followed with the arguments it
// gets then, said at the call (trial 46s70i's N4: its option loop read
// "${EXTRA_PARAMS}" as an option, and all it set was "only known when
// the script runs").
func (t *translator) emptyArgs(x *cmd, words []*syntax.Word, args []string) []string {
	// only last, and not an option's value (-n $ns): there the option
	// would read what follows
	n := len(args)
	if len(words) != n || n < 2 || quotes(words[n-1]) || strings.HasPrefix(args[n-2], "-") || t.emptyUnlessSet(args[n-1]) == nil {
		return args
	}
	t.info(x.stmt, args[n-1], "empty unless set, so "+t.display(t.abs(args[0]))+" is followed without it; when it is set, bash passes its words on as more arguments, which the spec does not take: import again with the arguments or variables that set it")
	return args[:n-1]
}

// childEnv is what a script run in a process of its own sees of the
// caller's variables: those exported, and the command's own NAME=v
// prefix; one the caller set and never exported is unset there, as bash
// runs it (NS=x; bash child.sh wrote x where child.sh saw its own
// default), said at the call since the script likely means it.
func (t *translator) childEnv(x *cmd, path string) {
	var hidden []string
	for name, only := range t.shellOnly {
		if v := t.vars[name]; only && v != nil && !v.array {
			delete(t.vars, name)
			hidden = append(hidden, name)
		}
	}
	if c, ok := x.stmt.Cmd.(*syntax.CallExpr); ok {
		for _, a := range c.Assigns {
			if a.Name != nil {
				hidden = slices.DeleteFunc(hidden, func(n string) bool { return n == a.Name.Value })
				t.assign(a)
			}
		}
	}
	hidden = t.readUnset(path, hidden)
	if len(hidden) == 0 {
		return
	}
	slices.Sort(hidden)
	are, them := " is", "it"
	if len(hidden) > 1 {
		are, them = " are", "them"
	}
	t.info(x.stmt, t.text(x.stmt), "$"+strings.Join(hidden, ", $")+are+" set by the script but not exported, so "+t.display(t.abs(path))+" (a process of its own) sees "+them+" unset, as bash runs it (export "+them+" in the script and import again if it means the value)")
}

// anyVarRef is $NAME or ${NAME…}.
var anyVarRef = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)

// readUnset are the variables of names the script at path names other
// than by setting them first: one its first line naming it sets
// (ns="default-ns" before its option loop) is its own, and the caller's
// $ns, expanded into an argument (./cfg.sh -n $ns), reaches it as that
// argument, which no export changes (trial 46s68j's N15).
func (t *translator) readUnset(path string, names []string) []string {
	b, err := readFile(t.abs(path))
	if err != nil {
		return nil
	}
	f, err := syntax.NewParser().Parse(bytes.NewReader(b), path)
	var out []string
	for _, name := range names {
		if !slices.ContainsFunc(anyVarRef.FindAllStringSubmatch(string(b), -1), func(m []string) bool { return m[1] == name }) {
			continue
		}
		if err != nil || !setsFirst(f.Stmts, b, name) {
			out = append(out, name)
		}
	}
	return out
}

// setsFirst: the first of stmts that names name is NAME=value of a value
// that does not read it.
func setsFirst(stmts []*syntax.Stmt, src []byte, name string) bool {
	for _, s := range stmts {
		text := string(src[s.Pos().Offset():s.End().Offset()])
		refs := slices.ContainsFunc(anyVarRef.FindAllStringSubmatch(text, -1), func(m []string) bool { return m[1] == name })
		c, ok := s.Cmd.(*syntax.CallExpr)
		assigns := ok && len(c.Args) == 0 && slices.ContainsFunc(c.Assigns, func(a *syntax.Assign) bool { return a.Name != nil && a.Name.Value == name })
		switch {
		case assigns && !refs:
			return true
		case assigns || refs:
			return false
		}
	}
	return false
}

// machineOnly says a script run (./get_helm.sh) that runs no helm or
// kubectl at all in one line at its call, instead of each of its lines
// (46zzc's N7): what it does works on the machine the script runs on.
func (t *translator) machineOnly(x *cmd, path string, m mark) {
	if len(t.m.Commands) > m.commands || len(t.m.Steps) > m.steps || len(t.m.NotCarried)-m.notCarried < 2 {
		return
	}
	var names []string
	for _, n := range t.m.NotCarried[m.notCarried:] {
		if f := strings.Fields(n.What); len(f) > 0 && validCommand.MatchString(f[0]) && !slices.Contains(names, f[0]) {
			names = append(names, f[0])
		}
	}
	if len(names) > 6 {
		names = append(names[:6], "…")
	}
	t.m.NotCarried = t.m.NotCarried[:m.notCarried]
	t.m.Info = append(t.m.Info[:m.info], slices.DeleteFunc(t.m.Info[m.info:], func(n importer.Note) bool { return n.File != t.file })...)
	what := "what it does"
	if len(names) > 0 {
		what += " (" + strings.Join(names, ", ") + ")" // none named: no "()" (trial 46s70e's N3)
	}
	t.notCarried(x.stmt, t.text(x.stmt), "it runs "+t.display(t.abs(path))+", in which no helm or kubectl command changes the cluster: "+what+" works on the machine the script runs on, not the cluster; do it before khook runs where that machine needs it")
}

// validCommand is a word that may name a command.
var validCommand = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.+-]*$`)

// passArgs evaluates a called script's words (its path first) whose last
// is "$@" or "$*" of parameters not known at import: the words before it,
// and where the unknown ones start among the script's own ($ARGn).
func (t *translator) passArgs(words []*syntax.Word) (args []string, ok bool, why string, rest int) {
	last := words[len(words)-1]
	pe, _ := paramOf(last.Parts[0])
	if len(last.Parts) != 1 || pe == nil || pe.Param == nil || pe.Exp != nil || pe.Slice != nil || (pe.Param.Value != "@" && pe.Param.Value != "*") {
		_, _, why = t.eval(last)
		return nil, false, why, 0
	}
	if rest = t.openArgs(); rest == 0 {
		return nil, false, "an expansion khook cannot evaluate at import", 0
	}
	for _, w := range words[:len(words)-1] {
		fs, wok, wwhy := t.fields(w)
		if !wok {
			return nil, false, wwhy, 0
		}
		args = append(args, fs...)
	}
	return args, true, "", rest
}

// heredoc is a here-document's text: as written under a quoted
// delimiter (<<'EOF'), else expanded, a backslash escaping only $ ` \.
func (t *translator) heredoc(r *syntax.Redirect) (string, bool, string) {
	t.hdoc = hdocPlain
	if quotes(r.Word) || strings.Contains(lit(r.Word)+t.text(r.Word), "\\") {
		t.hdoc = hdocQuoted
	}
	defer func() { t.hdoc = hdocNone }()
	return t.eval(r.Hdoc)
}

// allArgs: w is $@ or $*, quoted or not.
func allArgs(w *syntax.Word) bool {
	pe, _ := paramOf(w.Parts[0])
	return len(w.Parts) == 1 && pe != nil && pe.Param != nil && (pe.Param.Value == "@" || pe.Param.Value == "*") && pe.Exp == nil && pe.Slice == nil
}

// known: the word's value is known at import.
func (t *translator) known(w *syntax.Word) bool {
	_, ok, _ := t.eval(w)
	return ok
}

// openArgs is n when the positional parameters past t.args are the
// script's own from $n on, unknown at import; 0 when all are known.
func (t *translator) openArgs() int {
	switch {
	case t.argsRest > 0:
		return t.argsRest
	case !t.inFunc && !t.argsGiven:
		return 1
	}
	return 0
}

// chdir follows cd, pushd and popd: relative paths after it are relative
// to the new directory.
func (t *translator) chdir(x *cmd) {
	var dir string
	for _, a := range x.args[1:] {
		if !strings.HasPrefix(a, "-") {
			dir = a
		}
	}
	switch x.args[0] {
	case "popd":
		if n := len(t.dirStack); n > 0 {
			t.cwd, t.dirStack, t.cwdUnknown = t.dirStack[n-1], t.dirStack[:n-1], ""
		}
		return
	case "pushd":
		t.dirStack = append(t.dirStack, t.cwd)
	}
	if !x.ok || strings.Contains(dir, "${") {
		t.notCarried(x.stmt, t.text(x.stmt), "the directory is only known when the script runs; paths after it are read as relative to "+t.display(t.cwd))
		t.cwdUnknown = t.loc(x.stmt).String()
		return
	}
	if dir == "" {
		return // cd to HOME: nothing the spec refers to
	}
	t.cwd, t.cwdUnknown = t.abs(dir), ""
}

// sleep stands for a wait: after a helm step that does not wait, it is
// that step's wait: true; elsewhere nothing (khook's steps wait for what
// they apply).
func (t *translator) sleep(x *cmd) {
	if t.poll {
		return
	}
	if n := len(t.m.NotCarried); n > 0 && len(t.m.Steps) > 0 {
		// helm upgrade web …; kubectl directpv install; sleep 10: the sleep
		// gives the command before it its time, not the release (46s67r's D2)
		last, from := t.m.NotCarried[n-1].Loc, t.m.Steps[len(t.m.Steps)-1].From
		if last.File == from.File && last.Line > from.Line && last.Line < t.loc(x.stmt).Line {
			t.same(x.stmt, t.text(x.stmt), "it gives the command at "+last.String()+", which is not carried, its time: nothing to carry")
			return
		}
	}
	if t.prev != nil && t.prev.Helm != nil && !t.prev.Helm.Wait {
		// helm install nfs …; helm install viewer …; sleep 30: the sleep
		// gives every release installed since the last wait its time, not
		// the last one alone (46zzc's N4)
		var names []string
		for i := len(t.m.Steps) - 1; i >= 0; i-- {
			st := t.m.Steps[i].Out
			if st.Helm == nil || st.Helm.Wait {
				break
			}
			st.Helm.Wait = true
			names = append([]string{st.Name}, names...)
		}
		if !t.prev.Helm.Wait { // not the last step made (folded into one)
			t.prev.Helm.Wait, names = true, append(names, t.prev.Name)
		}
		what := "step " + names[0] + " (the release it waited for)"
		if len(names) > 1 {
			what = "steps " + strings.Join(names, ", ") + " (the releases installed since the last wait, which it gave their time)"
		}
		t.info(x.stmt, t.text(x.stmt), "carried as wait: true on "+what)
		return
	}
	if t.prev != nil && t.prev.Apply != nil && t.prev.Apply.WaitFor == "" && t.comesUp(t.prev.Apply.Manifests) {
		// kubectl apply -f cert-manager.yaml; sleep 2m; helm install … its
		// webhook serves: the apply step does not wait for what it applied
		// (trial 46s69p's D2: "nothing differs")
		t.info(x.stmt, t.text(x.stmt), "the script gives what step "+t.prev.Name+" applied this long to come up; the step does not wait for it, so the next step starts at once: add waitFor: to it (condition=Available for Deployments, condition=Established for CRDs) or a wait: step on what the next step needs")
		return
	}
	// a note, not a difference: "Carried with a difference" lists only
	// what differs (trials 46s67: each sleep listed there)
	t.same(x.stmt, t.text(x.stmt), "nothing to carry: khook waits on conditions, not time (each step waits for what it needs; add a wait: step for something specific)")
}

// textFilter are local text tools that change no file unless told (-i).
var textFilter = set("base64", "sed", "jq", "yq", "grep", "awk", "tr", "cut", "head", "tail", "wc", "sort", "md5sum", "sha256sum", "shasum")

// outputDiscarded: the statement's standard output goes to /dev/null.
func (t *translator) outputDiscarded(s *syntax.Stmt) bool {
	for _, r := range s.Redirs {
		out := r.N == nil || r.N.Value == "1"
		if r.Op == syntax.RdrAll || r.Op == syntax.AppAll || (r.Op == syntax.RdrOut || r.Op == syntax.AppOut || r.Op == syntax.ClbOut) && out {
			if p, ok, _ := t.eval(r.Word); ok && p == "/dev/null" {
				return true
			}
		}
	}
	return false
}

// comesUp: of the manifests, some object takes time to be ready (a
// workload, a CRD, an API service), or a URL's, not read at import, may.
func (t *translator) comesUp(srcs []importer.OutSource) bool {
	if slices.ContainsFunc(srcs, func(s importer.OutSource) bool { return s.URL != "" }) {
		return true
	}
	return slices.ContainsFunc(t.sourceKinds(srcs), func(k string) bool {
		switch k {
		case "deployment", "statefulset", "daemonset", "customresourcedefinition", "apiservice", "job", "pod":
			return true
		}
		return false
	})
}

// writesFile: the statement's output goes to a file.
func writesFile(s *syntax.Stmt) bool {
	for _, r := range s.Redirs {
		if r.Op == syntax.RdrOut || r.Op == syntax.AppOut || r.Op == syntax.RdrAll || r.Op == syntax.AppAll || r.Op == syntax.ClbOut {
			return true
		}
	}
	return false
}

// builtTool is helm or kubectl, and the variable, when the command word
// is a variable holding a helm or kubectl command (cmd="helm install …";
// cmd+=" --set …"; $cmd) whose words are not known at import; "" when
// they are (the command is then read word by word) or it holds no such
// command.
func (t *translator) builtTool(c *syntax.CallExpr, x *cmd) (string, string) {
	if len(c.Args[0].Parts) != 1 {
		return "", ""
	}
	pe, _ := paramOf(c.Args[0].Parts[0])
	if pe == nil || pe.Param == nil || t.vars[pe.Param.Value] == nil {
		return "", ""
	}
	first := t.vars[pe.Param.Value].first()
	if tool := toolName(first); tool != "" && x.args[0] != first {
		return tool, pe.Param.Value
	}
	return "", ""
}

// first is the first word of the command the variable holds ("" when none).
func (v *shVar) first() string {
	val := v.val
	if v.unknown || v.decl != nil {
		val = v.was
	}
	if f := strings.Fields(val); len(f) > 0 {
		return f[0]
	}
	return ""
}

// trap names the helm and kubectl commands a trap runs (trap cleanup
// EXIT, trap "kubectl delete ns x" EXIT) not carried at their lines:
// khook has no step that runs when the run ends.
func (t *translator) trap(x *cmd) {
	args := x.args[1:]
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-" {
		args = args[1:]
	}
	if len(args) < 2 || args[0] == "" || args[0] == "-" {
		return
	}
	if t.trapped[args[0]] {
		return // trap cleanup EXIT, then trap cleanup ERR: its commands are said once
	}
	if t.trapped == nil {
		t.trapped = map[string]bool{}
	}
	t.trapped[args[0]] = true
	when, ends := "when the script exits", "when the run ends"
	if !slices.Contains(args[1:], "EXIT") && !slices.Contains(args[1:], "0") {
		when, ends = "when the script is interrupted", "when the run is stopped"
		if slices.Contains(args[1:], "ERR") {
			when, ends = "when a command of the script fails", "when a step fails"
		}
	}
	why := "it runs " + when + " (trap at " + t.loc(x.stmt).String() + " on " + strings.Join(args[1:], " ") + "); khook has no step that runs " + ends + ": run it after khook, or write it as a step of a teardown spec"
	words := strings.Fields(args[0])
	if f := t.funcs[words[0]]; f != nil && len(words) == 1 {
		t.trapFunc(f, why, map[*function]bool{})
		return
	}
	for _, w := range words {
		if toolName(w) != "" {
			t.account(x.stmt, importer.FateNotCarried, "", why)
			return
		}
	}
}

// trapFunc names the helm and kubectl commands of a trap's function, and
// of the functions it calls, not carried at their lines.
func (t *translator) trapFunc(f *function, why string, seen map[*function]bool) {
	t.funcTools(f, nil, why, seen)
}

// funcTools names the helm and kubectl commands of f, and of the
// functions it calls, not carried at their lines; called is its call,
// said with each (nil for a trap's).
func (t *translator) funcTools(f *function, called *caller, why string, seen map[*function]bool) {
	if seen[f] {
		return
	}
	seen[f] = true
	if called != nil {
		t.callers = append(t.callers, *called)
		defer func() { t.callers = t.callers[:len(t.callers)-1] }()
	}
	saveFile, saveSrc, saveBase := t.file, t.src, t.lineBase
	t.file, t.src, t.lineBase = f.file, f.src, 0
	syntax.Walk(f.decl.Body, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if !ok || len(c.Args) == 0 {
			return true
		}
		name := lit(c.Args[0])
		if g := t.funcs[name]; g != nil {
			var in *caller
			if called != nil {
				in = &caller{name: name, at: t.loc(c)}
			}
			t.funcTools(g, in, why, seen)
			t.file, t.src = f.file, f.src
		} else if isTool(toolName(name)) {
			fate := importer.FateNotCarried
			if readOnlyTool(toolArgv(c)) {
				fate = importer.FateReadOnly // as toolsIn (trial 46s70w's D2: a debug branch's gets, through its functions)
			}
			t.account(c, fate, "", why)
		}
		return true
	})
	t.file, t.src, t.lineBase = saveFile, saveSrc, saveBase
}

// hoistArg is "$(…)" as the i-th argument of the script's function fn,
// its output only known when the script runs: as if the script had set a
// variable (FN_ARGi) to it first, a required variable, not "" (46zza's D1:
// a DataVolume written with an empty spec:).
func (t *translator) hoistArg(w *syntax.Word, fn string, i int) *syntax.Word {
	if h, ok := t.hoisted[w]; ok {
		return h
	}
	sub := w.Parts[0]
	if dq, isDq := sub.(*syntax.DblQuoted); isDq && len(dq.Parts) == 1 {
		sub = dq.Parts[0]
	}
	if _, isSubst := sub.(*syntax.CmdSubst); !isSubst || len(w.Parts) != 1 {
		return w
	}
	if _, ok, _ := t.eval(w); ok {
		return w
	}
	base := varName(fn + "_ARG" + strconv.Itoa(i))
	name := base
	for n := 2; t.vars[name] != nil || t.m.Var(name) != nil; n++ {
		name = base + "_" + strconv.Itoa(n)
	}
	t.assign(&syntax.Assign{Name: &syntax.Lit{ValuePos: w.Pos(), ValueEnd: w.Pos(), Value: name}, Value: &syntax.Word{Parts: []syntax.WordPart{sub}}})
	ref := &syntax.ParamExp{Dollar: w.Pos(), Param: &syntax.Lit{ValuePos: w.Pos(), ValueEnd: w.Pos(), Value: name}}
	h := &syntax.Word{Parts: []syntax.WordPart{&syntax.DblQuoted{Left: w.Pos(), Right: w.Pos(), Parts: []syntax.WordPart{ref}}}}
	if t.hoisted == nil {
		t.hoisted = map[*syntax.Word]*syntax.Word{}
	}
	t.hoisted[w] = h
	return h
}

// hoist is KEY=$(…) in a command's argument or an array's element
// (--from-literal=secret=$(head -c 32 /dev/urandom | base64), ARGS+=(--set
// auth.erlangCookie=$(openssl rand -hex 32))) as if the script had set a
// variable named after the key first: the value it computes is then what
// such a variable is, a secret generated or read, or a required variable
// (trial 46v's D5, D6: refused inline, or written as "" from an array).
func (t *translator) hoist(w *syntax.Word) *syntax.Word {
	if w == nil {
		return w
	}
	if h, ok := t.hoisted[w]; ok {
		return h // a command read twice (a pipe's stage) sets it once
	}
	in, quoted := w.Parts, false
	if dq, isDq := in[0].(*syntax.DblQuoted); isDq && len(in) == 1 {
		// "vpcId=$(aws eks describe-cluster …)", quoted whole (trial
		// 46s67k's D3: written vpcId: "", the aws command not named)
		in, quoted = dq.Parts, true
	} else if flagThenQuoted(in) {
		// --set="k=$(openssl rand …)", the flag outside the quotes: the
		// same as quoted whole (trial 46s69l's D5: the command not carried)
		l0, dq := in[0].(*syntax.Lit), in[1].(*syntax.DblQuoted)
		l1 := dq.Parts[0].(*syntax.Lit)
		in = append([]syntax.WordPart{&syntax.Lit{ValuePos: l0.ValuePos, ValueEnd: l1.ValueEnd, Value: l0.Value + l1.Value}}, dq.Parts[1:]...)
		quoted = true
	}
	if len(in) < 2 || len(in)%2 != 0 {
		return w
	}
	// KEY=$(…) and, helm's --set pairs, KEY=$(…),KEY2=$(…) (trial 46zo's D1)
	var parts []syntax.WordPart
	for i := 0; i < len(in); i += 2 {
		l, ok := in[i].(*syntax.Lit)
		sub := in[i+1]
		if dq, isDq := sub.(*syntax.DblQuoted); isDq && len(dq.Parts) == 1 {
			sub = dq.Parts[0]
		}
		if _, isSubst := sub.(*syntax.CmdSubst); !ok || !isSubst || !strings.HasSuffix(l.Value, "=") || i > 0 && !strings.HasPrefix(l.Value, ",") {
			return w
		}
		parts = append(parts, l, sub)
	}
	var out []syntax.WordPart
	for i := 0; i < len(parts); i += 2 {
		l, sub := parts[i].(*syntax.Lit), parts[i+1]
		keys := strings.FieldsFunc(strings.TrimLeft(strings.TrimSuffix(l.Value, "="), "-,"), func(r rune) bool { return r == '.' || r == '=' })
		if len(keys) == 0 {
			return w
		}
		if len(keys) > 2 {
			keys = keys[len(keys)-2:]
		}
		if len(keys) == 2 && (strings.HasPrefix(keys[0], "from-") || keys[0] == "set" || keys[0] == "set-string") {
			keys = keys[1:] // --from-literal=secret=…, --set=k=…
		}
		base := varName(importer.CamelWords(strings.Join(keys, "_")))
		name := base
		for i := 2; t.vars[name] != nil || t.m.Var(name) != nil; i++ {
			name = base + "_" + strconv.Itoa(i)
		}
		t.assign(&syntax.Assign{Name: &syntax.Lit{ValuePos: w.Pos(), ValueEnd: w.Pos(), Value: name}, Value: &syntax.Word{Parts: []syntax.WordPart{sub}}})
		ref := &syntax.ParamExp{Dollar: w.Pos(), Param: &syntax.Lit{ValuePos: w.Pos(), ValueEnd: w.Pos(), Value: name}}
		out = append(out, l, &syntax.DblQuoted{Left: w.Pos(), Right: w.Pos(), Parts: []syntax.WordPart{ref}})
	}
	if quoted {
		for i := 1; i < len(out); i += 2 {
			out[i] = out[i].(*syntax.DblQuoted).Parts[0]
		}
		out = []syntax.WordPart{&syntax.DblQuoted{Left: w.Pos(), Right: w.Pos(), Parts: out}}
	}
	h := &syntax.Word{Parts: out}
	if t.hoisted == nil {
		t.hoisted = map[*syntax.Word]*syntax.Word{}
	}
	t.hoisted[w] = h
	return h
}

// flagThenQuoted is a word --flag="…" whose quoted part starts with text.
func flagThenQuoted(in []syntax.WordPart) bool {
	if len(in) != 2 {
		return false
	}
	l, ok := in[0].(*syntax.Lit)
	dq, isDq := in[1].(*syntax.DblQuoted)
	if !ok || !isDq || !strings.HasPrefix(l.Value, "-") || !strings.HasSuffix(l.Value, "=") || len(dq.Parts) < 2 {
		return false
	}
	_, ok = dq.Parts[0].(*syntax.Lit)
	return ok
}
