package shscript

import (
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/khook/khook/internal/importer"
)

// A value the script reads from a key of a cluster Secret —
// PW=$(kubectl get secret ghost-mysql -n ghost -o jsonpath="{.data.mysql-password}" | base64 -d)
// — and hands to helm with --set k=$PW is known only once the steps
// before it have run (the chart that generated the password): the helm
// step reads it then, from valuesFrom secretKeyRef with targetPath, as
// Flux does, not from an input variable nobody can give before the run
// (46zn's D3).

// secretKeyPath is jsonpath={.data.KEY} (also {.data['KEY']}, {.data.tls\.crt}).
var secretKeyPath = regexp.MustCompile(`^jsonpath=\{\.data(?:\.((?:[A-Za-z0-9_-]|\\\.)+)|\[['"]([^'"]+)['"]\])\}$`)

// secretKeyTemplate is go-template={{.data.KEY | base64decode}}, the same
// read as jsonpath={.data.KEY} | base64 -d (trial 46s68g's D3).
var secretKeyTemplate = regexp.MustCompile(`^go-template=\{\{ *\.data\.([A-Za-z0-9_-]+) *\| *base64decode *\}\}$`)

// secretKeyRead is the Secret key a $(kubectl get secret … | base64 -d)
// reads; false when w is no such read, or when it names no namespace
// (the context's, which a step cannot name).
func (t *translator) secretKeyRead(w *syntax.Word) (importer.OutKeyRef, bool) {
	ref, ok := t.secretKeyReadIn(w)
	return ref, ok && ref.Namespace != ""
}

// secretKeyReadIn is secretKeyRead also without -n.
func (t *translator) secretKeyReadIn(w *syntax.Word) (importer.OutKeyRef, bool) {
	var none importer.OutKeyRef
	if w == nil || len(w.Parts) == 0 {
		return none, false
	}
	if len(w.Parts) == 1 {
		if dq, ok := w.Parts[0].(*syntax.DblQuoted); ok && len(dq.Parts) == 1 {
			w = &syntax.Word{Parts: dq.Parts}
		}
	}
	if len(w.Parts) == 0 {
		return none, false
	}
	cs, ok := w.Parts[0].(*syntax.CmdSubst)
	if len(w.Parts) != 1 || !ok || len(cs.Stmts) != 1 {
		return none, false
	}
	get, piped := cs.Stmts[0].Cmd.(*syntax.CallExpr) // -o go-template=…base64decode
	if p, ok := cs.Stmts[0].Cmd.(*syntax.BinaryCmd); ok && p.Op == syntax.Pipe {
		dec, ok := p.Y.Cmd.(*syntax.CallExpr)
		get, piped = p.X.Cmd.(*syntax.CallExpr)
		if !ok || !piped || len(dec.Args) != 2 || lit(dec.Args[0]) != "base64" || !decodes(lit(dec.Args[1])) {
			return none, false
		}
	} else if !piped {
		return none, false
	} else {
		piped = false
	}
	var args []string
	for _, a := range get.Args {
		v, ok, _ := t.eval(a)
		if !ok {
			return none, false
		}
		args = append(args, v)
	}
	if len(args) == 0 || toolName(args[0]) != "kubectl" {
		return none, false
	}
	f := parseFlags(args[1:], kubectlValued)
	pos := f.pos
	if len(pos) == 2 && strings.HasPrefix(pos[1], "secret/") {
		pos = []string{pos[0], "secret", strings.TrimPrefix(pos[1], "secret/")}
	}
	o := strings.Trim(f.get("o", "output"), `'"`)
	m := secretKeyPath.FindStringSubmatch(o)
	if !piped {
		if m = secretKeyTemplate.FindStringSubmatch(o); m != nil {
			m = append(m, "")
		}
	}
	if len(pos) != 3 || pos[0] != "get" || pos[1] != "secret" && pos[1] != "secrets" || m == nil {
		return none, false
	}
	key := strings.ReplaceAll(m[1], `\.`, ".") + m[2]
	ns := f.get("n", "namespace")
	return importer.OutKeyRef{Name: pos[2], Namespace: ns, Key: key}, true
}

func decodes(a string) bool { return a == "-d" || a == "--decode" || a == "-D" }

// setsFromSecrets takes the parts k=${NAME} of a --set whose NAME the
// script read from a Secret's key out of val, into the step's valuesFrom.
func (t *translator) setsFromSecrets(x *cmd, h *importer.OutHelm, val string) string {
	var keep []string
	for _, part := range strings.Split(val, ",") {
		k, v, _ := strings.Cut(part, "=")
		ref, ok := t.secretKeys[strings.TrimSuffix(strings.TrimPrefix(v, "${"), "}")]
		if !ok || !strings.HasPrefix(v, "${") || k == "" {
			keep = append(keep, part)
			continue
		}
		ref.TargetPath = k
		h.ValuesFrom = append(h.ValuesFrom, importer.OutSource{SecretKeyRef: &ref})
		t.info(x.stmt, "--set "+k, "the script reads it from key "+ref.Key+" of Secret "+ref.Namespace+"/"+ref.Name+" before this command: the step reads it from there when it runs (valuesFrom secretKeyRef), after the steps before it")
	}
	return strings.Join(keep, ",")
}

// clusterSecretLiteral names a ConfigMap literal not carried when its
// value is one the script reads from a key of a cluster Secret: it exists
// only once the cluster fills the Secret during the run (a service
// account token), so it is no input to ask for (trial 46s68g's D3: a
// required secret variable nobody can give).
func (t *translator) clusterSecretLiteral(x *cmd, name, k, v string) bool {
	for _, m := range varRef.FindAllStringSubmatch(v, -1) {
		ref, ok := t.secretReads[m[1]]
		if !ok {
			continue
		}
		in := ref.Name
		if ref.Namespace != "" {
			in = ref.Namespace + "/" + ref.Name
		}
		t.account(x.stmt, importer.FateNotCarried, "", "key "+k+" of ConfigMap "+name+" is $"+m[1]+", which the script reads from key "+ref.Key+" of Secret "+in+" when it runs: the value exists only once the cluster fills the Secret during the run, and khook cannot write it into a ConfigMap: have what reads the ConfigMap read that Secret key instead (secretKeyRef)")
		return true
	}
	return false
}
