package shscript

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// fileFromProcSubst is `kubectl apply -f <(cat <<EOF … EOF)` (or
// <(envsubst < t.yaml), <(kustomize build d), helm's -f <(…)): bash hands
// the command what the substitution prints as a file, which is the pipe
// `cat <<EOF … | kubectl apply -f -`, carried as that (trial 46s67d's D2:
// not carried, "only known when the script runs"). It walks the pipe and
// says true; false for any other command. A <(sops -d f) stays the file.
func (t *translator) fileFromProcSubst(s *syntax.Stmt, c *syntax.CallExpr) bool {
	if len(c.Args) < 3 || toolName(lit(c.Args[0])) == "" {
		return false
	}
	at := -1
	for i, w := range c.Args[1:] {
		ps := procSubstArg(w)
		if ps == nil {
			continue
		}
		prev := lit(c.Args[i])
		if at >= 0 || len(ps.Stmts) != 1 || runs(ps.Stmts[0], "sops") || prev != "-f" && prev != "--filename" && prev != "--values" {
			return false
		}
		at = i + 1
	}
	if at < 0 {
		return false
	}
	ps := procSubstArg(c.Args[at])
	args := append([]*syntax.Word{}, c.Args...)
	args[at] = &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{ValuePos: ps.Pos(), ValueEnd: ps.End(), Value: "-"}}}
	reader := &syntax.Stmt{Position: s.Position, Cmd: &syntax.CallExpr{Assigns: c.Assigns, Args: args}, Redirs: s.Redirs}
	pipe := &syntax.BinaryCmd{OpPos: ps.Pos(), Op: syntax.Pipe, X: ps.Stmts[0], Y: reader}
	save := t.procSubst
	t.procSubst = lit(c.Args[at-1]) + " " + t.procSubstText(ps)
	t.pipe(&syntax.Stmt{Position: s.Position, Cmd: pipe}, pipe)
	t.procSubst = save
	return true
}

// procSubstText is <(…) as a note names it: its command's first line
// (<(cat <<EOF …)), not the document it prints.
func (t *translator) procSubstText(ps *syntax.ProcSubst) string {
	first, _, _ := strings.Cut(t.text(ps.Stmts[0]), "\n")
	first = strings.TrimSuffix(strings.TrimSpace(first), " …") // t.text leaves a here-document out as …
	return "<(" + first + " …)"
}

// procSubstArg is the <(…) a word is made of alone, else nil.
func procSubstArg(w *syntax.Word) *syntax.ProcSubst {
	if len(w.Parts) != 1 {
		return nil
	}
	ps, ok := w.Parts[0].(*syntax.ProcSubst)
	if !ok || ps.Op != syntax.CmdIn || len(ps.Stmts) == 0 {
		return nil
	}
	return ps
}

// runs: the statement is a call of name (sops -d f).
func runs(s *syntax.Stmt, name string) bool {
	c, ok := s.Cmd.(*syntax.CallExpr)
	return ok && len(c.Args) > 0 && lit(c.Args[0]) == name
}
