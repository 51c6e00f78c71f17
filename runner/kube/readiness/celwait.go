package readiness

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/spec"
)

// parseCEL compiles cel=<expr> with the environment spec type-checks it in,
// so what validated at load is what runs.
func parseCEL(whole, expr string) (Condition, error) {
	expr = strings.TrimSpace(expr)
	if expr == "" {
		return Condition{}, fmt.Errorf("for %q has no expression: write cel=object.status.readyReplicas == object.spec.replicas", whole)
	}
	prg, err := spec.CompileObjectCEL(expr)
	if err != nil {
		return Condition{}, fmt.Errorf("for %q: %v", whole, err)
	}
	return Condition{Type: ForCEL, CEL: expr, program: prg}, nil
}

// metCEL evaluates the expression against one object. A field the object
// does not have yet (object.status.readyReplicas before the controller has
// written it) is "not yet", not a failure: status fields appear over time.
func (c Condition) metCEL(obj *unstructured.Unstructured) (bool, string) {
	prg := c.program
	if prg == nil { // a Condition built by hand
		parsed, err := parseCEL("cel="+c.CEL, c.CEL)
		if err != nil {
			return false, err.Error()
		}
		prg = parsed.program
	}
	out, _, err := prg.Eval(map[string]any{"object": obj.Object})
	if err != nil {
		if key, ok := strings.CutPrefix(err.Error(), "no such key: "); ok {
			return false, "field " + key + " not set yet"
		}
		return false, "expression error: " + err.Error()
	}
	if b, ok := out.Value().(bool); ok && b {
		return true, ""
	}
	return false, "expression is " + fmt.Sprint(out.Value())
}
