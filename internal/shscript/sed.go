package shscript

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/khook/khook/internal/importer"
)

// The cp-then-sed idiom of scripts that render a manifest template
// (karmada's deploy script: cp artifacts/deploy/x.yaml "$TMP"/x.yaml;
// sed -i "s/{{version}}/${VERSION}/g" "$TMP"/x.yaml; kubectl apply -f
// "$TMP"/x.yaml): the copy's text is the repository file's, each sed
// substitution applied at import, so the apply carries it inline. A
// variable sed puts in is a khook variable, marked in the text until it is
// read (refMark), so that a ${…} of the file itself stays literal ($${…}).

// refMark stands for ${NAME} in a copied file's text: \x00NAME\x00.
const refMark = "\x00"

var markedRef = regexp.MustCompile(refMark + `([A-Za-z_][A-Za-z0-9_]*)` + refMark)

// markRefs turns the ${NAME} references in a value sed puts in into marks.
func markRefs(s string) string { return varRef.ReplaceAllString(s, refMark+"${1}"+refMark) }

// unmarkRefs is the text as the spec takes it: a file's own ${ literal
// (copied: raw), the marks references again.
func unmarkRefs(s string, raw bool) string {
	if raw {
		s = strings.ReplaceAll(s, "${", "$${")
	}
	return markedRef.ReplaceAllString(s, "$${${1}}")
}

// cpShort is cp's short options that change nothing of the text.
var cpShort = regexp.MustCompile(`^-[fvprRa]+$`)

// copies is cp SRC DST of one file the repository has: DST's text is
// SRC's (a directory DST takes SRC's name in it). false when it is not
// such a copy (a directory, an unknown path).
func (t *translator) copies(x *cmd) bool {
	var paths []string
	recursive := false
	for _, a := range x.args[1:] {
		switch {
		case a == "--force" || a == "--preserve" || a == "--verbose":
		case a == "--recursive" || a == "--archive":
			recursive = true
		case cpShort.MatchString(a): // -p keeps modes and times, not the text (46zx's D4: cp f -p dir/)
			recursive = recursive || strings.ContainsAny(a, "rRa")
		case strings.HasPrefix(a, "-"):
			return false
		default:
			paths = append(paths, a)
		}
	}
	if len(paths) != 2 || !x.ok || strings.Contains(paths[0], "${") {
		return false
	}
	if recursive {
		return t.copiesDir(x, t.abs(paths[0]), paths[1])
	}
	return t.copyFile(x, t.abs(paths[0]), paths[1])
}

// maxCopied bounds the files of a directory copy the import reads.
const maxCopied = 200

// copiesDir is `cp -R SRC DST` of a folder of the repository (Mach5's
// `cp -R "$BASE/eksctl" "$WORK/"`, trial 46zc's D8): each file as cp of
// it, into DST/SRC's name when DST is a folder (written with a trailing
// /, there at import, or made by the script), else into DST.
func (t *translator) copiesDir(x *cmd, src, dst string) bool {
	if st, err := os.Stat(src); err != nil || !st.IsDir() || strings.Contains(dst, "${") {
		return false
	}
	into := strings.TrimSuffix(dst, "/")
	if st, err := os.Stat(t.abs(dst)); strings.HasSuffix(dst, "/") || err == nil && st.IsDir() || t.madeBy(t.abs(into)) != "" {
		into += "/" + filepath.Base(src)
	}
	var files []string
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		if len(files) > maxCopied {
			return filepath.SkipAll
		}
		return nil
	})
	if err != nil || len(files) == 0 || len(files) > maxCopied {
		return false
	}
	for _, f := range files {
		rel, _ := filepath.Rel(src, f)
		if !t.copyFile(x, f, into+"/"+filepath.ToSlash(rel)) {
			return false
		}
	}
	return true
}

// copyFile is cp of one file of the repository to dst.
func (t *translator) copyFile(x *cmd, src, dst string) bool {
	data, err := readFile(src)
	if err != nil || strings.Contains(string(data), refMark) || t.madeBy(src) != "" {
		return false // not the committed file (curl … > src made it)
	}
	if st, err := os.Stat(t.abs(dst)); strings.HasSuffix(dst, "/") || err == nil && st.IsDir() {
		dst = strings.TrimSuffix(dst, "/") + "/" + filepath.Base(src)
	}
	note := t.noteAt(x.stmt, t.text(x.stmt), "khook runs no shell commands; no step reads the file it makes, so nothing of it is carried")
	if !strings.Contains(dst, "${") { // what it makes, not what it reads
		t.made = append(t.made, made{path: t.abs(dst), at: t.loc(x.stmt), name: "cp"})
	}
	w := &written{text: string(data), known: true, at: t.loc(x.stmt), notes: []importer.Note{note}, from: t.display(src), fromAbs: src}
	if e := t.wrote[src]; e != nil { // sed -i src, then cp src dst: the edited text
		e.read = true
		c := *e
		c.notes, c.at, c.read = append(append([]importer.Note(nil), e.notes...), note), t.loc(x.stmt), false
		w = &c
	}
	t.wrote[t.writeKey(dst)] = t.undecidedWrite(w)
	return true
}

// sedInPlace is sed -i of a file the script made (cp, a here-document)
// or of one in the repository: its substitutions applied to the text at
// import. false when the file is
// not one, so the command is named as any other.
func (t *translator) sedInPlace(x *cmd) bool {
	exprs, files, inPlace, ere, ok := sedArgs(x.args[1:])
	if !ok || !inPlace || len(files) != 1 {
		return false
	}
	key := t.writeKey(files[0])
	w := t.wrote[key]
	if w != nil && w.defaults != "" {
		return false // a chart's defaults, whose text khook does not have: changed, said where read
	}
	if w == nil && !strings.Contains(key, "${") && t.madeBy(key) == "" {
		// sed -i on a file of the repository: the text it edits is the
		// committed one, as on a clean checkout (unless a command khook
		// does not run made it: curl … > f)
		data, err := readFile(key)
		if err != nil || strings.Contains(string(data), refMark) {
			return false
		}
		w = &written{text: string(data), known: true, at: t.loc(x.stmt), from: t.display(key)}
	}
	if w == nil {
		return false
	}
	if w.url != "" {
		// a download it edits: the file the run makes, named (downloads.go)
		c := *w
		c.edited = true
		t.wrote[key] = &c
		return false
	}
	c := *w // a copy: the text before stays another branch's
	c.edited = true
	c.notes = append(append([]importer.Note(nil), w.notes...), t.noteAt(x.stmt, t.text(x.stmt), "khook runs no shell commands; no step reads the file it edits, so nothing of it is carried"))
	switch text, why := sedApply(c.text, exprs, ere); {
	case !c.known:
	case !x.ok:
		c.known, c.why = false, x.why
	case why != "":
		c.known, c.why = false, why
	default:
		c.text = text
	}
	t.wrote[key] = t.undecidedWrite(&c)
	return true
}

// sedArgs splits sed's arguments: its expressions, its files, -i, -E.
func sedArgs(args []string) (exprs, files []string, inPlace, ere, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-e" || a == "--expression":
			if i+1 == len(args) {
				return nil, nil, false, false, false
			}
			exprs = append(exprs, args[i+1])
			i++
		case strings.HasPrefix(a, "--expression="):
			exprs = append(exprs, strings.TrimPrefix(a, "--expression="))
		case a == "-i" || a == "--in-place" || strings.HasPrefix(a, "-i") && !strings.ContainsAny(a[2:], "ef") || strings.HasPrefix(a, "--in-place="):
			inPlace = true
			if a == "-i" && i+1 < len(args) && args[i+1] == "" {
				i++ // BSD sed's -i '': no backup
			}
		case a == "-E" || a == "-r" || a == "--regexp-extended":
			ere = true
		case strings.HasPrefix(a, "-") && a != "-":
			return nil, nil, false, false, false // -n, -f script, …
		case exprs == nil && len(files) == 0:
			exprs = append(exprs, a)
		default:
			files = append(files, a)
		}
	}
	return exprs, files, inPlace, ere, len(exprs) > 0
}

// sedApply is sed's s/PATTERN/REPLACEMENT/[g] commands (separated by ;
// or a newline) on text, line by line; why says what khook cannot apply.
func sedApply(text string, exprs []string, ere bool) (string, string) {
	for _, e := range exprs {
		for e = strings.TrimSpace(e); e != ""; e = strings.TrimLeft(e, "; \n\t") {
			re, repl, global, rest, why := sedSubst(e, ere)
			if why != "" {
				return "", why
			}
			lines := strings.Split(text, "\n")
			for i, l := range lines {
				lines[i] = substLine(l, re, repl, global)
			}
			text, e = strings.Join(lines, "\n"), rest
		}
	}
	return text, ""
}

// sedSubst parses one s command at the start of e.
func sedSubst(e string, ere bool) (re *regexp.Regexp, repl string, global bool, rest, why string) {
	cannot := "a sed expression khook cannot apply at import (" + e + "): only s/PATTERN/REPLACEMENT/ with g or I, and escapes that mean the same in Go's regular expressions"
	if len(e) < 4 || e[0] != 's' {
		return nil, "", false, "", cannot
	}
	delim := e[1]
	var parts [2]string
	i := 2
	for p := range parts {
		var b strings.Builder
		for ; i < len(e) && e[i] != delim; i++ {
			if e[i] == '\\' && i+1 < len(e) {
				if e[i+1] == delim {
					i++
					b.WriteByte(delim)
					continue
				}
				b.WriteByte(e[i])
				i++
			}
			b.WriteByte(e[i])
		}
		if i == len(e) {
			return nil, "", false, "", cannot
		}
		parts[p] = b.String()
		i++
	}
	flags := ""
	for ; i < len(e) && e[i] != ';' && e[i] != '\n' && e[i] != ' '; i++ {
		switch e[i] {
		case 'g':
			global = true
		case 'I':
			flags = "(?i)"
		default:
			return nil, "", false, "", cannot
		}
	}
	pat := strings.ReplaceAll(parts[0], litDollar, `\$`)
	if r := varRef.FindString(parts[0]); r != "" {
		// s/$OLD_DOMAIN/$NEW/ with OLD_DOMAIN read from the file at run
		// time: what it replaces is not known (trial 46zo's D3)
		return nil, "", false, "", "the text sed replaces is " + r + ", only known when the script runs"
	}
	if !ere {
		var ok bool
		if pat, ok = breToRE2(pat); !ok {
			return nil, "", false, "", cannot
		}
	}
	if !plainReplacement(parts[1]) {
		return nil, "", false, "", cannot
	}
	re, err := regexp.Compile(flags + pat)
	if err != nil {
		return nil, "", false, "", cannot
	}
	return re, strings.ReplaceAll(markRefs(parts[1]), litDollar, "$"), global, e[i:], ""
}

// breToRE2 is a POSIX basic regular expression as Go's: in a BRE, ( ) { }
// + ? | are literal unless escaped, and \$ \. \* \[ literal; GNU's \w \s
// \b (and their capitals), \n and \t mean what they mean in Go. Any other
// escaped letter or digit (a back-reference, \< \>, \` \') has no
// same meaning there: false, so the sed is not applied at import.
func breToRE2(p string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			i++
			switch d := p[i]; {
			case strings.IndexByte("(){}+?|", d) >= 0:
				b.WriteByte(d) // \( is a group in a BRE
			case strings.IndexByte("wWsSbBnt", d) >= 0:
				b.WriteByte('\\')
				b.WriteByte(d)
			case d >= 'a' && d <= 'z' || d >= 'A' && d <= 'Z' || d >= '0' && d <= '9' || d == '<' || d == '>' || d == '`' || d == '\'':
				return "", false
			default:
				b.WriteString(regexp.QuoteMeta(string(d)))
			}
		case strings.IndexByte("(){}+?|", c) >= 0:
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// plainReplacement: a replacement's escapes are those substLine knows
// (\1…\9, \&, \n, \t, \\, an escaped punctuation); GNU's \U \L \u \l
// \E case conversions are not.
func plainReplacement(r string) bool {
	for i := 0; i+1 < len(r); i++ {
		if r[i] == '\\' {
			i++
			if d := r[i]; (d >= 'a' && d <= 'z' || d >= 'A' && d <= 'Z') && d != 'n' && d != 't' {
				return false
			}
		}
	}
	return true
}

// substLine is one line with the first (global: every) match replaced;
// in repl & is the match, \N a group, \& and \\ themselves.
func substLine(line string, re *regexp.Regexp, repl string, global bool) string {
	var b strings.Builder
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(line, -1) {
		b.WriteString(line[last:m[0]])
		for i := 0; i < len(repl); i++ {
			switch c := repl[i]; {
			case c == '&':
				b.WriteString(line[m[0]:m[1]])
			case c == '\\' && i+1 < len(repl):
				i++
				switch d := repl[i]; {
				case d >= '1' && d <= '9' && int(d-'0')*2+1 < len(m) && m[int(d-'0')*2] >= 0:
					b.WriteString(line[m[int(d-'0')*2]:m[int(d-'0')*2+1]])
				case d == 'n':
					b.WriteByte('\n')
				case d == 't':
					b.WriteByte('\t')
				default:
					b.WriteByte(d)
				}
			default:
				b.WriteByte(c)
			}
		}
		last = m[1]
		if !global {
			break
		}
	}
	b.WriteString(line[last:])
	return b.String()
}

// sedOut is sed 's/a/b/' FILE | kubectl apply -f -: the file's text (a
// repository file, or one the script made) with the substitutions applied;
// ok false when it is not such a sed, a nil input when it is named not
// carried (a Secret).
func (t *translator) sedOut(x *cmd) (*input, bool) { return t.sedOutThen(x, nil) }

// sedPiped is `cat ns.yml | sed "s/{{NS}}/$1/g"`, and a chain of seds
// after it or after `sed … FILE` (`cat f | sed s/a/b/ | sed s/c/d/`,
// trial 46s69r's D1): sed on the file, each later sed on what the one
// before it prints.
func (t *translator) sedPiped(first *syntax.Stmt, c *syntax.CallExpr, seds []*syntax.Stmt) (*input, bool) {
	x := t.newCmd(first, c)
	var then []*cmd
	for _, st := range seds {
		then = append(then, t.newCmd(st, st.Cmd.(*syntax.CallExpr)))
	}
	switch {
	case len(x.args) == 2 && x.args[0] == "cat" && x.ok:
		sx := then[0]
		sx.args = append(sx.args, x.args[1])
		return t.sedOutThen(sx, then[1:])
	case len(x.args) > 0 && x.args[0] == "sed":
		return t.sedOutThen(x, then)
	}
	return nil, false
}

// sedOutThen is sedOut with the seds then piped after it applied in turn
// to its text: none of those may name a file or edit in place.
func (t *translator) sedOutThen(x *cmd, then []*cmd) (*input, bool) {
	exprs, files, inPlace, ere, ok := sedArgs(t.sedWords(x))
	if !ok || inPlace || len(files) != 1 || !x.ok {
		return nil, false
	}
	type sedExprs struct {
		exprs []string
		ere   bool
	}
	var more []sedExprs
	for _, m := range then {
		e, f, in, ere, ok := sedArgs(t.sedWords(m))
		if !ok || in || len(f) != 0 || !m.ok {
			return nil, false
		}
		more = append(more, sedExprs{e, ere})
	}
	text, from := "", t.display(t.abs(files[0]))
	if w := t.wrote[t.writeKey(files[0])]; w != nil {
		if !w.known {
			return nil, false
		}
		text, from = w.text, w.from
		w.read = true
	} else if data, err := readFile(t.abs(files[0])); err == nil && !strings.Contains(string(data), refMark) && t.madeBy(t.abs(files[0])) == "" {
		text = string(data)
	} else {
		return nil, false
	}
	out, why := sedApply(text, exprs, ere)
	for _, m := range more {
		if why == "" {
			out, why = sedApply(out, m.exprs, m.ere)
		}
	}
	if why != "" {
		return nil, false
	}
	out = unmarkRefs(out, from != "")
	if from != "" && secretKind.MatchString(out) && !valuesAreVars(out) {
		t.account(x.stmt, importer.FateNotCarried, "", "a Secret from a file ("+from+"): khook never copies a file's content into the spec; apply it as a sops-encrypted manifest or build it from secret variables")
		return nil, true
	}
	if from != "" {
		t.info(x.stmt, "sed … "+from, "the text sed makes of "+from+" is inline here, so a later change to "+from+" is not followed until you import again")
	}
	return &input{src: &importer.OutSource{Inline: out}, text: out, known: true}, true
}

// echoSed is $(echo "$0" | sed 's/\(.*\)\/.*/\1/') of words known at
// import: sed's s/// over the line echo prints, the trailing newline
// dropped as $(…) drops it (46zza's D5: a folder from $0 taken as one the
// run makes).
func (t *translator) echoSed(cs *syntax.CmdSubst) (string, bool) {
	p, ec, sc := twoCalls(cs)
	if p == nil || len(p.X.Redirs)+len(p.Y.Redirs) > 0 {
		return "", false
	}
	echo, sed := t.newCmd(p.X, ec), t.newCmd(p.Y, sc)
	if !echo.ok || !sed.ok || len(echo.args) < 2 || echo.args[0] != "echo" || strings.HasPrefix(echo.args[1], "-") || len(sed.args) < 2 || sed.args[0] != "sed" {
		return "", false
	}
	line := strings.Join(echo.args[1:], " ")
	exprs, files, inPlace, ere, ok := sedArgs(sed.args[1:])
	if !ok || inPlace || len(files) > 0 || strings.Contains(line, "${") {
		return "", false
	}
	out, why := sedApply(line+"\n", exprs, ere)
	return strings.TrimRight(out, "\n"), why == ""
}

// sedWrites records sed 's|X|$V|g' tmpl > out.yaml as envsubst's is
// recorded: out.yaml holds what it prints, which a step that reads it
// takes inline (46zzf's D2); false when khook cannot make that text.
func (t *translator) sedWrites(x *cmd) bool {
	t.notATool = true
	in, ok := t.sedOut(x)
	t.notATool = false
	switch key := t.outFile(x); {
	case !ok || key == "":
		return false
	case in == nil: // named not carried at its line (a Secret)
		t.wrote[key] = &written{why: "made by the sed at " + t.loc(x.stmt).String() + ", which is not carried: see that line", at: t.loc(x.stmt)}
	default:
		t.sedOneBranch(x)
		x.stdin = in
		t.writeFiles(x, "sed")
	}
	return true
}

// sedOneBranch names sed … > FILE not carried where it reads a variable
// the script sets per branch: the text written is the branch's whose
// value the walk holds, the step that reads FILE not split as one that
// reads the variable is (trial 46s69i's D3: the host hard-wired to the
// fallback ${PUBLIC_IP}.nip.io, DOMAIN read from the cluster ignored, and
// "import faithful").
func (t *translator) sedOneBranch(x *cmd) {
	name := t.altIn(x.stmt)
	if name == "" {
		return
	}
	v := t.vars[name]
	taken := "one of its values"
	if v.fb >= 0 && v.fb < len(v.alts) && v.alts[v.fb].when != "" {
		taken = "its value where " + v.alts[v.fb].when
	}
	values := ""
	if shown := altValues(v, nil); len(shown) > 1 && !secretLooking(name) && !v.unknown && v.decl == nil {
		// the values themselves, not a when: of the spec's (fixer
		// 46s70d, trial 46s69i's D3: "where !(vars.get(…) != "")")
		taken, values = v.val, " ("+strings.Join(shown, " or ")+")"
	}
	t.notCarried(x.stmt, "sed … "+name, name+" has a value per branch of the script"+values+", and the text sed writes here holds only "+taken+", whichever path the run takes: edit the step that reads it where the run takes another branch, or pass "+name+" on the helm or kubectl line itself (--set) and import again")
}

// altValues are the values of a variable set per branch (those of a
// branch's own branches too), as the spec would write them (${NAME} for a
// variable of the run), each once; nil where one is a secret or no one
// value.
func altValues(v *shVar, out []string) []string {
	for _, a := range v.alts {
		var s string
		switch {
		case a.v == nil || a.v.array || a.v.decl != nil && a.v.decl.Secret:
			return nil
		case a.v.alts != nil:
			if out = altValues(a.v, out); out == nil {
				return nil
			}
			continue
		case a.v.decl != nil:
			s = "${" + a.v.decl.Name + "}"
		default:
			s = a.v.val
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// litDollar stands for a $ the script quotes (\$ in "…", '$'): sed
// matches and writes it as a $, never a variable's value.
const litDollar = "\x01"

// sedWords are sed's arguments with each quoted $ as litDollar, so that
// sed "s|\${DOMAIN}|${DOMAIN}|g" replaces the file's own ${DOMAIN}
// (46zzf's D2), not a value known only at run time.
func (t *translator) sedWords(x *cmd) []string {
	if len(x.words) != len(x.args) {
		return x.args[1:]
	}
	var args []string
	for _, w := range x.words[1:] {
		a, ok, _ := t.eval(&syntax.Word{Parts: dollarsMarked(w.Parts)})
		if !ok {
			return x.args[1:]
		}
		args = append(args, a)
	}
	return args
}

// dollarsMarked is parts with each quoted $ as litDollar.
func dollarsMarked(parts []syntax.WordPart) []syntax.WordPart {
	var out []syntax.WordPart
	for _, p := range parts {
		switch x := p.(type) {
		case *syntax.Lit:
			c := *x
			c.Value = strings.ReplaceAll(x.Value, `\$`, litDollar)
			p = &c
		case *syntax.SglQuoted:
			c := *x
			c.Value = strings.ReplaceAll(x.Value, "$", litDollar)
			p = &c
		case *syntax.DblQuoted:
			c := *x
			c.Parts = dollarsMarked(x.Parts)
			p = &c
		}
		out = append(out, p)
	}
	return out
}

// manifestText is $(cat ns.yml), $(sed "s/{{NS}}/$1/g" ns.yml), $(cat
// ns.yml | sed …) of a manifest file of the repository: its text, known
// at import (customer121's T=…; echo "$T" | kubectl apply -f -). Not a
// Secret, nor anything with a private key: those stay a secret read
// from a file.
func (t *translator) manifestText(cs *syntax.CmdSubst) (string, bool) {
	if len(cs.Stmts) != 1 {
		return "", false
	}
	var catFile string
	st := cs.Stmts[0]
	if p, ok := st.Cmd.(*syntax.BinaryCmd); ok && p.Op == syntax.Pipe {
		c, ok := p.X.Cmd.(*syntax.CallExpr)
		if !ok {
			return "", false
		}
		x := t.newCmd(p.X, c)
		if len(x.args) != 2 || x.args[0] != "cat" || !x.ok {
			return "", false
		}
		catFile, st = x.args[1], p.Y
	}
	c, ok := st.Cmd.(*syntax.CallExpr)
	if !ok {
		return "", false
	}
	x := t.newCmd(st, c)
	if !x.ok || len(x.args) == 0 {
		return "", false
	}
	var file string
	var exprs []string
	ere := false
	switch {
	case x.args[0] == "cat" && len(x.args) == 2 && catFile == "":
		file = x.args[1]
	case x.args[0] == "sed":
		var files []string
		var inPlace, ok bool
		// sed "s|\${DOMAIN}|${DOMAIN}|g" f: the quoted $ a literal one,
		// as sedOut reads it (trial 46s69m's D3: ${DOMAIN} taken for a
		// value of the run, the values document left out)
		exprs, files, inPlace, ere, ok = sedArgs(t.sedWords(x))
		if catFile != "" {
			files = append(files, catFile)
		}
		if !ok || inPlace || len(files) != 1 {
			return "", false
		}
		file = files[0]
	default:
		return "", false
	}
	if ext := filepath.Ext(file); ext != ".yaml" && ext != ".yml" || t.madeBy(t.abs(file)) != "" || t.wrote[t.writeKey(file)] != nil {
		return "", false
	}
	data, err := readFile(t.abs(file))
	if err != nil || strings.Contains(string(data), refMark) || secretKind.Match(data) || importer.PrivateKey(string(data)) {
		return "", false
	}
	text, why := sedApply(string(data), exprs, ere)
	if why != "" {
		return "", false
	}
	return strings.TrimRight(unmarkRefs(text, true), "\n"), true // $(…) drops the trailing newlines
}
