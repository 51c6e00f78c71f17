package shscript

import (
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/khook/khook/internal/importer"
)

// findFiles is the output of $(find DIR -name '*.yaml' [-type f]
// [-maxdepth N] | grep -v WORD | sort) at import: the manifests a loop
// then applies one by one, as kubectl apply -f DIR lists a directory's
// (trial 46zw's D3: the loop was read as a choice among directories and
// its four applies lost). Said where the loop applies them.
func (t *translator) findFiles(cs *syntax.CmdSubst) (string, bool) {
	return t.findOutput(cs, cs.Stmts)
}

// findOutput is what the find pipeline stmts, of $(…) or <(…) at n, lists
// at import, as findFiles says.
func (t *translator) findOutput(n syntax.Node, stmts []*syntax.Stmt) (string, bool) {
	if len(stmts) != 1 {
		return "", false
	}
	stages := pipeStages(stmts[0])
	c, ok := stages[0].Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) < 2 || lit(c.Args[0]) != "find" {
		return "", false
	}
	var args []string
	for _, w := range c.Args[1:] {
		v, ok, _ := t.eval(w)
		if !ok || strings.Contains(v, "${") {
			return "", false
		}
		args = append(args, v)
	}
	out, ok := t.findList(args)
	if !ok {
		return "", false
	}
	var drop []string
	for _, st := range stages[1:] {
		g, ok := st.Cmd.(*syntax.CallExpr)
		switch {
		case ok && len(g.Args) == 1 && lit(g.Args[0]) == "sort":
		case ok && len(g.Args) == 3 && lit(g.Args[0]) == "grep" && lit(g.Args[1]) == "-v":
			w, wok, _ := t.eval(g.Args[2]) // grep -v "$NAMESPACE_FILE"
			if !wok || w == "" || strings.Contains(w, "${") {
				return "", false
			}
			drop = append(drop, w)
		default:
			return "", false
		}
	}
	out = slices.DeleteFunc(out, func(f string) bool {
		return slices.ContainsFunc(drop, func(w string) bool { return strings.Contains(f, w) })
	})
	if len(out) == 0 {
		return "", false
	}
	t.info(n, t.text(n), "lists "+strconv.Itoa(len(out))+" files under "+args[0]+" at import: a file added later is not applied until you import again")
	return strings.Join(out, "\n"), true
}

// findList is what find ROOT [-name P | -iname P] [-type f] [-maxdepth N]
// lists at import, sorted (find's own order is the directory's); false for
// any other test or action, or a ROOT not there.
func (t *translator) findList(args []string) ([]string, bool) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return nil, false
	}
	root, depth := args[0], -1
	var patterns []string // -name A -o -name B: either
	for i := 1; i < len(args); i++ {
		switch {
		case (args[i] == "-name" || args[i] == "-iname") && i+1 < len(args):
			patterns = append(patterns, args[i+1])
			i++
		case (args[i] == "-o" || args[i] == "-or") && len(patterns) > 0, args[i] == "(" || args[i] == ")":
		case args[i] == "-type" && i+1 < len(args) && args[i+1] == "f":
			i++
		case args[i] == "-maxdepth" && i+1 < len(args):
			n, err := strconv.Atoi(args[i+1])
			if err != nil {
				return nil, false
			}
			depth = n
			i++
		default:
			return nil, false // -exec, -o, -newer …: not read at import
		}
	}
	if t.cwdUnknown != "" && !filepath.IsAbs(root) {
		return nil, false // a directory the run cd's to
	}
	base := t.abs(root)
	var out []string
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(base, p)
		if d.IsDir() {
			if depth >= 0 && rel != "." && strings.Count(rel, string(filepath.Separator))+1 >= depth {
				return filepath.SkipDir
			}
			return nil
		}
		if len(patterns) > 0 && !slices.ContainsFunc(patterns, func(p string) bool { ok, _ := path.Match(p, d.Name()); return ok }) {
			return nil
		}
		out = append(out, path.Join(root, filepath.ToSlash(rel)))
		return nil
	})
	if err != nil || len(out) == 0 {
		return nil, false
	}
	slices.Sort(out)
	return out, true
}

// findExec is find … -exec kubectl apply -f {} \; (or helm, any helm or
// kubectl command with {}): the command once per file find lists at
// import, said; a find the import cannot list names the command it runs
// as not carried, at its line (the left list's "find -exec kubectl").
func (t *translator) findExec(x *cmd) bool {
	i := slices.Index(x.args, "-exec")
	if x.args[0] != "find" || i < 0 || i+1 >= len(x.args) || toolName(x.args[i+1]) == "" {
		return false
	}
	tmpl := x.args[i+1:]
	if end := slices.IndexFunc(tmpl, func(a string) bool { return a == ";" || a == "+" }); end >= 0 {
		tmpl = tmpl[:end]
	}
	files, ok := t.findList(x.args[1:i])
	if !ok || !x.ok {
		t.account(x.stmt, importer.FateNotCarried, "", "find runs "+strings.Join(tmpl, " ")+" for each file it finds when the script runs, which the import cannot list (a directory the run makes or cd's to, or a test it does not read): list the files, or apply the directory")
		return true
	}
	t.info(x.stmt, t.text(x.stmt), "find lists "+strconv.Itoa(len(files))+" files at import: "+strings.Join(tmpl, " ")+" is carried once for each; a file added later is not until you import again")
	for _, f := range files {
		argv := make([]string, len(tmpl))
		for j, a := range tmpl {
			argv[j] = strings.ReplaceAll(a, "{}", f)
		}
		y := &cmd{stmt: x.stmt, words: x.words, args: argv, ok: true}
		if toolName(argv[0]) == "helm" {
			t.helm(y)
		} else {
			t.kubectl(y)
		}
	}
	return true
}

// pipeStages are the commands of a | b | c, in order (s alone when it is
// no pipeline).
func pipeStages(s *syntax.Stmt) []*syntax.Stmt {
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && b.Op == syntax.Pipe {
		return append(pipeStages(b.X), pipeStages(b.Y)...)
	}
	return []*syntax.Stmt{s}
}

// readFind is `while read -r f; do kubectl apply -f "$f"; done < <(find
// ./extra-manifests -type f -name "*.yaml")`: a turn per file the find
// lists at import, as a for loop over $(find …) is (trial 46s70i's N4:
// $f was "computed when the script runs", the manifests not applied).
func (t *translator) readFind(s *syntax.Stmt, c *syntax.WhileClause) bool {
	rc, ok := c.Cond[0].Cmd.(*syntax.CallExpr)
	if !ok || len(s.Redirs) != 1 || s.Redirs[0].Op != syntax.RdrIn || len(s.Redirs[0].Word.Parts) != 1 || len(rc.Args) < 2 || lit(rc.Args[0]) != "read" {
		return false
	}
	name := lit(rc.Args[len(rc.Args)-1])
	for _, w := range rc.Args[1 : len(rc.Args)-1] {
		if lit(w) != "-r" {
			return false // read -d, -a, two names: not a line a turn
		}
	}
	ps, ok := s.Redirs[0].Word.Parts[0].(*syntax.ProcSubst)
	if !ok || ps.Op != syntax.CmdIn || !validName(name) {
		return false
	}
	out, ok := t.findOutput(ps, ps.Stmts)
	if !ok {
		return false
	}
	t.unroll(s, &syntax.ForClause{Do: c.Do}, name, strings.Split(out, "\n"))
	return true
}
