package shscript

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// exportsFile is export $(cat .env | xargs) — also $(grep -v '^#' .env |
// xargs), $(xargs < .env), with a sed or grep filter on the way —: the
// file's NAME=value lines become the script's variables, as a source of
// it would make them (trial 46zl's D5: no word of it, and NS "read from
// the environment" though .env sets it). A file not there at import sets
// nothing: bash's cat fails and export goes on; each variable is then
// read from the environment, as before.
func (t *translator) exportsFile(s *syntax.Stmt, w *syntax.Word) bool {
	if w == nil || len(w.Parts) != 1 {
		return false
	}
	cs, ok := w.Parts[0].(*syntax.CmdSubst)
	if !ok || len(cs.Stmts) != 1 {
		return false
	}
	stages := pipeStages(cs.Stmts[0])
	if !isCommand(stages[len(stages)-1], "xargs") {
		return false
	}
	file := ""
	for _, r := range stages[len(stages)-1].Redirs {
		if r.Op == syntax.RdrIn {
			file = lit(r.Word) // xargs < .env
		}
	}
	if len(stages) > 1 {
		c, ok := stages[0].Cmd.(*syntax.CallExpr)
		if !ok || len(c.Args) < 2 {
			return false
		}
		switch lit(c.Args[0]) {
		case "cat":
			if len(c.Args) == 2 {
				file = lit(c.Args[1])
			}
		case "grep": // grep -v '^#' .env: the last word is the file
			file = lit(c.Args[len(c.Args)-1])
		}
		for _, st := range stages[1 : len(stages)-1] {
			if !isCommand(st, "grep") && !isCommand(st, "sed") {
				return false // a filter that may change values: not a plain read
			}
		}
	}
	if file == "" || strings.HasPrefix(file, "-") {
		return false
	}
	data, err := readFile(t.abs(file))
	if err != nil {
		t.info(s, t.text(s), file+" is not there at import: the variables it would set are read from the environment")
		return true
	}
	// What xargs hands export: the file's words, quotes taken off; each
	// NAME=value one assignment, written as bash would read it, a line
	// per line of the file (so notes cite its lines). A word without =
	// (a comment's) exports nothing.
	var b strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		var parts []string
		for _, w := range strings.Fields(line) {
			w = strings.Trim(w, `"'`)
			if k, v, ok := strings.Cut(w, "="); ok && syntax.ValidName(k) {
				parts = append(parts, k+"='"+strings.ReplaceAll(v, "'", `'\''`)+"'")
			}
		}
		b.WriteString(strings.Join(parts, " ") + "\n")
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(b.String()), file)
	if err != nil {
		return false // cannot happen: every word quoted
	}
	t.runFile(f, []byte(b.String()), t.abs(file))
	return true
}

// maxRead bounds a file the import reads: a values file or a manifest is
// far smaller.
const maxRead = 32 << 20

// readFile reads a file the script names: a regular file only, of at most
// maxRead bytes; /dev/urandom, a FIFO or a device holds no text of the
// checkout (trial 46s69l's D8: tr -dc … </dev/urandom read until the
// import ran out of memory).
func readFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return nil, err
	case !st.Mode().IsRegular():
		return nil, &os.PathError{Op: "read", Path: path, Err: errors.New("not a regular file")}
	case st.Size() > maxRead:
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than %d MiB", maxRead>>20)}
	}
	return os.ReadFile(path)
}
