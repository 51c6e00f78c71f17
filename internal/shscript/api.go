// Package shscript imports a bash/sh bootstrap script into a khook spec
// (`khook import script`, docs/from-scripts.md). It parses the script
// with mvdan.cc/sh's real shell parser — never regular expressions over
// lines — and walks the syntax tree as bash would run it: variables and
// ${VAR:-default} become declared khook variables, functions are followed
// in call order, sourced files are read, `cd` and the
// $(dirname "$0")/SCRIPT_DIR idioms are resolved, if/case on a variable
// become when:, existence checks and poll loops become the idempotent
// step or the wait they stand for. Each helm and kubectl command becomes
// a step, is folded into one, is read-only, or is named as not carried
// with what to do instead; everything else the script runs is named at
// its line. The result is the import model of internal/importer, written
// and validated by its one writer.
//
// May import: internal/importer, spec, helm's strvals (helm --set
// syntax), mvdan.cc/sh/v3/syntax and expand (brace expansion); no runner or CLI package.
package shscript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/khook/khook/internal/importer"
	"github.com/khook/khook/redact"
)

// Options of an import.
type Options struct {
	// Dir is where the script is run from (its relative paths are relative
	// to it); "" is the working directory.
	Dir string
	// SpecDir is where the spec will be written: paths in the spec are
	// relative to it. "" is Dir.
	SpecDir string
	// Name is metadata.name; "" is derived from the script's name.
	Name string
	// Args are the script's positional parameters ($1, $@), as in
	// `bash install.sh prod`; without them $1 is a required variable ARG1.
	Args []string
	// Check is `khook validate`'s check of what the steps apply and
	// render (runner/plan.Validate, handed in by the command): a step it
	// refuses is not carried. Nil checks only that the spec loads.
	Check importer.Check
	// Redactor learns every literal secret the script holds, so no note
	// quotes it; nil is a redactor of the import's own. The helmfile
	// importer hands in its own, so a hook's secrets are masked in its
	// notes too.
	Redactor *redact.Redactor
}

// InputError is a script the import cannot read: it does not parse, a
// file it sources is missing, it is not text. Nothing is to be written.
type InputError struct {
	File string
	Line int
	Msg  string
}

func (e *InputError) Error() string {
	return importer.Loc{File: e.File, Line: e.Line}.String() + ": " + e.Msg
}

// Result of an import.
type Result struct {
	Model *importer.Model
	Spec  []byte // the spec written, header included
}

// Import translates the script file (a path relative to opts.Dir or
// absolute). An *InputError is bad input; any other error is the
// import's own failure.
func Import(file string, opts Options) (*Result, error) {
	t, err := newTranslator(file, opts)
	if err != nil {
		return nil, err
	}
	f, src, err := t.parse(file, t.display(t.abs(file)), 0)
	if err != nil {
		return nil, err
	}
	t.errexit, t.nounset = shebangOpt(src, 'e'), shebangOpt(src, 'u')
	t.runFile(f, src, t.abs(file))
	t.returnedGuards() // the exits' (returnGuard)
	t.untakenAgain()
	t.sayHalts()
	t.unusedRepos()
	t.unreadWrites()
	t.deleteThenCreate()
	t.depsInstalled()
	t.pluginsBeforeCharts()
	if t.inputErr != nil {
		return nil, t.inputErr
	}
	t.relativeNotes()
	t.sayCarriesOn()
	doc, err := t.writeValid(opts.Check)
	if err != nil {
		return nil, err
	}
	return &Result{Model: t.m, Spec: doc}, nil
}

// Fragment translates shell text that another importer read — a
// helmfile hook's command, `sh -c` script or `kubectl …` with its
// arguments — as the script import does, run from opts.Dir: every idiom
// of a script works there too, command by command. Its notes, commands
// and steps are at at.File, lines counted from at.Line. The model is not
// written: the caller merges its steps (named and chained by this
// translator) into its own. An *InputError is text bash cannot parse.
func Fragment(text string, at importer.Loc, opts Options) (*importer.Model, error) {
	t, err := newTranslator(at.File, opts)
	if err != nil {
		return nil, err
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), at.File)
	if err != nil {
		var pe syntax.ParseError
		if errors.As(err, &pe) {
			return nil, &InputError{File: at.File, Line: at.Line + int(pe.Pos.Line()) - 1, Msg: "bash cannot parse the command: " + pe.Text}
		}
		return nil, &InputError{File: at.File, Line: at.Line, Msg: "bash cannot parse the command: " + err.Error()}
	}
	t.bundledKubectl(f)
	t.file, t.scriptPath, t.src = at.File, filepath.Join(t.runDir, filepath.Base(at.File)), []byte(text)
	if at.Line > 0 {
		t.lineBase = at.Line - 1
	}
	t.stmts(f.Stmts)
	t.returnedGuards()
	t.untakenAgain()
	t.unreadWrites()
	t.deleteThenCreate()
	t.depsInstalled()
	t.pluginsBeforeCharts()
	if t.inputErr != nil {
		return nil, t.inputErr
	}
	for _, st := range t.passed {
		// sh -c "echo …; kubectl rollout status …; echo ok" (46zzd's D2)
		if slices.Contains(t.m.Steps, st) {
			t.m.Info = append(t.m.Info, importer.Note{Loc: st.From, What: "step " + st.Out.Name, Why: "the command carries on after it fails (no set -e: its exit status is its last command's), so helmfile does too; khook's step fails the run when it fails (write set -e in the command where that is meant)"})
		}
	}
	t.literalSecrets(t.m) // as the script import's writer does
	secretsInSecrets(t.m)
	pruneVars(t.m, t.m.Logins...) // a hook's login is for the helmfile's releases
	t.sayAbsentVars(t.m)
	return t.m, nil
}

// CommandLine is argv as one shell command line, each word quoted as bash
// needs it, for Fragment (a hook's command and its arguments).
func CommandLine(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil { // a NUL byte: no shell word holds it
			q = strconv.Quote(a)
		}
		words[i] = q
	}
	return strings.Join(words, " ")
}

func newTranslator(file string, opts Options) (*translator, error) {
	dir := opts.Dir
	if dir == "" {
		dir = "."
	}
	runDir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot resolve the directory %s: %w", dir, err)
	}
	specDir := runDir
	if opts.SpecDir != "" {
		if filepath.IsAbs(opts.SpecDir) {
			specDir = filepath.Clean(opts.SpecDir)
		} else {
			specDir = filepath.Join(runDir, opts.SpecDir)
		}
	}
	t := &translator{
		runDir: runDir, specDir: specDir, cwd: runDir,
		vars: map[string]*shVar{}, funcs: map[string]*function{}, repos: map[string]string{}, repoAuth: map[string]*importer.OutAuth{}, ctxVars: map[string]bool{}, clusterVals: map[string]bool{}, registries: map[string]*importer.OutAuth{}, wrote: map[string]*written{},
		keys: map[string]string{}, depUpdate: map[string]bool{}, names: map[string]bool{}, ends: map[*importer.OutStep]bool{}, substSeen: map[string]bool{}, pods: map[string]podPick{},
		tested: map[*syntax.CallExpr]bool{}, secretKeys: map[string]importer.OutKeyRef{},
	}
	name := opts.Name
	if name == "" {
		name = specName(file)
	}
	t.rd = opts.Redactor
	if t.rd == nil {
		t.rd = redact.New()
	}
	t.m = &importer.Model{Source: file, Tool: "khook import script", Name: name, Dir: specDir}
	if opts.Args != nil {
		t.args, t.argsGiven, t.scriptArgs = opts.Args, true, opts.Args
	}
	return t, nil
}

// parse reads and parses one script; line is where it is sourced from (0
// for the script itself), for the error.
func (t *translator) parse(path, shown string, line int) (*syntax.File, []byte, error) {
	abs := t.abs(path)
	data, err := readFile(abs) // source /dev/stdin or a FIFO must not hang the import

	if err != nil {
		if line > 0 {
			return nil, nil, &InputError{File: t.file, Line: line, Msg: fmt.Sprintf("it sources %s, which cannot be read (%v); run the import from where the script runs (--dir)", shown, unwrapPath(err))}
		}
		return nil, nil, &InputError{File: shown, Msg: fmt.Sprintf("cannot read the script: %v", unwrapPath(err))}
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, nil, &InputError{File: shown, Line: 1, Msg: "it is a binary file, not a shell script"}
	}
	if !utf8.Valid(data) {
		data = t.notUTF8(data, shown)
	}
	// An editor's UTF-8 byte-order mark before #!: bash runs it as a command
	// that is not found and goes on; it is no command of the script.
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(bytes.NewReader(data), shown)
	var pe0 syntax.ParseError
	if errors.As(err, &pe0) && strings.HasPrefix(pe0.Text, "unclosed here-document `") {
		// a here-document the end of the file closes: bash reads it to
		// there, with a warning, and runs it (trial 46s68o's D1: "bash
		// cannot parse it", both commands lost)
		delim := strings.TrimSuffix(strings.TrimPrefix(pe0.Text, "unclosed here-document `"), "`")
		closed := append(append(bytes.TrimRight(data, "\n"), '\n'), delim+"\n"...)
		if f2, err2 := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(bytes.NewReader(closed), shown); err2 == nil {
			t.m.Info = append(t.m.Info, importer.Note{Loc: importer.Loc{File: shown, Line: int(pe0.Pos.Line()) + t.lineBase}, What: "<<" + delim,
				Why: "the here-document is never closed: bash reads it to the end of the file (warning: here-document delimited by end-of-file), and so does khook; close it with a " + delim + " line"})
			f, err, data = f2, nil, closed
		}
	}
	f, data, err = quoteAssocIndexes(f, data, err, shown)
	if err != nil {
		var pe syntax.ParseError
		if errors.As(err, &pe) {
			return nil, nil, &InputError{File: shown, Line: int(pe.Pos.Line()), Msg: "bash cannot parse it: " + pe.Text}
		}
		return nil, nil, &InputError{File: shown, Msg: "bash cannot parse it: " + err.Error()}
	}
	t.testedCalls(f)
	t.bundledKubectl(f)
	return f, data, nil
}

// assocDecl is declare/typeset/local -A and the names it declares.
var assocDecl = regexp.MustCompile(`(?m)\b(?:declare|typeset|local)((?:[ \t]+-[A-Za-z]+)+)((?:[ \t]+[A-Za-z_][A-Za-z0-9_]*(?:=\S*)?)+)`)

// quoteAssocIndexes parses again, while the parse fails inside the index
// of an array the script declares -A, with that index quoted: bash reads
// an associative array's subscript as a string, mvdan.cc/sh as arithmetic
// (trial 46s69a's D5: kind_images[1.31]=… "floating point arithmetic is a
// zsh feature", the whole import refused). The quotes keep the line and
// the key ("1.31" is the string 1.31 to bash too).
func quoteAssocIndexes(f *syntax.File, data []byte, err error, shown string) (*syntax.File, []byte, error) {
	assoc := map[string]bool{}
	for _, m := range assocDecl.FindAllSubmatch(data, -1) {
		if bytes.Contains(m[1], []byte("A")) {
			for _, n := range strings.Fields(string(m[2])) {
				n, _, _ = strings.Cut(n, "=")
				assoc[n] = true
			}
		}
	}
	for tries := 0; err != nil && len(assoc) > 0 && tries < 1000; tries++ {
		pos, ok := errPos(err)
		if !ok || pos.Offset() >= uint(len(data)) {
			break
		}
		at := int(pos.Offset())
		open := bytes.LastIndexByte(data[:at+1], '[')
		end := bytes.IndexByte(data[at:], ']')
		if open < 0 || end < 0 || bytes.ContainsAny(data[open:at+end], "\"\n") {
			break
		}
		end += at
		name := data[:open]
		name = name[len(bytes.TrimRight(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")):]
		if !assoc[string(name)] {
			break
		}
		q := slices.Concat(data[:open+1], []byte{'"'}, data[open+1:end], []byte{'"'}, data[end:])
		f2, err2 := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(bytes.NewReader(q), shown)
		if p2, ok := errPos(err2); ok && p2.Offset() == pos.Offset() {
			break
		}
		f, data, err = f2, q, err2
	}
	return f, data, err
}

// errPos is where a parse failed (a syntax error, or a feature of
// another shell, as mvdan.cc/sh takes 1.31 in an index to be).
func errPos(err error) (syntax.Pos, bool) {
	var pe syntax.ParseError
	var le syntax.LangError
	switch {
	case errors.As(err, &pe):
		return pe.Pos, true
	case errors.As(err, &le):
		return le.Pos, true
	}
	return syntax.Pos{}, false
}

// notUTF8 is data with each byte that is not UTF-8 read as U+FFFD, said
// at its line: a stray Windows-1252 byte (0x92, an apostrophe) is text to
// bash, not a binary file; in a comment nothing differs, elsewhere the
// value khook carries does (trial 46s69b's D1: a whole installer refused
// for one byte in a comment).
func (t *translator) notUTF8(data []byte, shown string) []byte {
	type bad struct {
		off  int
		b    byte
		line int
	}
	var out []byte
	var bads []bad
	line := 1
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			bads = append(bads, bad{len(out), data[i], line})
			out = append(out, "\uFFFD"...)
			i++
			continue
		}
		if r == '\n' {
			line++
		}
		out = append(out, data[i:i+n]...)
		i += n
	}
	var comments [][2]int
	if f, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true)).Parse(bytes.NewReader(out), shown); err == nil {
		syntax.Walk(f, func(n syntax.Node) bool {
			if c, ok := n.(*syntax.Comment); ok {
				comments = append(comments, [2]int{int(c.Pos().Offset()), int(c.End().Offset())})
			}
			return true
		})
	}
	seen := map[int]bool{}
	for _, b := range bads {
		if seen[b.line] {
			continue
		}
		seen[b.line] = true
		inComment := false
		for _, c := range comments {
			inComment = inComment || b.off >= c[0] && b.off < c[1]
		}
		n := importer.Note{Loc: importer.Loc{File: shown, Line: b.line + t.lineBase}, What: fmt.Sprintf("byte 0x%02X", b.b), Same: inComment}
		if inComment {
			n.Why = "not UTF-8 (a Windows-1252 or Latin-1 character), in a comment: bash skips it, and so does khook"
		} else {
			n.Why = "not UTF-8 (a Windows-1252 or Latin-1 character): khook reads it as U+FFFD, so the text it carries from this line differs from the script's; save the script as UTF-8 and import again"
		}
		t.m.Info = append(t.m.Info, n)
	}
	return out
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// specName is metadata.name from the script's file name.
func specName(file string) string {
	base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	if s := dnsName(base); s != "" {
		return s
	}
	return "imported"
}

// dnsName is s lowered to [a-z0-9-], trimmed, at most 50 characters.
func dnsName(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case b.Len() > 0 && !dash:
			b.WriteRune('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 50 {
		// at a word's end, not in one (trial 46s67b's N1: …-nginx-ingres)
		cut := out[:51]
		if i := strings.LastIndexByte(cut, '-'); i > 20 {
			cut = cut[:i]
		}
		out = strings.Trim(cut[:min(len(cut), 50)], "-")
	}
	return out
}

// computedFor is ", for $1=b" of a variable computed per call or per
// turn of a loop, as its description says, "" for any other: notes at
// one line then say which value each variable is (trial 46s70e's D1).
func computedFor(v *importer.Var) string {
	_, rest, ok := strings.Cut(v.Description, v.From.String()+", for ")
	if i := strings.IndexAny(rest, "()"); ok && i > 0 {
		return ", for " + strings.TrimSuffix(rest[:i], " ")
	}
	return ""
}

// pruneVars drops the variables no step uses: the script's loop counters
// and scratch values (retry, BIN_DIR) would otherwise be required inputs.
func pruneVars(m *importer.Model, logins ...importer.Login) {
	var text strings.Builder
	for _, st := range m.Steps {
		b, _ := json.Marshal(st.Out)
		text.Write(b)
	}
	for _, l := range logins {
		b, _ := json.Marshal(l.Auth)
		text.Write(b)
	}
	used := map[string]bool{}
	for grew := true; grew; {
		grew = false
		for _, v := range m.Vars {
			if used[v.Name] {
				continue
			}
			s := text.String()
			if strings.Contains(s, "${"+v.Name+"}") || strings.Contains(s, "${"+v.Name+" |") || strings.Contains(s, `vars.get(\"`+v.Name+`\"`) || strings.Contains(s, "vars."+v.Name) {
				used[v.Name], grew = true, true
				if v.Default != nil {
					text.WriteString(*v.Default)
				}
			}
		}
	}
	kept := m.Vars[:0]
	for _, v := range m.Vars {
		if !used[v.Name] {
			// what was said of it at its line is moot too
			m.Info = slices.DeleteFunc(m.Info, func(n importer.Note) bool {
				// and that it has a default per branch, so must be given (trial 46s69a's D6)
				return n.Loc == v.From && n.What == v.Name || n.What == "$"+v.Name && strings.Contains(n.Why, "another default here")
			})
			continue
		}
		kept = append(kept, v)
		if len(v.RequiredWith) > 0 && strings.Contains(text.String(), `"${`+v.Name+`}":`) {
			// a map key (nodeSelector: {${escaped_key}: …}): unset, the
			// spec is no YAML whatever its when: says, so it stays required
			v.Required, v.RequiredWith = true, nil
			v.Description += " (required all the same: a step has it as a map key, which an unset variable leaves no YAML)"
		}
		switch {
		case v.Computed && !v.Secret && v.Default != nil:
			// VERSION=$(curl …) with the script's fallback where it is empty
			m.Info = append(m.Info, importer.Note{Loc: v.From, What: v.Name, Why: "the script computes it when it runs; khook runs no shell, so the spec takes the script's fallback, " + *v.Default + ", unless it is given (--set " + v.Name + "=… or KHOOK_VAR_" + v.Name + ")"})
		case v.Computed && len(v.RequiredWith) > 0:
			give := "with --set " + v.Name + "=… or KHOOK_VAR_" + v.Name
			if v.Secret {
				give = "as KHOOK_SECRET_" + v.Name
			}
			m.Info = append(m.Info, importer.Note{Loc: v.From, What: v.Name, Why: "the script computes it when it runs" + computedFor(v) + ", only where " + v.RequiredWith[0] + " is set; khook runs no shell, so the spec asks for it there: required where " + v.RequiredWith[0] + " is given (give it " + give + ")"})
		case v.Computed && !v.Secret:
			// the spec cannot run until someone finds what the script computed
			m.Info = append(m.Info, importer.Note{Loc: v.From, What: v.Name, Why: "the script computes it when it runs" + computedFor(v) + "; khook runs no shell, so the spec asks for it: a required variable (give it with --set " + v.Name + "=… or KHOOK_VAR_" + v.Name + ")"})
		case v.Computed && v.Required:
			// a computed value that goes into a Secret: said as any
			// computed one is (trial 46s69a's D7: no warning at all)
			m.Info = append(m.Info, importer.Note{Loc: v.From, What: v.Name, Why: "the script computes it when it runs" + computedFor(v) + "; khook runs no shell, so the spec asks for it: a required secret variable (give it as KHOOK_SECRET_" + v.Name + ")"})
		}
	}
	m.Vars = kept
	// a secret the script sets and nothing uses (the other 29 passwords
	// of a sourced config.env: trial 46zk's D6) is no input to name
	m.Info = slices.DeleteFunc(m.Info, func(n importer.Note) bool {
		return strings.HasPrefix(n.Why, secretByName) && validName(n.What) && m.Var(n.What) == nil
	})
}

// relativeNotes writes a path under the run directory that a note quotes
// expanded ($(cd … && pwd)/m/) relative to it, as the steps have it: the
// spec, committed, does not name the machine it was imported on (trial
// 46s70q's D1: /tmp/k46r/m/ in the header).
func (t *translator) relativeNotes() {
	abs := filepath.ToSlash(t.runDir) + "/"
	if abs == "/" {
		return
	}
	// only where the path starts: ../../../work/x/ (a path relative to
	// the spec's folder) holds the run directory's name too
	re := regexp.MustCompile(`(^|[^\w./~-])` + regexp.QuoteMeta(abs))
	rel := func(s string) string { return re.ReplaceAllString(s, "${1}") }
	for _, notes := range [][]importer.Note{t.m.Info, t.m.NotCarried} {
		for i := range notes {
			notes[i].What, notes[i].Why = rel(notes[i].What), rel(notes[i].Why)
		}
	}
	for i := range t.m.Commands {
		t.m.Commands[i].Text, t.m.Commands[i].Why = rel(t.m.Commands[i].Text), rel(t.m.Commands[i].Why)
	}
}
