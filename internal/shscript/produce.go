package shscript

import (
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"mvdan.cc/sh/v3/syntax"

	"github.com/khook/khook/internal/importer"
)

// produce is what the stages before `kubectl apply -f -` feed it: nil
// with ok when they were carried on their own (helm template).
func (t *translator) produce(stages []*syntax.Stmt) (*input, bool) {
	first := stages[0]
	if len(stages) > 1 && t.helmTemplateFed(stages) {
		return nil, true
	}
	if len(stages) > 1 && isCommand(stages[len(stages)-1], "envsubst") {
		return t.envsubstFed(stages)
	}
	if len(stages) > 1 && t.localMeta(stages[len(stages)-1]) {
		return t.localMetaFed(stages)
	}
	c, ok := first.Cmd.(*syntax.CallExpr)
	if ok && len(stages) >= 2 && !slices.ContainsFunc(stages[1:], func(st *syntax.Stmt) bool { return !isCommand(st, "sed") }) {
		if in, ok := t.sedPiped(first, c, stages[1:]); ok {
			return in, in != nil
		}
	}
	if !ok || len(stages) > 1 {
		t.notCarriedPipe(first, stages)
		return nil, false
	}
	x := t.newCmd(first, c)
	if len(x.args) == 0 || !x.ok {
		t.notCarriedPipe(first, stages)
		return nil, false
	}
	switch x.args[0] {
	case "cat", "echo", "printf":
		if in, ok, done := t.printed(x); done {
			return in, ok
		}
	case "sops":
		if in := t.sopsInput(x); in != nil {
			return in, true
		}
	case "kustomize":
		if len(x.args) == 3 && x.args[1] == "build" {
			return &input{src: &importer.OutSource{Kustomize: t.specPath(x.args[2])}}, true
		}
	case "envsubst":
		return t.envsubst(x, stages)
	case "sed":
		for _, r := range first.Redirs {
			// sed … < deploy.yaml reads the file as sed … deploy.yaml does (trial 46s67r's D1)
			if p, ok, _ := t.eval(r.Word); r.Op == syntax.RdrIn && ok {
				x.args = append(x.args, p)
			}
		}
		if in, ok := t.sedOut(x); ok {
			return in, in != nil // nil: named not carried there
		}
	case "kubectl", "oc":
		f := parseFlags(x.args[1:], kubectlValued)
		switch {
		case len(f.pos) == 2 && f.pos[0] == "kustomize":
			if !regexp.MustCompile(`^[a-z]+://|^github\.com/`).MatchString(f.pos[1]) {
				return &input{src: &importer.OutSource{Kustomize: t.specPath(f.pos[1])}}, true
			}
		case len(f.pos) >= 2 && f.pos[0] == "create":
			return t.createProduce(x, f)
		case len(f.pos) == 1 && f.pos[0] == "apply" && f.get("k", "kustomize") != "" && strings.HasPrefix(f.get("dry-run"), "client"):
			// kubectl apply -k DIR --dry-run=client -o yaml: the kustomization built
			if k := f.get("k", "kustomize"); !regexp.MustCompile(`^[a-z]+://|^github\.com/`).MatchString(k) {
				t.account(x.stmt, importer.FateReadOnly, "", "--dry-run=client prints the kustomization's objects; piped into kubectl apply they are its apply step")
				return &input{src: &importer.OutSource{Kustomize: t.specPath(k)}}, true
			}
		}
	case "helm":
		f := parseFlags(x.args[1:], helmValued)
		if len(f.pos) > 0 && f.pos[0] == "template" {
			t.helmInstall(x, f, "template")
			return nil, true
		}
	case "curl", "wget":
		for _, a := range x.args[1:] {
			if regexp.MustCompile(`^https?://`).MatchString(a) {
				return &input{src: &importer.OutSource{URL: a}}, true
			}
		}
	}
	t.notCarriedPipe(first, stages)
	return nil, false
}

// sopsInput: sops -d f | kubectl apply -f -, as kubectl apply -f <(sops
// -d f) is, applies the sops file itself (trial 46s69n's D1); nil for any
// other sops command.
func (t *translator) sopsInput(x *cmd) *input {
	f := sopsFile(x.args[1:])
	if f == "" {
		return nil
	}
	t.info(x.stmt, t.text(x.stmt), "the sops file "+f+" itself: khook decrypts it where the step reads it, so its plaintext never reaches the spec")
	return t.fileInput(f)
}

func (t *translator) notCarriedPipe(first *syntax.Stmt, stages []*syntax.Stmt) {
	if len(stages) > 1 && (isCommand(first, "kustomize") || isCommand(first, "kubectl") && strings.Contains(t.text(first.Cmd), " kustomize ")) {
		// kubectl kustomize D | sed … | kubectl apply -f -: the edit is the obstacle (trial 46r's D4)
		t.account(first, importer.FateNotCarried, "", "the objects of the kustomization are edited by "+t.text(stages[1].Cmd)+" on their way to apply, which khook cannot run; write the edit as a kustomize patch or replacement and apply the kustomization (kustomize: DIR)")
		return
	}
	if t.pipeTo == "helm" {
		t.account(first, importer.FateNotCarried, "", "values made by a command khook cannot run; commit them as a values file and pass that with -f")
		return
	}
	if slices.ContainsFunc(stages[1:], func(st *syntax.Stmt) bool { return strings.Contains(t.text(st.Cmd), "create secret") }) {
		// gh auth token | kubectl create secret … --from-file=k=/dev/stdin (trial 46ze's D6): never commit it
		t.account(first, importer.FateNotCarried, "", "a Secret made of what "+t.text(first.Cmd)+" prints when the script runs (a token): write the Secret as a manifest whose value is a secret variable (KHOOK_SECRET_…), given that output; never commit the value")
		return
	}
	if len(stages) > 1 && runsTool(first) && strings.Contains(" "+t.text(first.Cmd)+" ", " get ") {
		if cp, ok := t.copiedToNamespace(stages); ok {
			t.nsCopies = append(t.nsCopies, *cp)
			t.account(first, importer.FateNotCarried, "", "the script copies the live object into namespace "+cp.to+", where it does not exist yet, and khook does not copy a live object between namespaces: apply the object from its source (a manifest, a sops file) into "+cp.to+", let a tool sync it (reflector, kubernetes-replicator), or copy it in a job: step")
			return
		}
		// kubectl get cm kube-proxy -o yaml | sed s/strictARP: false/… | kubectl apply -f -
		t.account(first, importer.FateNotCarried, "", "the script edits the live object with "+t.text(stages[1].Cmd)+" and applies it back, which khook cannot run: write the change as a patch: step (it sets whole fields), or do it by hand")
		return
	}
	t.account(first, importer.FateNotCarried, "", "manifests made by a command khook cannot run; commit them and apply the file")
}

// namespaceOpt is kubectl's -n NS, -nNS, --namespace NS or --namespace=NS.
var namespaceOpt = regexp.MustCompile(`(?:^|\s)(?:-n\s*|--namespace[=\s]\s*)([^\s|;&]+)`)

// copied is an object `kubectl get … -o yaml | sed … | kubectl create -f -`
// copies into another namespace, which khook does not carry.
type copied struct {
	at            importer.Loc
	kind, name    string // as the get names them (configmap, global)
	namespace, to string // from, into
}

// copiedToNamespace: `kubectl -n A get X -o yaml | sed "s/namespace: A/namespace: B/" |
// kubectl -n B create -f -` copies the object into namespace B; it is
// not edited and applied back, so a patch: step cannot do it (trial
// 46s68f's D2). The sed's replacement or the -n of the command it is
// piped into names B.
func (t *translator) copiedToNamespace(stages []*syntax.Stmt) (*copied, bool) {
	args := func(st *syntax.Stmt) []string {
		if c, ok := st.Cmd.(*syntax.CallExpr); ok {
			return t.newCmd(st, c).args
		}
		return nil
	}
	nsOf := func(st *syntax.Stmt) string {
		if m := namespaceOpt.FindStringSubmatch(" " + strings.Join(args(st), " ")); m != nil {
			return m[1]
		}
		return ""
	}
	get := parseFlags(args(stages[0])[1:], kubectlValued)
	cp := &copied{at: t.loc(stages[0]), namespace: nsOf(stages[0])}
	if k := slices.Index(get.pos, "get"); k >= 0 && len(get.pos) == k+3 {
		cp.kind, cp.name = get.pos[k+1], get.pos[k+2]
	}
	for _, st := range stages[1:] {
		if m := regexp.MustCompile(`namespace: *[^/]*/namespace: *([^/"' ]+)`).FindStringSubmatch(strings.Join(args(st), " ")); m != nil {
			cp.to = m[1]
		}
	}
	if t.pipeToStmt == nil {
		return nil, false
	}
	if ns := nsOf(t.pipeToStmt); ns != "" {
		cp.to = ns
	}
	if cp.to == "" || cp.to == cp.namespace {
		return nil, false
	}
	return cp, true
}

// createProduce is `kubectl create … --dry-run=client -o yaml`.
func (t *translator) createProduce(x *cmd, f flags) (*input, bool) {
	obj, ok := t.createObject(x, f)
	if !ok {
		return nil, false
	}
	text, err := renderObject(obj)
	if err != nil {
		return nil, false
	}
	t.account(x.stmt, importer.FateFolded, "", "the object it prints is the manifest of the apply it is piped into")
	return &input{src: &importer.OutSource{Inline: text}, text: text, known: true}, true
}

// envsubstFed is `cat <<EOF | envsubst | kubectl apply -f -` (a file's
// cat, an echo): envsubst over what the stages before it print.
func (t *translator) envsubstFed(stages []*syntax.Stmt) (*input, bool) {
	last := stages[len(stages)-1]
	in, ok := t.produce(stages[:len(stages)-1])
	if !ok {
		return nil, false // named there
	}
	if in == nil { // helm template | envsubst: the chart is carried as a helm step
		t.notCarried(last, t.text(last), "envsubst over the chart's rendered manifests: khook renders the chart itself; pass these variables as the chart's values")
		return nil, true
	}
	x := t.newCmd(last, last.Cmd.(*syntax.CallExpr))
	x.stdin = in
	return t.envsubst(x, stages)
}

// secretKind is a manifest's kind: Secret line.
var secretKind = regexp.MustCompile(`(?m)^kind:\s*["']?Secret["']?\s*$`)

// envVar is $VAR or ${VAR}, as envsubst reads them.
var envVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)`)

// envsubst < file: the file's $VAR and ${VAR} become khook's ${VAR}
// (declared variables), inline. With a SHELL-FORMAT (envsubst '$A $B')
// only those are replaced; a ${C} it leaves is written $${C}, literal.
func (t *translator) envsubst(x *cmd, stages []*syntax.Stmt) (*input, bool) {
	if x.stdin != nil && x.stdin.src != nil && x.stdin.src.Kustomize != "" {
		t.account(x.stmt, importer.FateNotCarried, "", "envsubst over the objects of kustomization "+x.stdin.src.Kustomize+": khook builds it when it runs, so its $VARS are not known at import; replace them with a kustomize patch or replacement, and apply the kustomization")
		return nil, false
	}
	if x.stdin != nil && x.stdin.missing {
		t.account(x.stmt, importer.FateNotCarried, "", x.stdin.why+": check the name")
		return nil, false
	}
	if x.stdin == nil || !x.stdin.known {
		t.notCarriedPipe(x.stmt, stages)
		return nil, false
	}
	fileSecret := x.stdin.src.File != "" && secretKind.MatchString(x.stdin.text)
	var only map[string]bool
	for _, a := range x.args[1:] {
		for _, sub := range envVar.FindAllStringSubmatch(a, -1) {
			if only == nil {
				only = map[string]bool{}
			}
			only[sub[1]+sub[2]] = true
		}
	}
	// APP_PASSWORD="$PGPASS" envsubst: the command's own environment
	prefix := map[string]string{}
	if c, ok := x.stmt.Cmd.(*syntax.CallExpr); ok {
		for _, a := range c.Assigns {
			if a.Name == nil {
				continue
			}
			v, ok, why := t.eval(a.Value)
			if !ok {
				t.account(x.stmt, importer.FateNotCarried, "", "envsubst's "+a.Name.Value+" is only known when the script runs ("+why+")")
				return nil, false
			}
			prefix[a.Name.Value] = v
		}
	}
	var known, refs, unexported []string // what the script set at import, what becomes a khook variable, what envsubst does not see
	text := envVar.ReplaceAllStringFunc(x.stdin.text, func(m string) string {
		sub := envVar.FindStringSubmatch(m)
		name := sub[1] + sub[2]
		if only != nil && !only[name] {
			return strings.Replace(m, "${", "$${", 1)
		}
		if v, ok := prefix[name]; ok {
			known = append(known, name)
			return v
		}
		if t.shellOnly[name] && t.vars[name] != nil {
			// set but not exported: envsubst, a process of its own, sees
			// it empty, as bash runs it (trial 46s67l's D4)
			unexported = append(unexported, name)
			return ""
		}
		if v, ok := t.vars[name]; ok && v.decl == nil {
			known = append(known, name)
			return v.val
		}
		refs = append(refs, name)
		if v, ok := t.vars[name]; ok && v.decl != nil {
			return t.ref(v.decl)
		}
		// required, a secret too: the script never sets it, so a run
		// without it stops at khook validate instead of rendering ""
		// (trial 46s69c's D4, as $jwtsecret of 46s67l's D3)
		return t.ref(&importer.Var{Name: name, Required: true, Secret: secretLooking(name), From: t.loc(x.stmt), Description: "envsubst reads it from the environment"})
	})
	if fileSecret && !onlyRefValues(text) {
		t.account(x.stmt, importer.FateNotCarried, "", "a Secret from a file: khook never copies a file's content into the spec; apply it as a sops-encrypted manifest or build it from secret variables")
		return nil, false
	}
	// said as it is (trial 46zv's D2: "khook variables" where the sourced
	// file's values were written)
	var said []string
	if refs = slices.Compact(slices.Sorted(slices.Values(refs))); len(refs) > 0 {
		said = append(said, "$"+strings.Join(refs, ", $")+" are khook variables (${NAME})")
	}
	if known = slices.Compact(slices.Sorted(slices.Values(known))); len(known) > 0 {
		said = append(said, "$"+strings.Join(known, ", $")+" are written as the script sets them at import")
	}
	if unexported = slices.Compact(slices.Sorted(slices.Values(unexported))); len(unexported) > 0 {
		said = append(said, "$"+strings.Join(unexported, ", $")+" are set by the script but not exported, so envsubst sees them empty and they are written empty, as bash runs it (export them, or set -a before the source, and import again if the script means their values)")
	}
	if len(said) > 0 {
		t.info(x.stmt, "envsubst", strings.Join(said, "; ")+"; the manifest is written inline")
	}
	text = t.configSecrets(x, text)
	return &input{src: &importer.OutSource{Inline: text}, text: text, known: true}, true
}

// applyNS is the -n of a kubectl apply that reads a pipe, "" without one:
// kubectl puts there the namespaced objects that name none, such as those
// helm template renders without -n (trial 46s68g's D2).
func (t *translator) applyNS(st *syntax.Stmt) string {
	c, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) < 2 || lit(c.Args[0]) != "kubectl" && lit(c.Args[0]) != "oc" {
		return ""
	}
	var args []string
	for _, w := range c.Args[1:] {
		s, ok, _ := t.eval(w)
		if !ok {
			return ""
		}
		args = append(args, s)
	}
	if f := parseFlags(args, kubectlValued); len(f.pos) > 0 && f.pos[0] == "apply" {
		return f.get("n", "namespace")
	}
	return ""
}

// helmTemplateFed is `cat <<EOF | helm template … --values - | kubectl
// apply -f -`: the helm step, its values what the stages before it feed it.
func (t *translator) helmTemplateFed(stages []*syntax.Stmt) bool {
	last := stages[len(stages)-1]
	c, ok := last.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) < 2 || lit(c.Args[0]) != "helm" || lit(c.Args[1]) != "template" {
		return false
	}
	in, ok := t.produce(stages[:len(stages)-1])
	if !ok || in == nil {
		return true // produce named it not carried
	}
	x := t.newCmd(last, c)
	x.stdin = in
	t.helmInstall(x, parseFlags(x.args[1:], helmValued), "template")
	return true
}

// fileInput is a file the script feeds a command (< FILE, cat FILE), its
// text read when it is there at import.
func (t *translator) fileInput(p string) *input {
	in := &input{src: &importer.OutSource{File: t.specPath(p)}}
	data, err := readFile(t.abs(p))
	switch {
	case err == nil:
		in.text, in.known = string(data), true
	case t.madeBy(t.abs(p)) == "" && t.wrote[t.writeKey(p)] == nil:
		// envsubst < app/Two-Lower.yaml, a file not in the checkout (trial
		// 46zj's D2: a name's case wrong): bash fails there too
		in.why, in.missing = p+" is not in the checkout, so the script fails to read it as well", true
	}
	return in
}

// printed is what cat <<EOF, cat FILE or echo TEXT feeds a pipe; done is
// false for another form of them.
func (t *translator) printed(x *cmd) (in *input, ok, done bool) {
	switch {
	case x.stdin != nil && x.args[0] == "cat" && len(x.args) == 1:
		return x.stdin, true, true // cat <<EOF
	case x.args[0] == "cat" && len(x.args) == 2:
		return t.fileInput(x.args[1]), true, true
	case x.args[0] == "echo" && len(x.args) == 2:
		if m := varRef.FindStringSubmatch(x.args[1]); m != nil && m[0] == x.args[1] {
			if in := t.runValues(m[1]); in != nil {
				return in, true, true
			}
			// echo "$T" of a value only the run knows: no manifest to read
			t.account(x.stmt, importer.FateNotCarried, "", "the manifests it reads are $"+m[1]+", only known when the script runs; commit them and apply the file")
			return nil, false, true
		}
		return &input{src: &importer.OutSource{Inline: x.args[1] + "\n"}, text: x.args[1], known: true}, true, true
	}
	return nil, false, false
}

// isCommand: the statement is a simple command named name.
func isCommand(s *syntax.Stmt, name string) bool {
	c, ok := s.Cmd.(*syntax.CallExpr)
	return ok && len(c.Args) > 0 && lit(c.Args[0]) == name
}

// localMeta: s is `kubectl label|annotate --local -f - K=V… -o yaml`,
// which only adds labels or annotations to the objects piped through it.
func (t *translator) localMeta(s *syntax.Stmt) bool {
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || !isCommand(s, "kubectl") {
		return false
	}
	x := t.newCmd(s, c)
	f := parseFlags(x.args[1:], kubectlValued)
	return x.ok && len(f.pos) > 0 && (f.pos[0] == "label" || f.pos[0] == "annotate") && f.is("local") && f.get("f", "filename") == "-"
}

// localMetaFed is `kubectl create secret … --dry-run=client -o yaml |
// kubectl label --local -f - K=V -o yaml | kubectl apply -f -` (an Argo
// CD repository Secret): the object the stages before it print, with its
// labels or annotations set (K-: removed) as kubectl would (trial 46u's D2).
func (t *translator) localMetaFed(stages []*syntax.Stmt) (*input, bool) {
	last := stages[len(stages)-1]
	in, ok := t.produce(stages[:len(stages)-1])
	if !ok || in == nil {
		return in, ok // named there
	}
	x := t.newCmd(last, last.Cmd.(*syntax.CallExpr))
	f := parseFlags(x.args[1:], kubectlValued)
	var obj map[string]any
	if !in.known || in.src.Inline == "" || yaml.Unmarshal([]byte(in.text), &obj) != nil || obj == nil {
		t.account(last, importer.FateNotCarried, "", "kubectl "+f.pos[0]+" --local over manifests khook reads only when it runs; add the "+f.pos[0]+"s to the manifests")
		return nil, false
	}
	field := map[string]string{"label": "labels", "annotate": "annotations"}[f.pos[0]]
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	set, _ := meta[field].(map[string]any)
	if set == nil {
		set = map[string]any{}
	}
	for _, kv := range f.pos[1:] {
		if k, v, ok := strings.Cut(kv, "="); ok {
			set[k] = v
		} else if k, ok := strings.CutSuffix(kv, "-"); ok {
			delete(set, k)
		}
	}
	meta[field] = set
	text, err := renderObject(obj)
	if err != nil {
		t.account(last, importer.FateNotCarried, "", "the object it labels cannot be written back: "+err.Error())
		return nil, false
	}
	t.account(last, importer.FateFolded, "", "its "+field+" are written on the object piped through it, the manifest of the apply after it")
	return &input{src: &importer.OutSource{Inline: text}, text: text, known: true}, true
}

// configAssign is a config text's NAME = literal line (an INI, a .py).
var configAssign = regexp.MustCompile(`(?m)^(\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*)([^$\s'"#][^\s'"#]*)\s*$`)

// configSecrets writes each credential a config text in a manifest sets
// to a literal (odoo.conf's admin_passwd = x) as a secret variable, as a
// helm value's is: the manifest is written inline, its credential never
// (trial 46s68t's D4: envsubst's manifest copied the master password).
func (t *translator) configSecrets(x *cmd, text string) string {
	return configAssign.ReplaceAllStringFunc(text, func(line string) string {
		m := configAssign.FindStringSubmatch(line)
		if !(importer.SecretKey(m[2]) || secretLooking(m[2])) || importer.NoCredential(m[2], m[3], nil) {
			return line
		}
		name := varName(m[2])
		t.secretVar(m[3], name)
		t.ref(&importer.Var{Name: name, Secret: true, Required: true, From: t.loc(x.stmt), Description: "the value the manifest's config text sets " + m[2] + " to (a literal of the file, not copied)"})
		t.info(x.stmt, m[2], "its literal value in the manifest's config text is not copied into the spec: it is the secret variable "+name+" (KHOOK_SECRET_"+name+")")
		return m[1] + "${" + name + "}"
	})
}

// runValues: helm … --values <(echo "$V") reads helm values, not
// manifests, only known when the run sets V: the release is carried and
// the note is at it (trial 46s69m's D3: ArgoCD's release never named);
// nil for any other reader.
func (t *translator) runValues(name string) *input {
	if !strings.HasPrefix(t.procSubst, "--values ") {
		return nil
	}
	return &input{why: "$" + name + ", only known when the script runs: commit the values as a file and name it with -f"}
}

// soleRef is a value that is one khook variable, ${NAME}.
var soleRef = regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]*\}$`)

// onlyRefValues: every value of every Secret of text is a khook variable:
// a file of the checkout whose Secret envsubst fills only from variables
// (a service-account token Secret of a value the script generates: trial
// 46s70j's N2) holds no secret of its own to copy, and the variables are
// secret ones.
func onlyRefValues(text string) bool {
	dec := yaml.NewDecoder(strings.NewReader(text))
	for {
		var o struct {
			Kind       string
			Data       map[string]string
			StringData map[string]string `yaml:"stringData"`
		}
		switch err := dec.Decode(&o); {
		case err == io.EOF:
			return true
		case err != nil:
			return false
		}
		if o.Kind != "Secret" {
			continue
		}
		for _, v := range slices.Concat(slices.Collect(maps.Values(o.Data)), slices.Collect(maps.Values(o.StringData))) {
			if !soleRef.MatchString(v) {
				return false
			}
		}
	}
}
