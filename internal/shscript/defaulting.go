package shscript

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/khook/khook/internal/importer"
)

// defaulting is `if [ -z "$X" ]; then X=v; fi` (also `[ -z "$X" ] &&
// X=v`, X=${X:=v} inside, export X=v) on a variable the script reads from
// the environment: bash's ${X:-v}, so X is a variable with default v,
// not a when: over every step that reads it with an empty default.
func (t *translator) defaulting(cond *syntax.Stmt, body []*syntax.Stmt) bool {
	name := emptyTest(cond)
	if name == "" || len(body) == 0 {
		return false
	}
	if v, set := t.vars[name]; set && v.decl == nil {
		return false // the script set it: the test is decided at import
	}
	if len(body) == 1 && promptsFor(body[0], name) {
		// if [[ -z "${DOMAIN:-}" ]]; then read -rp "Domain: " DOMAIN; fi:
		// the environment's value or a person's, never none: the prompt
		// said, X a required variable (trial 46s69m's D4: an optional
		// secret, "" written into a Secret kept by skipIf: exists)
		t.stmt(body[0])
		return true
	}
	var val string
	generated := false
	for _, s := range body {
		if t.isHousekeeping(s) && !exits(s) && onlyAssign(s) == nil {
			continue // echo "cannot fetch the version, using v1.2.0" (46zza's N8)
		}
		a := onlyAssign(s)
		if a == nil || a.Name.Value != name || a.Value == nil || a.Append || a.Array != nil {
			return false
		}
		w := a.Value
		if pe, _ := paramOf(w.Parts[0]); len(w.Parts) == 1 && pe != nil && pe.Param != nil && pe.Param.Value == name && pe.Exp != nil {
			w = pe.Exp.Word // X=${X:=v}
		}
		v, ok, _ := t.eval(w)
		gen := t.generated
		t.fromFileSecrets, t.generated, t.computedSecret = false, false, false
		if !ok && gen {
			generated = true // [ -z "$KEY" ] && KEY=$(openssl rand -hex 64)
			continue
		}
		if !ok || strings.Contains(v, "${") {
			return false
		}
		val = v
	}
	if generated {
		// a secret made when unset (trial 46zu's D2: two steps, one with
		// an empty key): the one to keep is given, and required
		from := t.loc(cond)
		v := &importer.Var{Name: name, Secret: true, Required: true, From: from, Description: "a secret the script generates when it is unset (a new one each run): give the one to keep (" + from.String() + ")"}
		if old := t.m.Var(name); old != nil {
			*old = *v
			v = old
		}
		t.vars[name] = &shVar{decl: v}
		return true
	}
	from := t.loc(cond)
	if secretLooking(name) {
		return t.secretDefault(name, val, from)
	}
	v := t.m.Var(name) // declared where the script read it before
	if sv := t.vars[name]; v == nil && sv != nil && sv.decl != nil {
		v = sv.decl // computed (VERSION=$(curl …)), not yet declared
	}
	if v == nil {
		v = &importer.Var{Name: name, From: from}
	}
	v.Required, v.Default = false, &val
	if v.Computed {
		// VERSION=$(curl …), then v1.2.0 where that is empty (46zza's N8:
		// required, and every step doubled under when: VERSION == "")
		v.Description = strings.TrimSuffix(v.Description, ")") + "); empty, it is " + val + " (" + from.String() + ")"
	} else {
		v.Description = "read from the environment by the script; unset or empty, it is " + val + " (" + from.String() + ")"
	}
	t.vars[name] = &shVar{decl: v} // declared where a step reads it
	return true
}

// emptyTest is X of [ -z "$X" ], [[ -z $X ]], test -z "$X" ("" for any
// other condition).
func emptyTest(s *syntax.Stmt) string {
	if s.Negated {
		return ""
	}
	var w *syntax.Word
	switch c := s.Cmd.(type) {
	case *syntax.TestClause:
		if u, ok := c.X.(*syntax.UnaryTest); ok && u.Op == syntax.TsEmpStr {
			w, _ = u.X.(*syntax.Word)
		}
	case *syntax.CallExpr:
		n := len(c.Args)
		if n == 4 && lit(c.Args[0]) == "[" && lit(c.Args[1]) == "-z" && lit(c.Args[3]) == "]" || n == 3 && lit(c.Args[0]) == "test" && lit(c.Args[1]) == "-z" {
			w = c.Args[2]
		}
	}
	if w == nil || len(w.Parts) != 1 {
		return ""
	}
	pe, _ := paramOf(w.Parts[0])
	if pe != nil && pe.Exp != nil && (pe.Exp.Op == syntax.DefaultUnsetOrNull || pe.Exp.Op == syntax.DefaultUnset) && (pe.Exp.Word == nil || lit(pe.Exp.Word) == "") {
		pe = &syntax.ParamExp{Param: pe.Param} // [ -z "${X:-}" ] under set -u: the same test
	}
	if pe == nil || pe.Param == nil || pe.Exp != nil || pe.Index != nil || pe.Length || pe.Slice != nil || pe.Repl != nil {
		return ""
	}
	return pe.Param.Value
}

// onlyAssign is the one assignment s makes (X=v, export X=v), nil when s
// does anything else.
func onlyAssign(s *syntax.Stmt) *syntax.Assign {
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		if len(c.Args) == 0 && len(c.Assigns) == 1 {
			return c.Assigns[0]
		}
	case *syntax.DeclClause:
		if c.Variant.Value == "export" && len(c.Args) == 1 && c.Args[0].Name != nil {
			return c.Args[0]
		}
	}
	return nil
}

// promptsFor: s is read … NAME, a prompt for name alone.
func promptsFor(s *syntax.Stmt, name string) bool {
	x, ok := s.Cmd.(*syntax.CallExpr)
	return ok && len(x.Args) > 1 && lit(x.Args[0]) == "read" && lit(x.Args[len(x.Args)-1]) == name && len(x.Assigns) == 0
}

// secretDefault: if [[ -z $DB_PASSWORD ]]; then DB_PASSWORD=literal; fi
// on a secret. Unset, the script uses its literal; a secret variable has
// no default in the spec, so it is required, never "" in its place
// (trial 46s70f's D1: optional, "unset, it is empty", its Secret empty).
func (t *translator) secretDefault(name, val string, from importer.Loc) bool {
	if val == "" {
		return false // X="" where it is empty: the test decides nothing
	}
	v := t.m.Var(name) // declared where the script read it before
	if sv := t.vars[name]; v == nil && sv != nil && sv.decl != nil {
		v = sv.decl
	}
	if v == nil {
		v = &importer.Var{Name: name, From: from}
	}
	v.Secret, v.Required, v.Default, v.Example = true, true, nil, ""
	v.Description = "read from the environment by the script; unset or empty, the script uses a default of its own (" + from.String() + "), which the spec does not copy: give it"
	t.m.Info = append(t.m.Info, importer.Note{Loc: from, What: "the default of " + name, Why: "not copied into the spec: a secret variable has no default; give it as KHOOK_SECRET_" + name})
	t.vars[name] = &shVar{decl: v} // declared where a step reads it
	return true
}
