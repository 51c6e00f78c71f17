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

// secretKeyRead is the Secret key a $(kubectl get secret … | base64 -d)
// reads; false when w is no such read.
func (t *translator) secretKeyRead(w *syntax.Word) (importer.OutKeyRef, bool) {
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
	p, ok := cs.Stmts[0].Cmd.(*syntax.BinaryCmd)
	if !ok || p.Op != syntax.Pipe {
		return none, false
	}
	dec, ok := p.Y.Cmd.(*syntax.CallExpr)
	get, ok2 := p.X.Cmd.(*syntax.CallExpr)
	if !ok || !ok2 || len(dec.Args) != 2 || lit(dec.Args[0]) != "base64" || !decodes(lit(dec.Args[1])) {
		return none, false
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
	m := secretKeyPath.FindStringSubmatch(strings.Trim(f.get("o", "output"), `'"`))
	ns := f.get("n", "namespace")
	if len(pos) != 3 || pos[0] != "get" || pos[1] != "secret" && pos[1] != "secrets" || m == nil || ns == "" {
		return none, false // without -n: the context's namespace, which the step cannot name
	}
	key := strings.ReplaceAll(m[1], `\.`, ".") + m[2]
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
