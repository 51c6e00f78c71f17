package spec

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"

	"github.com/khook/khook/celenv"
)

// whenEnv is the when: environment: the standard library, vars as
// map(string, string), and vars.get(name, default).
var whenEnv = celenv.New(celenv.ConditionCost, nil,
	cel.Variable("vars", varsType),
	cel.Function("get",
		cel.MemberOverload("vars_get_string_string", []*cel.Type{varsType, cel.StringType, cel.StringType}, cel.StringType,
			cel.FunctionBinding(func(args ...ref.Val) ref.Val {
				m, ok := args[0].(traits.Mapper)
				if !ok {
					return types.NewErr("get: receiver is not a map")
				}
				if v, found := m.Find(args[1]); found {
					return v
				}
				return args[2]
			}))),
)

var varsType = cel.MapType(cel.StringType, cel.StringType)

// Condition compiles and evaluates a when: expression against vars.
func Condition(expr string, vars map[string]string) (bool, error) {
	prg, err := compileWhen(expr)
	if err != nil {
		return false, err
	}
	return runWhen(prg, vars)
}

func compileWhen(expr string) (cel.Program, error) {
	env, err := whenEnv.Get()
	if err != nil {
		return nil, err
	}
	ast, iss := env.Compile(expr)
	if iss != nil && iss.Err() != nil {
		errs := iss.Errors()
		return nil, &exprError{msg: "invalid expression: " + celenv.IssueText(iss), line: errs[0].Location.Line(), col: errs[0].Location.Column()}
	}
	if !ast.OutputType().IsExactType(cel.BoolType) {
		return nil, fmt.Errorf("the expression evaluates to %s, not a bool", ast.OutputType())
	}
	return whenEnv.Program(ast)
}

// exprError is a compile error with the place in the expression (1-based
// line, 0-based column) of its first issue.
type exprError struct {
	msg       string
	line, col int
}

func (e *exprError) Error() string { return e.msg }

func runWhen(prg cel.Program, vars map[string]string) (bool, error) {
	if vars == nil {
		vars = map[string]string{}
	}
	out, _, err := prg.Eval(map[string]any{"vars": vars})
	if err != nil {
		if key, ok := strings.CutPrefix(err.Error(), "no such key: "); ok {
			return false, fmt.Errorf("variable %s is not set", key)
		}
		return false, err
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("the expression evaluated to %v, not a bool", out)
	}
	return b, nil
}

// evalWhen decides every step's when: once, at load time. A compile error
// points into the expression when it is written plainly on one line.
func evalWhen(s *Spec, pm *posMap) Problems {
	var probs Problems
	compiled := map[string]cel.Program{} // big specs repeat conditions
	for _, st := range s.Steps {
		if strings.TrimSpace(st.When) == "" {
			continue
		}
		prg, err := compiled[st.When], error(nil)
		if prg == nil {
			prg, err = compileWhen(st.When)
			compiled[st.When] = prg
		}
		ok := false
		if err == nil {
			ok, err = runWhen(prg, s.Vars)
		}
		if err != nil {
			hint := `conditions see vars only: vars.NAME, vars.get("NAME", "default"), has(vars.NAME)`
			if strings.Contains(err.Error(), "is not set") {
				hint = `use vars.get("NAME", "default") or has(vars.NAME) for optional variables`
			}
			pos := s.PosOf(st.Path + ".when")
			var ee *exprError
			if errors.As(err, &ee) && ee.line == 1 && pm != nil && pm.writtenAt(pos, st.When) {
				pos.Col += min(ee.col, utf8.RuneCountInString(st.When)) // CEL counts code points
			}
			probs = append(probs, Problem{Pos: pos, Path: st.Path + ".when", Message: fmt.Sprintf("%s.when: %v", st.Path, err), Hint: hint})
			continue
		}
		switch {
		case !ok:
			st.Skip = SkipWhen
		case st.Skip == SkipWhen:
			st.Skip = ""
		}
	}
	return probs
}
