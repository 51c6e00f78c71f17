package shscript

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/itchyny/gojq"
	yaml "go.yaml.in/yaml/v3"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/khook/khook/internal/importer"
)

// shVar is a shell variable: its value as text in which khook variables
// are ${NAME} references, or a khook variable of its own (decl) declared
// the first time the script uses it.
type shVar struct {
	val   string
	list  []string // an array's elements
	array bool
	decl  *importer.Var
	// unknown: its value is only known when the script runs (computed, or
	// set under a condition khook cannot decide): unquoted, it may split
	// into any words.
	unknown bool
	was     string // the value it had before it became unknown (cmd="helm install …", then cmd+=… under a condition)
	alts    []alt  // set under when: one value per branch (condvars.go)
	fb      int    // the branch of alts whose value the fields above hold
}

// secretLooking is importer.SecretLooking, but for a variable named just
// `key`: in a script that is the key of a pair (key=app.kubernetes.io/name;
// for key in …), the shell idiom, not a key that opens anything (API_KEY,
// KEY, ssh_key stay secret).
func secretLooking(name string) bool { return name != "key" && importer.SecretLooking(name) }

// ref declares v (once) and is its ${NAME} reference.
func (t *translator) ref(v *importer.Var) string {
	if t.m.Var(v.Name) == nil {
		t.m.Vars = append(t.m.Vars, v)
	}
	return "${" + v.Name + "}"
}

// eval is a word's value; ok is false when part of it cannot be known at
// import (a command's output, arithmetic): why says which.
func (t *translator) eval(w *syntax.Word) (val string, ok bool, why string) {
	if w == nil {
		return "", true, ""
	}
	var b strings.Builder
	ok = true
	for _, p := range w.Parts {
		s, pok, pwhy := t.part(p, w)
		if !pok && ok {
			ok, why = false, pwhy
		}
		b.WriteString(s)
	}
	return b.String(), ok, why
}

// fields is a command's argument after word splitting: an unquoted $VAR
// or ${ARR[@]} can be several arguments.
func (t *translator) fields(w *syntax.Word) ([]string, bool, string) {
	ws := braces(w) // cert-manager{,-webhook}: bash's brace expansion, before any other
	if len(ws) == 1 {
		// {{EC2PrivateDNSName}}, {a}: one word, itself again; expanding
		// it again would never end
		w, ws = ws[0], nil
	}
	if ws != nil {
		var out []string
		for _, x := range ws {
			fs, ok, why := t.fields(x)
			if !ok {
				return nil, false, why
			}
			out = append(out, fs...)
		}
		return out, true, ""
	}
	if len(w.Parts) == 1 {
		pe, quoted := paramOf(w.Parts[0])
		if fs, ok := t.arrayAlternate(pe); ok {
			return fs, true, ""
		}
		if pe != nil && pe.Param != nil && (pe.Exp == nil || transforms(pe)) {
			if (pe.Param.Value == "@" || pe.Param.Value == "*") && (t.inFunc || t.argsGiven) && t.argsRest == 0 {
				return t.argsFrom(pe)
			}
			if (pe.Param.Value == "@" || pe.Param.Value == "*") && pe.Exp == nil && pe.Slice == nil && !pe.Length {
				// kubectl apply -f base "$@": extra flags, none by default
				// (those a calling script passed on are known)
				t.info(w, "$"+pe.Param.Value, noArgs)
				return append([]string(nil), t.args...), true, ""
			}
			if v := t.vars[pe.Param.Value]; v != nil && v.array && allIndex(pe) && pe.Exp == nil && !transforms(pe) {
				if pe.Excl { // "${!A[@]}": its indexes (46zza's D4)
					return indexes(v.list), true, ""
				}
				return append([]string(nil), v.list...), true, ""
			}
			if !quoted {
				s, ok, why := t.eval(w)
				if strings.Contains(s, "${") {
					// "--kubeconfig ${KUBECONFIG_PATH}": split where the
					// script's own text has a space; a ${…} stays one word
					return strings.Fields(s), ok, why
				}
				return t.globs(w, strings.Fields(s)), ok, why
			}
		}
	}
	s, ok, why := t.eval(w)
	if ok && unquotedGlob(w) {
		return t.globs(w, []string{s}), ok, why
	}
	if _, cs := w.Parts[0].(*syntax.CmdSubst); ok && cs && len(w.Parts) == 1 && strings.Contains(s, "\n") && !strings.Contains(s, "${") {
		return strings.Fields(s), ok, why // for f in $(find …): bash splits the lines it prints
	}
	if ok && s == "" && !quotes(w) {
		return nil, true, "" // `# a comment` in backquotes, an empty $(…): no word at all
	}
	return []string{s}, ok, why
}

// arrayAlternate is "${A[@]+"${A[@]}"}", the set -u idiom for an array
// maybe empty, as bash expands it: the word after + when A has elements,
// no word at all when it has none (trial 46s67k's D2: the array's --set
// was dropped, and the empty case named as failing).
func (t *translator) arrayAlternate(pe *syntax.ParamExp) ([]string, bool) {
	if pe == nil || pe.Param == nil || pe.Exp == nil || (pe.Exp.Op != syntax.AlternateUnset && pe.Exp.Op != syntax.AlternateUnsetOrNull) || !allIndex(pe) || pe.Excl || pe.Length {
		return nil, false
	}
	v := t.vars[pe.Param.Value]
	if v == nil || !v.array {
		return nil, false
	}
	if len(v.list) == 0 {
		return nil, true
	}
	fs, ok, _ := t.fields(pe.Exp.Word)
	return fs, ok
}

// quotes: w has a quoted part (an empty quoted string is still a word).
func quotes(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		}
	}
	return false
}

// unquotedGlob: w has a *, ? or [ bash reads as a pattern (not quoted).
func unquotedGlob(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.ContainsAny(l.Value, "*?[") {
			return true
		}
	}
	return false
}

// globs is bash's pathname expansion of fields, against the files there
// at import (a pattern that matches none stays itself, as in bash), said
// at w: a file added later is not in the step.
func (t *translator) globs(w *syntax.Word, fields []string) []string {
	var out []string
	for _, f := range fields {
		matches, err := filepath.Glob(t.abs(f))
		if !strings.ContainsAny(f, "*?[") || err != nil || len(matches) == 0 {
			out = append(out, f)
			continue
		}
		for _, m := range matches {
			if !filepath.IsAbs(f) {
				m, _ = filepath.Rel(t.cwd, m)
			}
			out = append(out, filepath.ToSlash(m))
		}
		t.info(w, f, "bash expands it when the script runs; the "+strconv.Itoa(len(matches))+" files it matched at import are listed, and a file added later is not (make the directory a kustomization)")
	}
	return out
}

// noArgs says a "$@" of the script's own arguments, none given to the
// import, is no word.
const noArgs = "the script's own arguments: none were given to the import, so this command takes none; give them after the script's name to import them"

// droppedArg: w, the last word of a helm install or upgrade that names
// its release and chart before it (args), is an unquoted $1 (…) of the
// script's own arguments, none given to the import and no set -u, after
// no flag it may be the value of (helm install x ./chart --version 1.0.0
// $1): bash drops the empty word, so the step is the command without it,
// as with a trailing "$@" (trial 46s67i's D3: the install was not
// carried for ${ARG1}'s words). A command that needs the word (helm
// uninstall $1) keeps its ${ARG1}.
func (t *translator) droppedArg(w *syntax.Word, args []string) bool {
	pe, quoted := paramOf(w.Parts[0])
	if len(w.Parts) != 1 || quoted || pe == nil || pe.Param == nil || pe.Exp != nil || pe.Slice != nil || pe.Length || pe.Index != nil ||
		t.inFunc || t.argsGiven || t.argsRest > 0 || t.nounset || strings.HasPrefix(args[len(args)-1], "-") || toolName(args[0]) != "helm" {
		return false
	}
	if f := parseFlags(args[1:], helmValued); len(f.pos) < 3 || f.pos[0] != "install" && f.pos[0] != "upgrade" {
		return false
	}
	if n, err := strconv.Atoi(pe.Param.Value); err != nil || n < 1 || t.vars["ARG"+pe.Param.Value] != nil {
		return false
	}
	t.info(w, "$"+pe.Param.Value, "the script's own argument: none was given to the import, so bash drops this empty unquoted word and the step takes none; an argument would add words to this command: give the script's arguments after its name to import them")
	return true
}

// argsFrom is "$@", or "${@:N}" (the parameters from the Nth on).
func (t *translator) argsFrom(pe *syntax.ParamExp) ([]string, bool, string) {
	if pe.Slice == nil {
		return append([]string(nil), t.args...), true, ""
	}
	w, _ := pe.Slice.Offset.(*syntax.Word)
	n, err := strconv.Atoi(lit(w))
	if err != nil || pe.Slice.Length != nil || n < 1 {
		return nil, false, "an expansion khook cannot evaluate at import"
	}
	if n-1 >= len(t.args) {
		return nil, true, ""
	}
	return append([]string(nil), t.args[n-1:]...), true, ""
}

func paramOf(p syntax.WordPart) (*syntax.ParamExp, bool) {
	switch x := p.(type) {
	case *syntax.ParamExp:
		return x, false
	case *syntax.DblQuoted:
		if len(x.Parts) == 1 {
			pe, _ := x.Parts[0].(*syntax.ParamExp)
			return pe, true
		}
	}
	return nil, false
}

func (t *translator) part(p syntax.WordPart, w *syntax.Word) (string, bool, string) {
	switch x := p.(type) {
	case *syntax.Lit:
		switch t.hdoc {
		case hdocQuoted: // <<'EOF': the text as it is
			return x.Value, true, ""
		case hdocPlain:
			return unescape(x.Value, inHeredoc), true, ""
		}
		if w != nil && len(w.Parts) > 0 && w.Parts[0] == p && (x.Value == "~" || strings.HasPrefix(x.Value, "~/")) {
			// bash's tilde: $HOME, the home of whoever runs the script
			// (cd ~/provider: trial 46ze's D3), as "$HOME" reads
			home, ok, why := t.part(&syntax.ParamExp{Short: true, Param: &syntax.Lit{Value: "HOME", ValuePos: x.ValuePos, ValueEnd: x.ValuePos}}, w)
			return home + unescape(x.Value[1:], ""), ok, why
		}
		return unescape(x.Value, ""), true, ""
	case *syntax.SglQuoted:
		if t.inDq > 0 && !x.Dollar {
			// "${X:-''}": inside double quotes bash keeps the quotes, so
			// the value is the two characters '' (trial 46s69l's D3:
			// written "", which rendered null)
			return "'" + x.Value + "'", true, ""
		}
		return x.Value, true, ""
	case *syntax.DblQuoted:
		t.inDq++
		defer func() { t.inDq-- }()
		var b strings.Builder
		ok, why := true, ""
		for _, q := range x.Parts {
			if l, isLit := q.(*syntax.Lit); isLit {
				b.WriteString(unescape(l.Value, inDoubleQuotes))
				continue
			}
			s, qok, qwhy := t.part(q, w)
			if !qok && ok {
				ok, why = false, qwhy
			}
			b.WriteString(s)
		}
		return b.String(), ok, why
	case *syntax.ParamExp:
		s, ok, why := t.param(x)
		if !ok && t.holes != nil && t.hdoc == hdocPlain {
			*t.holes = append(*t.holes, why)
			return holeMark, true, ""
		}
		return s, ok, why
	case *syntax.CmdSubst:
		// "$(echo 'a')": the quotes inside are the command's own
		dq := t.inDq
		t.inDq = 0
		defer func() { t.inDq = dq }()
		return t.cmdSubst(x)
	case *syntax.ArithmExp:
		return t.arithm(x)
	case *syntax.ProcSubst:
		if f := t.sopsDecrypt(x); f != "" {
			return f, true, ""
		}
		return "", false, "the output of " + t.text(x) + ", which khook does not run"
	}
	return "", false, "an expansion khook cannot evaluate at import"
}

// sopsDecrypt is FILE of <(sops -d FILE) (also --decrypt, an --input-type
// or --output-type before it): khook decrypts a sops file itself where a
// step reads it (values, manifests), so the step reads the encrypted file
// and the plaintext never reaches the spec (trial 46zw's N2: "only known
// when the script runs", sops named nowhere). "" for any other.
func (t *translator) sopsDecrypt(ps *syntax.ProcSubst) string {
	if ps.Op != syntax.CmdIn || len(ps.Stmts) != 1 {
		return ""
	}
	c, ok := ps.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) < 3 || lit(c.Args[0]) != "sops" {
		return ""
	}
	f := sopsFile(litArgs(c.Args[1:]))
	if f != "" {
		t.info(ps, t.text(ps), "the sops file "+f+" itself: khook decrypts it where the step reads it, so its plaintext never reaches the spec")
	}
	return f
}

// sopsFile is FILE of the arguments of sops -d FILE; "" for any other.
func sopsFile(args []string) string {
	decrypt := false
	for i := 0; i < len(args)-1; i++ {
		switch a := args[i]; {
		case a == "-d" || a == "--decrypt":
			decrypt = true
		case a == "--input-type" || a == "--output-type":
			i++
		case strings.HasPrefix(a, "--input-type=") || strings.HasPrefix(a, "--output-type="):
		default:
			return ""
		}
	}
	f := args[len(args)-1]
	if !decrypt || f == "" || strings.HasPrefix(f, "-") {
		return ""
	}
	return f
}

// unescape is bash's quote removal of a literal's backslashes: a
// backslash before one of escapable ("" for any character: outside quotes)
// goes; inside double quotes only \$ \` \" \\ lose theirs ("a\.b" keeps it,
// for helm's --set), in a here-document \$ \` \\.
func unescape(s, escapable string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (escapable == "" || strings.IndexByte(escapable, s[i+1]) >= 0) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Which characters a backslash escapes, by where it is.
const (
	inDoubleQuotes = "$`\"\\\n"
	inHeredoc      = "$`\\\n"
)

// param is $NAME, ${NAME:-default} and their kin.
func (t *translator) param(pe *syntax.ParamExp) (string, bool, string) {
	if v := t.vars[paramName(pe)]; v != nil && v.array && v.val == "" && pe.Excl && allIndex(pe) && pe.Exp == nil && !pe.Length {
		return strings.Join(indexes(v.list), " "), true, "" // ${!A[@]}
	}
	if pe.Param == nil || pe.Excl || pe.Width || pe.IsSet {
		return "", false, "an expansion khook cannot evaluate at import"
	}
	if transforms(pe) {
		return t.transform(pe)
	}
	name := pe.Param.Value
	switch name {
	case "0":
		return t.scriptPath, true, ""
	case "BASH_SOURCE":
		return t.scriptPath, true, ""
	case "PWD":
		return t.cwd, true, ""
	case "@", "*":
		if pe.Length || pe.Repl != nil {
			return "", false, "an expansion khook cannot evaluate at import"
		}
		if (t.inFunc || t.argsGiven) && t.argsRest == 0 {
			args, ok, why := t.argsFrom(pe)
			return strings.Join(args, " "), ok, why
		}
		return "", false, "$" + name + " is only known when the script runs"
	case "#":
		if (t.inFunc || t.argsGiven) && t.argsRest == 0 && pe.Exp == nil && !pe.Length {
			return strconv.Itoa(len(t.args)), true, "" // the arguments given are known
		}
		return "", false, "$# is only known when the script runs"
	case "?", "$", "!", "-", "RANDOM", "SECONDS", "LINENO":
		return "", false, "$" + name + " is only known when the script runs"
	}
	if n, err := strconv.Atoi(name); err == nil {
		switch {
		case n-1 < len(t.args) && (t.inFunc || t.argsGiven):
			return t.withExp(pe, t.args[n-1], true)
		case t.argsRest > 0: // bash x.sh a "$@": its $2 is the script's own $1
			name = "ARG" + strconv.Itoa(t.argsRest+n-1-len(t.args))
		case t.inFunc || t.argsGiven:
			return t.withExp(pe, "", false)
		default:
			name = "ARG" + name
		}
	}
	if v, ok := t.vars[name]; ok {
		t.readAfterCheck(name, v)
		if v.decl != nil {
			return t.ref(v.decl), true, ""
		}
		if v.array && v.val == "" {
			// ${A[1]}, ${#A[@]}, ${A[@]} of an array known at import (trial
			// 46zy's D3: POSITIONAL_ARGS[1] read as its first element)
			idx := ""
			if pe.Index != nil && !allIndex(pe) {
				// ${A[$i]}, ${A[i+1]}: bash's arithmetic over what the
				// script set (46zza's D4: "" for an index it could not read)
				env := &knownEnv{t: t}
				n, err := expand.Arithm(&expand.Config{Env: env}, pe.Index)
				if env.unknown != "" || err != nil {
					return "", false, "the index " + t.text(pe.Index) + " of " + name + " is only known when the script runs"
				}
				idx = strconv.Itoa(n)
			} else if pe.Index != nil {
				idx = strings.TrimSpace(t.text(pe.Index))
			}
			switch n, err := strconv.Atoi(idx); {
			case pe.Length && (idx == "@" || idx == "*"):
				return strconv.Itoa(len(v.list)), true, ""
			case idx == "@" || idx == "*":
				return t.withExp(pe, strings.Join(v.list, " "), len(v.list) > 0)
			case err == nil && n >= 0:
				if n < len(v.list) {
					return t.withExp(pe, v.list[n], true)
				}
				return t.withExp(pe, "", false)
			case len(v.list) > 0 && pe.Index == nil:
				return v.list[0], true, ""
			}
		}
		return t.withExp(pe, v.val, true)
	}
	return t.input(pe, name)
}

// allIndex: pe is ${A[@]} or ${A[*]} (also ${!A[@]}).
func allIndex(pe *syntax.ParamExp) bool {
	w, ok := pe.Index.(*syntax.Word)
	return ok && (lit(w) == "@" || lit(w) == "*")
}

// paramName is the name pe reads ("" for none).
func paramName(pe *syntax.ParamExp) string {
	if pe.Param == nil {
		return ""
	}
	return pe.Param.Value
}

// indexes are an indexed array's indexes, as ${!A[@]} lists them.
func indexes(list []string) []string {
	out := make([]string, len(list))
	for i := range list {
		out[i] = strconv.Itoa(i)
	}
	return out
}

// withExp applies ${X:-d} to a value the script set (set: X was assigned).
func (t *translator) withExp(pe *syntax.ParamExp, val string, set bool) (string, bool, string) {
	if pe.Exp == nil {
		return val, true, ""
	}
	switch pe.Exp.Op {
	case syntax.DefaultUnset, syntax.AssignUnset:
		if set {
			return val, true, ""
		}
		return t.eval(pe.Exp.Word)
	case syntax.DefaultUnsetOrNull, syntax.AssignUnsetOrNull:
		if set && val != "" {
			return val, true, ""
		}
		return t.eval(pe.Exp.Word)
	case syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
		return val, true, ""
	}
	return "", false, "an expansion khook cannot evaluate at import"
}

// input is a variable the script reads but never sets: the environment
// gives it, so it becomes a declared khook variable, with the script's
// default when it has one; a secret-looking one is a secret.
// currentContextValue is a value that is the current context's name.
var currentContextValue = regexp.MustCompile(`^"?\$\(kubectl config current-context\)"?$`)

// ownKubeconfig is said where the script sets KUBECONFIG.
const ownKubeconfig = "the script points helm and kubectl at a kubeconfig of its own; khook runs against the cluster it is given (khook's --kubeconfig, or KUBECONFIG when khook runs)"

func (t *translator) input(pe *syntax.ParamExp, name string) (string, bool, string) {
	if name == "GITHUB_WORKSPACE" || name == "CI_PROJECT_DIR" {
		// the CI's checkout: its top, as git rev-parse --show-toplevel is
		return t.withExp(pe, t.checkoutTop(), true)
	}
	v := &importer.Var{Name: name, From: t.loc(pe), Secret: secretLooking(name)}
	if pe.Exp != nil {
		switch pe.Exp.Op {
		case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
			d, ok, why := t.eval(pe.Exp.Word)
			if !ok {
				return "", false, why
			}
			t.unsetValue(name, d)
			if strings.Contains(d, "${") && !v.Secret && t.m.Var(name) == nil && t.refsSecret(d) {
				// PASS=${1:-$default_pass}: the step holds the secret
				// variable the value goes into, never a default (46zzg's D8)
				t.info(pe, "$"+name, "its default is a secret ("+d+"), which no khook default holds: a secret variable stands for the value where the script uses it, and "+name+" from the environment is not read")
				return d, true, ""
			}
			if strings.Contains(d, "${") && !v.Secret && t.m.Var(name) == nil {
				// ${URL:-https://…/$V/op.yaml}: a khook default is taken as
				// written, never expanded; the script's default goes in
				// the step, where ${V} is
				t.info(pe, "$"+name, "its default refers to another variable, which a khook variable's default cannot: the script's default is written in the step, and "+name+" from the environment is not read (edit the step to change it)")
				return d, true, ""
			}
			if rel, err := filepath.Rel(t.runDir, d); err == nil && filepath.IsAbs(d) && rel != ".." && !strings.HasPrefix(rel, "../") {
				// ${VALUES_FILE:-$(dirname "$0")/values.yaml}: a file of the
				// repository, as the spec names its files, never this
				// machine's path (trial 46r's D6, 46v's qdrant)
				d = t.specPath(d)
				t.rebasedAlready(name) // written from the spec's folder here, not again (46zzj's D1)
			}
			if !v.Secret {
				v.Default = &d
			} else if d != "" {
				// unset, the script takes its default; khook holds none,
				// so the value must be given, never "" in its place
				v.Required = true
				t.m.Info = append(t.m.Info, importer.Note{Loc: v.From, What: "the default of " + name, Why: "not copied into the spec: a secret variable has no default; give it as KHOOK_SECRET_" + name})
			}
		case syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
			v.Required = true // ${TOKEN:?}: the script stops without it
		default:
			return "", false, "an expansion khook cannot evaluate at import"
		}
	} else {
		// $jwtsecret never set: a secret too, so a run without it stops at
		// khook validate instead of applying "" (trial 46s67l's D3)
		v.Required = true
		v.Description = "read from the environment by the script"
		if argVar.MatchString(name) {
			// $1 of a script the import was given no arguments for (46zm's D1)
			v.Description = "the script's argument $" + name[3:] + ", which the import was not given (khook import script FILE ARG… gives it)"
		}
		if t.unsetOnPath[name] && !v.Secret && !t.nounset {
			// PREFIX set only under if [ "$1" ]: on the path without it
			// bash expands it empty (trial 46s69e's D2: required, so a
			// script run without input needed one)
			empty := ""
			v.Required, v.Default = false, &empty
			v.Description = "set by the script only on another branch; unset here, it is empty, as in the script, unless the environment sets it"
		}
	}
	if old := t.m.Var(name); old != nil {
		if old.Default != nil && v.Default != nil && *old.Default != *v.Default && !old.Secret {
			// HANDLER=${HANDLER:-runc} in one case branch, :-runsc in another:
			// a khook variable has one default, so it has none
			t.info(pe, "$"+name, "the script gives it another default here ("+*v.Default+", "+*old.Default+" at "+old.From.String()+"); a khook variable has one default, so "+name+" is required: give it")
			old.Default, old.Required = nil, true
			old.Description = "the script gives it a default per branch (" + old.From.String() + ", " + t.loc(pe).String() + ")"
		}
		return "${" + name + "}", true, ""
	}
	return t.ref(v), true, ""
}

// refsSecret: s refers to a secret variable.
func (t *translator) refsSecret(s string) bool {
	for _, m := range varRef.FindAllStringSubmatch(s, -1) {
		if v := t.vars[m[1]]; v != nil && v.decl != nil && v.decl.Secret || t.m.Var(m[1]) != nil && t.m.Var(m[1]).Secret {
			return true
		}
	}
	return false
}

// podPick is a pod the script picks by label (POD=$(kubectl get pod -l
// app=x -o jsonpath='{.items[0].metadata.name}')): its namespace and
// selector, so that a wait on it is a wait on the pods the label selects.
type podPick struct{ ns, sel string }

func (t *translator) podPick(w *syntax.Word) (ns, sel string, ok bool) {
	if w == nil || len(w.Parts) != 1 {
		return "", "", false
	}
	part := w.Parts[0]
	if dq, isDq := part.(*syntax.DblQuoted); isDq && len(dq.Parts) == 1 {
		part = dq.Parts[0]
	}
	cs, isSubst := part.(*syntax.CmdSubst)
	if isSubst && readsPods(cs) && (len(cs.Stmts) != 1 || !isCommand(cs.Stmts[0], "kubectl")) {
		// pod=$(kubectl get pod -n x | grep app-db | cut -d " " -f1): a
		// name with a random suffix, only there once the run made it (46zzg's D4)
		return "", "", true
	}
	if !isSubst || len(cs.Stmts) != 1 || !isCommand(cs.Stmts[0], "kubectl") {
		return "", "", false
	}
	x := t.newCmd(cs.Stmts[0], cs.Stmts[0].Cmd.(*syntax.CallExpr))
	f := parseFlags(x.args[1:], kubectlValued)
	out := f.get("o", "output")
	if !x.ok || len(f.pos) != 2 || f.pos[0] != "get" || (f.pos[1] != "pod" && f.pos[1] != "pods" && f.pos[1] != "po") ||
		f.get("l", "selector") == "" || !strings.Contains(out, "items[0]") || !strings.Contains(out, "metadata.name") {
		return "", "", false
	}
	return f.get("n", "namespace"), f.get("l", "selector"), true
}

// readsPods: the command substitution lists pods (kubectl get pods), not
// by a label (-l: podPick's, a wait on the pods it selects).
func readsPods(cs *syntax.CmdSubst) bool {
	found := false
	syntax.Walk(cs, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 2 && isTool(lit(c.Args[0])) {
			var pos []string
			for _, w := range c.Args[1:] {
				if a := lit(w); a == "-l" || strings.HasPrefix(a, "--selector") {
					return false
				} else if a != "" && !strings.HasPrefix(a, "-") {
					pos = append(pos, a)
				}
			}
			found = found || len(pos) >= 2 && pos[0] == "get" && (pos[1] == "pod" || pos[1] == "pods" || pos[1] == "po")
		}
		return !found
	})
	return found
}

// fallback: name holds a value the script computes, and the walk is in
// the branch where it is empty (if [[ -z "$NAME" ]]).
func (t *translator) fallback(name string) bool {
	v := t.vars[name]
	if v == nil || v.decl == nil || !v.decl.Computed || len(t.when) == 0 {
		return false
	}
	c := strings.TrimSuffix(strings.TrimPrefix(t.when[len(t.when)-1], "("), ")")
	return c == "vars.get("+strconv.Quote(v.decl.Name)+`, "") == ""`
}

// computedDescription begins the description of a variable the script
// sets from a value it computes when it runs.
const computedDescription = "the script computes it at "

// assign is NAME=value (also local, export, declare, readonly).
func (t *translator) assign(a *syntax.Assign) {
	if a.Name == nil {
		return
	}
	name := a.Name.Value
	t.exports(name, a)
	t.readsOf(name, a)
	delete(t.secretKeys, name)
	delete(t.secretReads, name)
	if ref, ok := t.secretKeyReadIn(a.Value); ok {
		if t.secretReads == nil {
			t.secretReads = map[string]importer.OutKeyRef{}
		}
		t.secretReads[name] = ref
	}
	if ref, ok := t.secretKeyRead(a.Value); ok && len(t.when) == 0 && t.undecidedDepth == 0 {
		t.secretKeys[name] = ref
	}
	if a.Array != nil {
		t.assignArray(name, a)
		return
	}
	if a.Value == nil {
		if a.Naked {
			return // `export NAME`, `local NAME`
		}
		t.vars[name] = &shVar{}
		return
	}
	if name == "KUBECONFIG" {
		t.info(a, "KUBECONFIG="+t.text(a.Value), ownKubeconfig)
	}
	t.fromFileSecrets, t.generated, t.computedSecret = false, false, false // what this value reads, not a command before it (46zy's D4)
	val, ok, why := t.eval(a.Value)
	t.noteAsRun(name, a.Value, val, ok)
	fromFile, generated, computed := t.fromFileSecrets, t.generated, t.computedSecret
	t.fromFileSecrets, t.generated, t.computedSecret = false, false, false
	switch {
	case val == "${"+name+"}" && t.m.Var(name) != nil:
		t.vars[name] = &shVar{decl: t.m.Var(name)}
	case ok && !fromFile && b64Ref.MatchString(val):
		// P64=$(echo -n $PASSWORD | base64): ${PASSWORD | b64enc}, whatever
		// its name says; the secret is PASSWORD's, not one to give encoded
		// (trial 46s67h's D2)
		t.vars[name] = &shVar{val: val}
	case (secretLooking(name) && !(t.optLoop > 0 && isParam1(a.Value)) && !t.namesASecret(val)) || fromFile:
		// key="$1" in an option loop is the option being read, as $1 is, not a secret
		t.secret(val)
		why := t.secretWhy(a, generated, computed, fromFile)
		if ok && val != "" && !strings.Contains(val, "${") && !fromFile && t.m.Var(name) == nil {
			// secret_key="creds": a secret by its name; said, since it may
			// only name one (trial 46x's D2)
			t.info(a, name, secretByName+"the script's literal value is not copied into the spec; give it as KHOOK_SECRET_"+name+" (if it only names something, such as a key of a Secret, write the value in the step)")
		}
		vn, call := t.secretName(name, a, generated)
		d := &importer.Var{Name: vn, Secret: true, Required: t.given(val), Computed: !ok, From: t.loc(a), Description: why + " (" + t.loc(a).String() + call + ")"}
		if given := t.onlyWhereGiven(); d.Required && d.Computed && given != "" {
			d.Required, d.RequiredWith = false, []string{given} // as computedVar (trial 46s69a's D2)
			d.Description += "; only where " + given + " is set"
		}
		t.vars[name] = &shVar{decl: t.alwaysSet(d)}
		t.renameGiveAs(val, t.vars[name].decl.Name)
	case !ok && t.fallback(name):
		// if [[ -z "$POD" ]]; then POD=$(kubectl get … other label); fi:
		// another way to find the one value, not a second variable (trial
		// 46w's D2: the steps waited on the fallback's value alone)
		t.info(a, name+"="+t.text(a.Value), "where the script's first way finds nothing it tries this one; the spec asks for "+name+" once")
	case !ok:
		t.vars[name] = &shVar{unknown: true, decl: t.computedVar(name, a, why)}
		if ns, sel, picked := t.podPick(a.Value); picked {
			t.pods[t.vars[name].decl.Name] = podPick{ns, sel}
		}
	case a.Append && t.vars[name] != nil:
		c := *t.vars[name] // a copy: the value before stays another branch's
		c.val += val
		t.vars[name] = &c
	default:
		t.vars[name] = &shVar{val: val}
	}
}

// secretWhy describes the secret the script sets at a.
func (t *translator) secretWhy(a *syntax.Assign, generated, computed, fromFile bool) string {
	switch {
	case generated:
		return "a secret the script generates (a new one each run; give the one to keep)"
	case computed && fromFile:
		return "a secret the script computes with commands khook does not run (" + t.masked(t.text(a.Value)) + ")"
	case fromFile && storeReader.MatchString(t.text(a.Value)):
		// $(aws ssm get-parameter …): a secret store or a cloud's API,
		// which may hold a secret (trial 46zi's D5: not "a file")
		return "a value the script reads from a secret store or a cloud API (" + t.masked(t.text(a.Value)) + "), taken as a secret; give it"
	case fromFile:
		return "a secret the script reads from a file"
	}
	return "a secret the script sets"
}

// readsOf remembers what name's value a reads: the current context, the
// cluster, the script's arguments, the machine.
func (t *translator) readsOf(name string, a *syntax.Assign) {
	if a.Value != nil && currentContextValue.MatchString(t.text(a.Value)) {
		t.ctxVars[name] = true // KUBE_CTX=$(kubectl config current-context)
	} else {
		delete(t.ctxVars, name)
	}
	if a.Value != nil && t.callsTool(a.Value, map[string]bool{}) && !clientOnly(a.Value) {
		t.clusterVals[name] = true // cfg=$(kubectl get cm x -o jsonpath=…)
	} else {
		delete(t.clusterVals, name)
	}
	markIn(&t.argVals, name, a.Value != nil && t.readsScriptArgs(a.Value))  // ACTION="${2:-deploy}"
	markIn(&t.machineVals, name, a.Value != nil && t.readsMachine(a.Value)) // OS=$(uname -s)
}

// exports records whether a command the script runs sees name after a:
// an export, declare -x, set -a before it, or NAME=${NAME:-x} (the
// environment's, exported, when it is there) export it; a plain
// assignment keeps the shell's own variable, which envsubst does not see
// (trial 46s67l's D4: source .env, then envsubst, wrote .env's values).
func (t *translator) exports(name string, a *syntax.Assign) {
	if t.shellOnly == nil {
		t.shellOnly = map[string]bool{}
	}
	switch {
	case t.exporting || t.allexport || a.Value != nil && strings.Contains(t.text(a.Value), name):
		t.shellOnly[name] = false // exported from here on, whatever sets it later
	case a.Value != nil || !a.Naked:
		if _, ok := t.shellOnly[name]; !ok && t.m.Var(name) == nil {
			t.shellOnly[name] = true
		}
	}
}

// renameGiveAs: API_KEY="${DD_API_KEY:-…}" makes the spec's variable
// API_KEY, not DD_API_KEY, so a note that says to give KHOOK_SECRET_DD_API_KEY
// names the variable the spec has (trial 46s67q's D2: following it left
// validate failing).
func (t *translator) renameGiveAs(val, spec string) {
	m := varRef.FindStringSubmatch(val)
	if m == nil || m[0] != val || m[1] == spec {
		return
	}
	for i, n := range t.m.Info {
		if n.What == "the default of "+m[1] && strings.HasSuffix(n.Why, "give it as KHOOK_SECRET_"+m[1]) {
			t.m.Info[i].Why = strings.TrimSuffix(n.Why, m[1]) + spec + " (the spec's variable for it: the script sets " + spec + " from " + m[1] + ")"
		}
	}
}

// b64Ref is what base64Of makes of $(echo -n "$X" | base64).
var b64Ref = regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]* (\| printf "[^"]*" )?\| b64enc\}$`)

// assignArray is NAME=(…) (and NAME+=(…)).
func (t *translator) assignArray(name string, a *syntax.Assign) {
	v := &shVar{array: true}
	if old := t.vars[name]; old != nil && a.Append { // a copy: the value before stays another branch's
		v.list = append(v.list, old.list...)
	}
	t.vars[name] = v
	for _, el := range a.Array.Elems {
		if el.Value != nil {
			// ("$@"): a field per argument, none for none (trial 46zw's
			// D1, D2: one joined word, or an empty one)
			if fs, ok, _ := t.fields(t.hoist(el.Value)); ok && el.Index == nil {
				v.list = append(v.list, fs...)
				continue
			}
			s, _, _ := t.eval(t.hoist(el.Value))
			v.list = append(v.list, s)
		}
	}
}

// computedVar is the variable for a value the script computes at a's
// line: required, as only the run knows it; but the time the script
// runs ($(date +%s), a stamp that forces a change each run: 46zzf's N2)
// is any value that changes, optional.
func (t *translator) computedVar(name string, a *syntax.Assign, why string) *importer.Var {
	vn, turn := t.turnVarName(name, a)
	v := &importer.Var{Name: vn, Required: true, Computed: true, From: t.loc(a), Description: computedDescription + t.loc(a).String() + turn + " (" + why + ")"}
	if clock.MatchString(t.text(a.Value)) {
		v.Required, v.Computed = false, false
		v.Description = "the time the script runs (" + t.loc(a).String() + ", " + t.text(a.Value) + "): a new value each run; give any value that changes to make the change again"
		t.info(a, name, v.Description)
	} else if given := t.onlyWhereGiven(); given != "" {
		// computed only under if [ -n "$SHARDS" ]: the run without
		// SHARDS never needs it (trial 46s69a's D2: four values to
		// invent for the default run)
		v.Required, v.RequiredWith = false, []string{given}
		v.Description += "; only where " + given + " is set"
	}
	return v
}

// onlyWhereGiven is the variable the path to here tests is set when
// every condition of the path is such a test (if [ -n "$A" ]; then …; if
// [ -n "$B" ]: the last, B, set only where A is), else "".
func (t *translator) onlyWhereGiven() string {
	given := ""
	for _, w := range t.when[t.splitWhens:] {
		for _, c := range strings.Split(w, " && ") {
			m := givenTest.FindStringSubmatch(c)
			if m == nil {
				return ""
			}
			given = m[1]
		}
	}
	return given
}

// clock is $(date …), the time the script runs.
var clock = regexp.MustCompile(`^"?\$\(date(\s[^()|;&]*)?\)"?$`)

// secretName is the spec's name for a secret the script sets at loc: one
// name however often it is set, since the script means one secret
// (PGPASS=$(openssl rand …) for a new Secret, then read back from it);
// but each generation is a new value (46zzf's D1: ADMIN_PW made in a
// script the script runs, and again after it for another Secret); and
// one line read per call from what differs (mk a; mk b, each reading
// pw/$1.txt) is a secret per call, as a computed value is (callVarName).
func (t *translator) secretName(name string, a *syntax.Assign, generated bool) (string, string) {
	loc := t.loc(a)
	if generated {
		return t.varName(name, loc), ""
	}
	if v := t.m.Var(name); v == nil || v.From == loc {
		return t.callVarName(name, a)
	}
	return name, ""
}

// varName is the spec's name for the value the script sets at loc: NAME,
// or NAME_2, NAME_3… when the spec already has a NAME the script set
// elsewhere (LATEST=$(curl …cert-manager…), later LATEST=$(curl
// …ingress-nginx…): two values, which one variable could not hold).
func (t *translator) varName(name string, loc importer.Loc) string {
	n := name
	for i := 2; ; i++ {
		v := t.m.Var(n)
		if v == nil || v.From == loc {
			return n
		}
		n = name + "_" + strconv.Itoa(i)
	}
}

// turnVarName is varName for a value the script computes in a turn of a
// loop over known values, reading the loop's variable ($(share $PCT) in
// for PCT in 5 10 25): a value per turn, so a variable per turn (46zzb's
// D2: one variable scaled every stage alike); turn says which (", for
// PCT=10"), "" outside such a loop.
func (t *translator) turnVarName(name string, a *syntax.Assign) (string, string) {
	var key []string
	add := func(name string) {
		if v := t.turns[name]; v != "" && !slices.Contains(key, name+"="+v) {
			key = append(key, name+"="+v)
		}
	}
	syntax.Walk(a.Value, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.ArithmExp: // $(( FULL * pct / 100 )): a bare name is the variable
			syntax.Walk(x.X, func(n syntax.Node) bool {
				if l, ok := n.(*syntax.Lit); ok {
					add(l.Value)
				}
				return true
			})
		case *syntax.ParamExp:
			if x.Param != nil {
				add(x.Param.Value)
			}
		}
		return true
	})
	if len(key) == 0 {
		return t.callVarName(name, a)
	}
	turn := ", for " + strings.Join(key, " ")
	n := name
	for i := 2; ; i++ {
		if v := t.m.Var(n); v == nil || v.From == t.loc(a) && strings.Contains(v.Description, turn+" (") {
			return n, turn
		}
		n = name + "_" + strconv.Itoa(i)
	}
}

// callVarName is varName for a value computed at one line walked more
// than once, in a function called twice or a script run twice, from what
// differs per call (restore a; restore b, each reading ids/$1.txt): a
// value per call, so a variable per call, each saying which (trial
// 46s70e's D1: one backup id for two volumes restored from two backups).
func (t *translator) callVarName(name string, a *syntax.Assign) (string, string) {
	loc, read := t.loc(a), t.knownReads(a.Value)
	if t.callReads == nil {
		t.callReads = map[string]string{}
	}
	n := name
	for i := 2; ; i++ {
		v := t.m.Var(n)
		r, seen := t.callReads[n]
		if v == nil || v.From == loc && (!seen || r == read) {
			break
		}
		n = name + "_" + strconv.Itoa(i)
	}
	t.callReads[n] = read
	if n == name || read == "" {
		return n, ""
	}
	if first := t.m.Var(name); first != nil && first.From == loc && !strings.Contains(first.Description, loc.String()+", for ") && t.callReads[name] != "" {
		first.Description = strings.Replace(first.Description, loc.String(), loc.String()+", for "+t.masked(t.callReads[name]), 1)
	}
	return n, ", for " + t.masked(read)
}

// knownReads are the values known at import of the variables and
// arguments w reads ("$1=a BACKUP_ID_FILE=ids/a.txt"), which tell one
// call's computation from another's.
func (t *translator) knownReads(w syntax.Node) string {
	var key []string
	syntax.Walk(w, func(n syntax.Node) bool {
		pe, ok := n.(*syntax.ParamExp)
		if !ok || pe.Param == nil {
			return true
		}
		p := pe.Param.Value
		if i, err := strconv.Atoi(p); err == nil && i > 0 {
			if i <= len(t.args) && (t.inFunc || t.argsGiven) {
				key = append(key, "$"+p+"="+t.args[i-1])
			}
		} else if v := t.vars[p]; v != nil && v.decl == nil && !v.unknown && !v.array {
			key = append(key, p+"="+v.val)
		}
		return true
	})
	return strings.Join(slices.Compact(key), " ")
}

// given: the script always gives the value — a literal, a computation,
// or a variable it needs — so its secret variable is required (an empty
// one would pass unasked); a lone optional variable of the environment
// (TOKEN=${GITHUB_TOKEN}) stays optional, as bash reads it unset.
func (t *translator) given(val string) bool {
	m := varRef.FindStringSubmatch(val)
	if m == nil || m[0] != val {
		return true
	}
	v := t.m.Var(m[1])
	return v == nil || v.Required || v.Default != nil && *v.Default != ""
}

// namesASecret: a value like app-reportingsecret, ${APP}-tls: the name
// of a Secret (REPORTING_SECRET=…, TLS_SECRET=…), not a secret. A value
// made of plain variables and text tells nothing the spec does not.
func (t *translator) namesASecret(val string) bool {
	refs := varRef.FindAllStringSubmatch(val, -1)
	for _, m := range refs {
		if v := t.m.Var(m[1]); v == nil || v.Secret {
			return false
		}
	}
	plain := varRef.ReplaceAllString(val, "x")
	if len(refs) > 0 && dnsLike.MatchString(plain) {
		return true
	}
	parts := strings.FieldsFunc(plain, func(r rune) bool { return r == '-' || r == '.' })
	if len(parts) < 2 || !dnsLike.MatchString(plain) {
		return false
	}
	last := parts[len(parts)-1]
	return strings.HasSuffix(last, "secret") || strings.HasSuffix(last, "secrets")
}

var dnsLike = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

func (t *translator) declClause(s *syntax.Stmt, c *syntax.DeclClause) {
	save := t.exporting
	defer func() { t.exporting = save }()
	t.exporting = c.Variant.Value == "export" || slices.ContainsFunc(c.Args, func(a *syntax.Assign) bool {
		o := lit(a.Value) // declare -x, typeset -gx
		return a.Name == nil && (c.Variant.Value == "declare" || c.Variant.Value == "typeset") && shortOpt(o, '-', 'x')
	})
	for _, a := range c.Args {
		if a.Name == nil && c.Variant.Value == "export" && t.exportsFile(s, a.Value) {
			continue
		}
		if c.Variant.Value == "local" && len(t.locals) > 0 && a.Name != nil {
			// The caller's value comes back when the function returns.
			if frame := t.locals[len(t.locals)-1]; !frame.has(a.Name.Value) {
				frame[a.Name.Value] = t.vars[a.Name.Value]
			}
		}
		if c.Variant.Value == "local" && t.printedCapture(a) {
			continue
		}
		t.assign(a)
	}
}

// frame is a function call's locals and the values they hid (nil: unset).
type frame map[string]*shVar

func (f frame) has(name string) bool { _, ok := f[name]; return ok }

// cmdSubst is $(...) for the idioms that name a directory or read a file.
// knownSubst is the output of a command substitution known at import: a
// secret's base64, a manifest's text, an echo whose branch is decided.
func (t *translator) knownSubst(cs *syntax.CmdSubst) (string, bool) {
	if ref, ok := t.base64Of(cs); ok {
		return ref, true
	}
	if text, ok := t.manifestText(cs); ok {
		return text, true
	}
	if files, ok := t.findFiles(cs); ok {
		return files, true
	}
	if text, ok := t.catHeredoc(cs); ok {
		return text, true
	}
	if text, ok := t.echoSed(cs); ok {
		return text, true
	}
	return t.echoChoice(cs)
}

// catHeredoc is $(cat <<EOF … EOF) (also <<-, <<'EOF', <<<): the
// here-document's text as bash expands it, its trailing newlines dropped
// as $(…) drops them (46zza's D1: a DataVolume's spec passed as $2).
func (t *translator) catHeredoc(cs *syntax.CmdSubst) (string, bool) {
	if len(cs.Stmts) != 1 || len(cs.Stmts[0].Redirs) != 1 {
		return "", false
	}
	c, ok := cs.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) != 1 || lit(c.Args[0]) != "cat" {
		return "", false
	}
	var text string
	switch r := cs.Stmts[0].Redirs[0]; r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		text, ok, _ = t.heredoc(r)
	case syntax.WordHdoc:
		text, ok, _ = t.eval(r.Word)
	default:
		return "", false
	}
	return strings.TrimRight(text, "\n"), ok
}

// echoChoice is the output of $([ "$UPGRADE" = true ] && echo "upgrade
// --install" || echo install) (or the if of it) whose condition is
// decided at import: what the echo of the branch taken prints.
func (t *translator) echoChoice(cs *syntax.CmdSubst) (string, bool) {
	if len(cs.Stmts) != 1 {
		return "", false
	}
	var cond *syntax.Stmt
	var then, other *syntax.Stmt
	switch c := cs.Stmts[0].Cmd.(type) {
	case *syntax.BinaryCmd:
		and, ok := c.X.Cmd.(*syntax.BinaryCmd)
		if c.Op != syntax.OrStmt || !ok || and.Op != syntax.AndStmt {
			return "", false
		}
		cond, then, other = and.X, and.Y, c.Y
	case *syntax.IfClause:
		if len(c.Cond) != 1 || len(c.Then) != 1 || c.Else == nil || len(c.Else.Cond) != 0 || len(c.Else.Then) != 1 {
			return "", false
		}
		cond, then, other = c.Cond[0], c.Then[0], c.Else.Then[0]
	default:
		return "", false
	}
	_, static, ok := t.condition(cond)
	if !ok || static == nil {
		return "", false
	}
	taken := other
	if *static {
		taken = then
	}
	echo, isCall := taken.Cmd.(*syntax.CallExpr)
	if !isCall || len(echo.Args) < 2 || lit(echo.Args[0]) != "echo" || strings.HasPrefix(lit(echo.Args[1]), "-") {
		return "", false
	}
	var words []string
	for _, w := range echo.Args[1:] {
		s, ok, _ := t.eval(w)
		if !ok {
			return "", false
		}
		words = append(words, s)
	}
	return strings.Join(words, " "), true
}

func (t *translator) cmdSubst(cs *syntax.CmdSubst) (string, bool, string) {
	unknown := "the output of " + t.text(cs) // the text is $(…) itself
	t.accountSubst(cs)
	if len(cs.Stmts) == 0 {
		return "", true, "" // `# a comment` between a command's arguments
	}
	if out, ok := t.knownSubst(cs); ok {
		return out, true, ""
	}
	var calls []*syntax.CallExpr
	var walk func(s *syntax.Stmt) bool
	walk = func(s *syntax.Stmt) bool {
		switch c := s.Cmd.(type) {
		case *syntax.CallExpr:
			calls = append(calls, c)
			return true
		case *syntax.BinaryCmd:
			if c.Op == syntax.OrStmt && (isRepoRoot(c.X) || exits(c.Y)) {
				// $(git rev-parse --show-toplevel || echo …): the repository it
				// runs in; $(cd "$(dirname "$0")" || exit 1; pwd): the cd
				return walk(c.X)
			}
			if c.Op == syntax.AndStmt || c.Op == syntax.OrStmt {
				return walk(c.X) && walk(c.Y)
			}
			if c.Op == syntax.Pipe {
				calls = append(calls, nil) // a pipe: the value is a computation
				return walk(c.X) && walk(c.Y)
			}
		}
		return false
	}
	for _, s := range cs.Stmts {
		if !walk(s) {
			return "", false, unknown
		}
	}
	if len(calls) == 0 {
		for _, s := range cs.Stmts {
			for _, r := range s.Redirs {
				if r.Op == syntax.RdrIn {
					t.fromFileSecrets = true // $(<file)
				}
			}
		}
		return "", false, unknown
	}
	cwd := t.cwd
	defer func() { t.cwd = cwd }()
	out, known := "", false
	for _, c := range calls {
		if c == nil || len(c.Args) == 0 {
			t.readsFile(calls)
			return "", false, unknown
		}
		var args, all []string
		for _, w := range c.Args[1:] {
			s, ok, _ := t.eval(w)
			if !ok {
				return "", false, unknown
			}
			all = append(all, s)
			if !strings.HasPrefix(s, "-") {
				args = append(args, s)
			}
		}
		switch name := lit(c.Args[0]); {
		case name == "unset" && len(args) == 1 && args[0] == "CDPATH":
			// $(unset CDPATH && cd … && pwd): cd then goes where it says
		case name == "cd" && len(args) > 0:
			t.cwd = t.abs(args[0])
		case name == "cd", name == "pwd":
			out, known = t.cwd, true
		case name == "dirname" && len(args) > 0:
			out, known = filepath.Dir(t.abs(args[0])), true
		case name == "basename" && len(args) > 0:
			out, known = filepath.Base(args[0]), true
			if len(args) == 2 && args[1] != out { // basename f.yaml .yaml
				out = strings.TrimSuffix(out, args[1])
			}
		case (name == "realpath" || name == "readlink") && len(args) > 0:
			out, known = t.abs(args[len(args)-1]), true
		case name == "git" && slices.Equal(all, []string{"rev-parse", "--show-toplevel"}), t.findsRepoRoot(name):
			out, known = t.checkoutTop(), true
		case name == "git" && len(all) == 4 && all[0] == "-C" && slices.Equal(all[2:], []string{"rev-parse", "--show-toplevel"}) && within(t.abs(all[1]), t.checkoutTop()):
			// git -C "$(dirname "$0")" rev-parse --show-toplevel: the same
			// checkout, asked from the script's folder (trial 46s67e's D4)
			out, known = t.checkoutTop(), true
		case (name == "yq" || name == "jq") && len(calls) == 1 && t.pathRead(cs, name, args, all, &out):
			known = true
		default:
			t.readsFile(calls)
			return "", false, unknown
		}
	}
	if !known {
		return "", false, unknown
	}
	return out, true, ""
}

// pathRead is $(yq '.version' pin.yaml), $(yq e .a.b f.yaml), $(jq -r .v
// f.json): a scalar at a plain path of a file of the repository, read at
// import as a clean checkout has it (a file named like a secret, or one
// holding a key, stays a secret the script reads).
func (t *translator) pathRead(cs *syntax.CmdSubst, name string, args, all []string, out *string) bool {
	if len(args) > 0 && (args[0] == "eval" || args[0] == "e") {
		args = args[1:]
	}
	program := len(args) == 2 && name == "jq" && !plainPath.MatchString(args[0]) && !secretWord.MatchString(args[0]) &&
		!slices.ContainsFunc(all, func(a string) bool { return strings.HasPrefix(a, "-") && a != "-r" && a != "--raw-output" && a != "-e" })
	if len(args) != 2 || !program && !plainPath.MatchString(args[0]) || importer.SecretLooking(args[0][strings.LastIndex(args[0], ".")+1:]) {
		return false // .auth.password: a secret the script reads, never copied
	}
	file := t.abs(args[1])
	data, err := readFile(file)
	if w := t.wrote[t.writeKey(args[1])]; err != nil && w != nil && w.known && w.fromAbs != "" {
		// a copy the script makes of a repository file (cp config.yaml
		// _work/: trial 46zc's D5): read as the copy will be
		data, err, file = []byte(w.text), nil, w.fromAbs
		w.read = true
	}
	if err != nil || importer.SecretLooking(filepath.Base(file)) || importer.PrivateKey(string(data)) {
		return false
	}
	var v any
	if yaml.Unmarshal(data, &v) != nil {
		return false
	}
	if program {
		// jq -r '.services[] | select(.name=="web") | .namespace' config.json
		// (trial 46zj's D4), run at import with gojq
		if !jqRun(args[0], data, slices.Contains(all, "-r") || slices.Contains(all, "--raw-output"), out) {
			return false
		}
		t.info(cs, t.text(cs), "computed at import from "+t.display(file)+" as the checkout has it; a later change to the file is not followed until you import again")
		return true
	}
	for _, k := range strings.Split(strings.TrimPrefix(args[0], "."), ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		v = m[k]
	}
	switch v.(type) {
	case string, int, float64, bool:
		*out = fmt.Sprint(v)
	default:
		return false // a map, a list, null: what yq prints is not one word
	}
	// the value is not quoted: a variable named like a secret takes it next
	t.info(cs, t.text(cs), "read at import from "+t.display(file)+" ("+args[0]+"); a later change to the file is not followed until you import again")
	return true
}

// jqRun is what jq prints for program on the JSON data (raw: -r), one
// line per output; false on an error or data that is not JSON.
func jqRun(program string, data []byte, raw bool, out *string) bool {
	var doc any
	q, err := gojq.Parse(program)
	if err != nil || json.Unmarshal(data, &doc) != nil {
		return false
	}
	var lines []string
	for iter := q.Run(doc); ; {
		v, ok := iter.Next()
		if !ok {
			break
		}
		if _, isErr := v.(error); isErr {
			return false
		}
		switch v.(type) {
		case map[string]any, []any:
			// an object or a list may hold what a plain path would not
			// reach (a password under .db): as pathRead, scalars only
			return false
		}
		if s, isStr := v.(string); isStr && raw {
			lines = append(lines, s)
			continue
		}
		j, err := gojq.Marshal(v)
		if err != nil {
			return false
		}
		lines = append(lines, string(j))
	}
	*out = strings.Join(lines, "\n")
	return true
}

var plainPath = regexp.MustCompile(`^(\.[A-Za-z_][A-Za-z0-9_-]*)+$`)

// twoCalls are the two commands of $(A | B), and the pipe; nil when it
// is anything else.
func twoCalls(cs *syntax.CmdSubst) (*syntax.BinaryCmd, *syntax.CallExpr, *syntax.CallExpr) {
	if len(cs.Stmts) != 1 {
		return nil, nil, nil
	}
	p, ok := cs.Stmts[0].Cmd.(*syntax.BinaryCmd)
	if !ok || p.Op != syntax.Pipe {
		return nil, nil, nil
	}
	x, xok := p.X.Cmd.(*syntax.CallExpr)
	y, yok := p.Y.Cmd.(*syntax.CallExpr)
	if !xok || !yok {
		return nil, nil, nil
	}
	return p, x, y
}

// base64Of is $(echo -n "$TOKEN" | base64): the variable through sprig's
// b64enc. Only a variable: a literal stays a computation, so no secret
// written in the script is copied, even encoded; so does an echo without
// -n (its newline is encoded too).
func (t *translator) base64Of(cs *syntax.CmdSubst) (string, bool) {
	_, src, enc := twoCalls(cs)
	if src == nil || len(enc.Args) == 0 || lit(enc.Args[0]) != "base64" || len(src.Args) < 2 {
		return "", false
	}
	switch strings.Join(litArgs(enc.Args[1:]), " ") {
	case "", "-w0", "-w 0", "--wrap=0":
	default:
		return "", false
	}
	var word *syntax.Word
	newline := true
	switch lit(src.Args[0]) {
	case "echo":
		word = src.Args[len(src.Args)-1]
		switch strings.Join(litArgs(src.Args[1:len(src.Args)-1]), " ") {
		case "-n":
			newline = false
		case "":
		default:
			return "", false
		}
	case "printf":
		if len(src.Args) != 3 || lit(src.Args[1]) != "%s" {
			return "", false
		}
		word, newline = src.Args[2], false
	default:
		return "", false
	}
	v, ok, _ := t.eval(word)
	if ok && !newline && !strings.Contains(v, "${") {
		v = t.argsRef(word, v)
	}
	if ok && !strings.Contains(v, "${") {
		// $(echo -n "s3cr3t" | base64) in a Secret's data: a literal
		// encoded for a Secret is a secret; no note quotes it (trial
		// 46zs's D1), and the spec never holds it
		t.secret(v)
	}
	if !ok || newline {
		// echo encodes its newline; the pipeline that says so needs quotes,
		// which would break the JSON or YAML around it (a kubectl patch -p)
		return "", false
	}
	return b64Pipeline(v)
}

// b64Pipeline is ${X | b64enc} of "${X}", and of "${X} ${X}" (one
// variable with text around it: trial 46s67q's D4, the shared secret
// DatadogAgent's token is, made of the cluster's name) ${X | printf
// "%[1]s %[1]s" | b64enc}; anything else stays a computation.
func b64Pipeline(v string) (string, bool) {
	m := varRef.FindAllStringSubmatch(v, -1)
	if len(m) == 0 || strings.Count(v, "${") != len(m) {
		return "", false
	}
	for _, r := range m {
		if r[1] != m[0][1] {
			return "", false
		}
	}
	if v == m[0][0] {
		return v[:len(v)-1] + " | b64enc}", true
	}
	text := strings.Split(v, m[0][0])
	for i, s := range text {
		if strings.ContainsAny(s, "\"\\{}|$\n") {
			return "", false
		}
		text[i] = strings.ReplaceAll(s, "%", "%%")
	}
	return "${" + m[0][1] + " | printf \"" + strings.Join(text, "%[1]s") + "\" | b64enc}", true
}

// argsRef is "${NAME} ${NAME}" for a word whose value is known only as
// the script's argument given to the import (CLUSTER_NAME=$2), NAME
// then a variable whose default is that argument; v, the word's value,
// otherwise: a literal of the script, or of a secret-looking name, stays
// one (trial 46s67q's D4: $(echo -n "$CLUSTER_NAME …" | base64) was a
// secret to compute by hand).
func (t *translator) argsRef(word *syntax.Word, v string) string {
	parts := word.Parts
	if len(parts) == 1 {
		if dq, _ := parts[0].(*syntax.DblQuoted); dq != nil {
			parts = dq.Parts
		}
	}
	name, out := "", ""
	for _, p := range parts {
		if l, ok := p.(*syntax.Lit); ok && !strings.ContainsFunc(l.Value, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
			out += l.Value
			continue
		}
		pe, _ := paramOf(p)
		if pe == nil || pe.Param == nil || pe.Exp != nil || pe.Index != nil || pe.Length || pe.Excl || pe.Slice != nil || pe.Repl != nil || !syntax.ValidName(pe.Param.Value) || name != "" && pe.Param.Value != name {
			return v
		}
		name = pe.Param.Value
		sv := t.vars[name]
		if secretLooking(name) || sv == nil || sv.decl != nil || sv.val == "" || !slices.Contains(t.scriptArgs, sv.val) {
			return v
		}
		out += "${" + name + "}"
	}
	if name == "" {
		return v
	}
	if old := t.m.Var(name); old != nil && (old.Secret || old.Default == nil || *old.Default != t.vars[name].val) {
		return v
	}
	val := t.vars[name].val
	t.ref(&importer.Var{Name: name, Default: &val, From: t.loc(word), Description: "the script's argument, encoded where the script computes a value from it (" + t.loc(word).String() + ")"})
	return out
}

// litArgs are words as their literal text ("" for any that is not one).
func litArgs(ws []*syntax.Word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = lit(w)
	}
	return out
}

// fileReader reads a file or a secret store at the start of a pipeline.
// argVar is the variable that stands for a positional parameter ($1: ARG1).
var argVar = regexp.MustCompile(`^ARG[0-9]+$`)

// secretByName begins the note on a secret the script sets by its name.
const secretByName = "a secret by its name: "

// storeReader: the value is read with a secret store's or a cloud's CLI.
var storeReader = regexp.MustCompile(`^"?\$\(\s*(aws|gcloud|az|vault|op|bw|pass|security|doctl|oci)\s`)

var fileReader = set("cat", "head", "tail", "base64", "openssl", "sops", "gpg", "vault", "pass", "aws", "gcloud", "az", "op", "bw", "security", "pwgen", "uuidgen", "jq", "yq")

// readsFile marks a command substitution whose value is a secret: one
// that reads a file or a secret store, or a command's output that reads
// or decodes something secret (talosctl get etcdrootsecret | yq …). A
// command's output that names nothing secret (kubectl get installplan …
// | yq, curl …/releases/latest | jq) is a value to give, not a secret.
func (t *translator) readsFile(calls []*syntax.CallExpr) {
	first := firstCall(calls)
	if first == nil {
		return
	}
	name := lit(first.Args[0])
	if !fileReader[name] {
		if t.readsSecret(calls) {
			t.computedSecret, t.fromFileSecrets = true, true
		}
		return
	}
	t.fromFileSecrets = true
	// uuidgen too: a random UUID the script keeps as a password (trial
	// 46s69l's D4: read as the empty environment variable)
	if name == "pwgen" || name == "uuidgen" || len(first.Args) > 1 && name == "openssl" && lit(first.Args[1]) == "rand" ||
		slices.ContainsFunc(first.Args[1:], func(w *syntax.Word) bool { return lit(w) == "/dev/urandom" || lit(w) == "/dev/random" }) {
		t.generated = true
	}
}

// firstCall is the first command of a command substitution (nil marks a pipe).
func firstCall(calls []*syntax.CallExpr) *syntax.CallExpr {
	for _, c := range calls {
		if c != nil && len(c.Args) > 0 {
			return c
		}
	}
	return nil
}

// readsSecret: a pipeline gets a Secret or a Secret's data, helm's
// values, names a secret-looking thing, decodes base64 or reads a
// secret variable on the way.
func (t *translator) readsSecret(calls []*syntax.CallExpr) bool {
	first := firstCall(calls)
	// a ConfigMap's .data is no secret (trial 46s69i's D4: DOMAIN read
	// from configmap domain made a secret variable, refused on --set)
	configMap := first != nil && slices.ContainsFunc(first.Args[1:], func(w *syntax.Word) bool {
		a, _, _ := t.eval(w)
		kind, _, _ := strings.Cut(strings.ToLower(a), "/")
		return recreatedKinds[kind] == "ConfigMap"
	})
	for _, c := range calls {
		if c == nil || len(c.Args) == 0 {
			continue
		}
		if c != first && lit(c.Args[0]) == "base64" {
			return true
		}
		for _, w := range c.Args[1:] {
			a, _, _ := t.eval(w)
			kind, _, _ := strings.Cut(strings.ToLower(a), "/")
			switch {
			case kind == "secret" || kind == "secrets" || strings.Contains(a, ".data") && !configMap || secretWord.MatchString(a):
				return true
			case c == first && lit(c.Args[0]) == "helm" && (a == "values" || a == "manifest" || a == "all"):
				return true
			}
			for _, m := range varRef.FindAllStringSubmatch(a, -1) {
				if v := t.m.Var(m[1]); v != nil && v.Secret {
					return true
				}
			}
		}
	}
	return false
}

var secretWord = regexp.MustCompile(`(?i)secret|token|passw|credential|private|api[-_]?key|(^|[^a-z])pw([^a-z]|$)`)

// checkoutTop is what git rev-parse --show-toplevel says where the script
// runs: the nearest folder above --dir holding .git; in a copy without
// one, the folder the import runs from when --dir is under it; only then
// --dir. A script run as `cd app && ./deploy.sh` calls the helper at the
// top, not in app/ (trial 46s70i's D1).
func (t *translator) checkoutTop() string {
	if t.top != "" {
		return t.top
	}
	t.top = t.runDir
	for d := t.runDir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			t.top = d
			return d
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if wd, err := filepath.Abs(workDir()); err == nil && within(t.runDir, wd) {
		t.top = wd
	}
	return t.top
}

// findsRepoRoot: a function of the script that walks up to the directory
// holding .git (find_repo_root) stands for git rev-parse --show-toplevel,
// the checkout's top.
func (t *translator) findsRepoRoot(name string) bool {
	fn := t.funcs[name]
	if fn == nil {
		return false
	}
	body := string(fn.src[fn.decl.Pos().Offset():fn.decl.End().Offset()])
	return strings.Contains(body, "/.git\"") && strings.Contains(body, "dirname")
}

// exits: the statement is exit or return (the other side of a || that
// only fails the substitution).
func exits(s *syntax.Stmt) bool {
	c, ok := s.Cmd.(*syntax.CallExpr)
	return ok && len(c.Args) > 0 && (lit(c.Args[0]) == "exit" || lit(c.Args[0]) == "return")
}

func isRepoRoot(s *syntax.Stmt) bool {
	c, ok := s.Cmd.(*syntax.CallExpr)
	return ok && len(c.Args) == 3 && lit(c.Args[0]) == "git" && lit(c.Args[1]) == "rev-parse" && lit(c.Args[2]) == "--show-toplevel"
}

// isParam1: the word is $1 or "$1" (the option an option loop reads).
func isParam1(w *syntax.Word) bool {
	if len(w.Parts) != 1 {
		return false
	}
	pe, _ := paramOf(w.Parts[0])
	return pe != nil && pe.Param != nil && pe.Param.Value == "1" && pe.Exp == nil && pe.Index == nil && !pe.Length
}

// braces is the words bash's brace expansion makes of w (a{b,c}d, a{1..3}),
// nil when it has none. w is not changed.
func braces(w *syntax.Word) []*syntax.Word {
	cp := &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)}
	if !syntax.SplitBraces(cp) {
		return nil
	}
	return expand.Braces(cp)
}

// alwaysSet: X="${X:-$(randstr)}" of a secret read from the environment
// before with no default ([ -z "${X:-}" ] only choosing another branch):
// the spec's X is that one, and from here on the script always has a
// value, given or made, so the spec asks for it as for a secret the
// script sets (trial 46s69l's D2: optional, rendered null).
func (t *translator) alwaysSet(d *importer.Var) *importer.Var {
	old := t.m.Var(d.Name)
	if old == nil || old == d || !d.Required || !old.Secret || old.Required || old.Computed || old.Default != nil || len(old.RequiredWith) > 0 || len(t.when) > 0 || t.undecidedDepth > 0 {
		return d
	}
	old.Required, old.Computed, old.From, old.Description = true, d.Computed, d.From, d.Description+"; given, the script keeps it"
	return d
}
