package shscript

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// transforms: pe is one of bash's operations on a value (${1#*=},
// ${X%.yaml}, ${X:+--wait}, ${#X}, ${X/a/b}, ${X^^}, ${X:0:7}), not a plain
// $X or a default (${X:-d}, which param reads itself, declaring X).
func transforms(pe *syntax.ParamExp) bool {
	switch pe.Param.Value {
	case "@", "*":
		return false
	}
	if pe.Length || pe.Repl != nil || pe.Slice != nil {
		return true
	}
	if pe.Exp == nil {
		return false
	}
	switch pe.Exp.Op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull,
		syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
		return false
	}
	return true
}

// transform is bash's own expansion of pe (mvdan.cc/sh's expand, not a
// copy of its rules), over the values the script set at import. One that
// reads a value only known when the script runs, or a khook variable, is
// not evaluated: what it makes of it is only known then, and the
// variable is not declared for it.
func (t *translator) transform(pe *syntax.ParamExp) (string, bool, string) {
	if pe.Exp != nil && pe.Exp.Op == syntax.OtherParamOps {
		return "", false, "an expansion khook cannot evaluate at import"
	}
	env := &knownEnv{t: t}
	s, err := expand.Literal(&expand.Config{Env: env}, &syntax.Word{Parts: []syntax.WordPart{pe}})
	switch {
	case env.unknown != "" && pe.Exp != nil && (pe.Exp.Op == syntax.AlternateUnset || pe.Exp.Op == syntax.AlternateUnsetOrNull):
		// ${GIT_TOKEN:+  password: $GIT_TOKEN}: a line only when it is set
		return "", false, "${" + pe.Param.Value + pe.Exp.Op.String() + "…} writes its text only when $" + pe.Param.Value + " is set, which only the run knows; write the text with ${" + pe.Param.Value + "} itself, a khook variable"
	case env.unknown != "":
		return "", false, "$" + env.unknown + " is only known when the script runs"
	case err != nil:
		return "", false, "an expansion khook cannot evaluate at import"
	}
	return s, true, ""
}

// arithm is $((days * 24 * 60 * 60)): bash's arithmetic (expand's) over
// the values the script set at import.
func (t *translator) arithm(x *syntax.ArithmExp) (string, bool, string) {
	n, ok, why := t.arithmX(x.X)
	if !ok {
		return "", false, why
	}
	return strconv.Itoa(n), true, ""
}

// arithmX is an arithmetic expression's value over what the script set;
// why says what stops it being known at import.
func (t *translator) arithmX(x syntax.ArithmExpr) (int, bool, string) {
	env := &knownEnv{t: t}
	n, err := expand.Arithm(&expand.Config{Env: env}, x)
	switch {
	case env.unknown != "":
		return 0, false, "$" + env.unknown + " is only known when the script runs"
	case err != nil:
		return 0, false, "arithmetic khook cannot evaluate at import: " + err.Error()
	}
	return n, true, ""
}

// arithText is the value of text bash evaluates as arithmetic (a side of
// [[ a -eq b ]]): i, i+1, a name whose value is a name.
func (t *translator) arithText(text string) (int, error) {
	x, err := syntax.NewParser().Arithmetic(strings.NewReader(text))
	if err != nil || x == nil {
		return 0, errors.New("not arithmetic")
	}
	n, ok, why := t.arithmX(x)
	if !ok {
		return 0, errors.New(why)
	}
	return n, nil
}

// knownEnv gives expand the variables whose values the script set at
// import, and remembers the first it asked for that only the run knows.
type knownEnv struct {
	t       *translator
	unknown string
}

func (e *knownEnv) Get(name string) expand.Variable {
	if _, set := e.t.vars[name]; name == "IFS" && !set {
		return expand.Variable{Set: true, Kind: expand.String, Str: " \t\n"} // bash's own
	}
	if v := e.t.vars[name]; v != nil && v.decl == nil && v.array && v.val == "" && !slices.ContainsFunc(v.list, func(s string) bool { return strings.Contains(s, "${") }) {
		// ${#A[@]}, ${A[@]:1}: the array the script built (trial 46zy's D3)
		return expand.Variable{Set: true, Kind: expand.Indexed, List: slices.Clone(v.list)}
	}
	val, set, ok := e.t.knownValue(name)
	if !ok {
		if e.unknown == "" {
			e.unknown = name
		}
		return expand.Variable{}
	}
	if !set {
		return expand.Variable{}
	}
	return expand.Variable{Set: true, Kind: expand.String, Str: val}
}

func (e *knownEnv) Each(func(name string, vr expand.Variable) bool) {}

// knownValue is a variable's value when the script set it at import (set:
// false, ok: true for one known to be unset, as $2 of a function given
// one argument); ok is false when only the run knows it.
func (t *translator) knownValue(name string) (val string, set, ok bool) {
	switch name {
	case "0", "BASH_SOURCE":
		return t.scriptPath, true, true
	case "PWD":
		return t.cwd, true, true
	}
	if n, err := strconv.Atoi(name); err == nil {
		if t.argsRest > 0 || !(t.inFunc || t.argsGiven) {
			return "", false, false
		}
		if n >= 1 && n-1 < len(t.args) {
			return t.args[n-1], true, !strings.Contains(t.args[n-1], "${")
		}
		return "", false, true
	}
	v, isSet := t.vars[name]
	switch {
	case !isSet:
		return "", false, false
	case v.decl != nil:
		return "", false, false
	case v.array && len(v.list) > 0 && v.val == "":
		val = v.list[0]
	default:
		val = v.val
	}
	return val, true, !strings.Contains(val, "${")
}
