package spec

import (
	"fmt"
	"strings"

	"github.com/google/cel-go/cel"

	"github.com/khook/khook/celenv"
)

// The wait forms KubeVela's module hooks brought: ready (kstatus's Current,
// with a fallback for kinds kstatus does not know) and cel=<expr>, a CEL
// expression over each object.
const (
	WaitReady = "ready"
	WaitCEL   = "cel"
)

func init() { waitForms[WaitCEL] = parseCELWait }

func parseCELWait(arg string) (WaitFor, error) {
	expr := strings.TrimSpace(arg)
	if expr == "" {
		return WaitFor{}, fmt.Errorf("cel= has no expression: write cel=object.status.readyReplicas == object.spec.replicas")
	}
	if _, err := CompileObjectCEL(expr); err != nil {
		return WaitFor{}, fmt.Errorf("cel=%s: %v", expr, err)
	}
	return WaitFor{Kind: WaitCEL, CEL: expr}, nil
}

// objectEnv declares one variable, object: the watched object as a map
// from field names to dynamically typed values, as the API server sends it.
var objectEnv = celenv.New(celenv.ConditionCost, nil, cel.Variable("object", cel.MapType(cel.StringType, cel.DynType)))

// CompileObjectCEL type-checks a cel= wait expression and returns the
// program the executors run against each object. The expression must yield
// a bool; it sees one variable, object.
func CompileObjectCEL(expr string) (cel.Program, error) {
	env, err := objectEnv.Get()
	if err != nil {
		return nil, err
	}
	ast, iss := env.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return nil, fmt.Errorf("invalid expression: %s; the expression sees one variable, object (object.status.readyReplicas)", celenv.IssueText(iss))
	}
	// A dyn result (object.status.ready) is refused too: write == true.
	if out := ast.OutputType(); !out.IsExactType(cel.BoolType) {
		return nil, fmt.Errorf("the expression evaluates to %s, not a bool: compare it, e.g. object.status.readyReplicas == object.spec.replicas or object.status.ready == true", out)
	}
	return objectEnv.Program(ast)
}
