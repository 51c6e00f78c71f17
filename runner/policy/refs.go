package policy

import (
	"strings"

	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/parser"
	admissionv1 "k8s.io/api/admissionregistration/v1"
)

// refs is what a policy's expressions read of the request, parsed once:
// what decides whether an offline plan can judge an object by it.
type refs struct {
	oldObject bool // oldObject or request.oldObject: only an update has one
	operation bool // request.operation: an offline plan cannot tell create from update
	user      bool // request.userInfo or authorizer: the plan's identity
	namespace bool // namespaceObject: the namespace's labels and fields
	// paths are the object's fields the expressions read ("spec",
	// "replicas"; "[]" for each element of a list or value of a map).
	paths [][]string
}

var celParser, _ = parser.NewParser(parser.Macros(parser.AllMacros...), parser.EnableOptionalSyntax(true), parser.MaxRecursionDepth(250))

// policyRefs walks every expression of the policy: variables first (a
// variable that is a field of the object binds its name to that path),
// then match conditions, validations, messages and audit annotations.
func policyRefs(p *admissionv1.ValidatingAdmissionPolicy) refs {
	var r refs
	vars := map[string][]string{}
	walk := func(expr string) ast.Expr {
		if expr == "" {
			return nil
		}
		a, errs := celParser.Parse(common.NewTextSource(expr))
		if len(errs.GetErrors()) > 0 || a == nil {
			return nil
		}
		w := &refWalk{r: &r, vars: vars, bound: map[string][]string{}}
		w.walk(a.Expr())
		return a.Expr()
	}
	for _, v := range p.Spec.Variables {
		if e := walk(v.Expression); e != nil {
			if path, ok := (&refWalk{vars: vars, bound: map[string][]string{}}).path(e); ok {
				vars[v.Name] = path
			}
		}
	}
	for _, m := range p.Spec.MatchConditions {
		walk(m.Expression)
	}
	for _, v := range p.Spec.Validations {
		walk(v.Expression)
		walk(v.MessageExpression)
	}
	for _, a := range p.Spec.AuditAnnotations {
		walk(a.ValueExpression)
	}
	return r
}

type refWalk struct {
	r     *refs
	vars  map[string][]string // variables.NAME bound to an object path
	bound map[string][]string // comprehension variables bound to a path
}

// path is the object field path e reads, when e is a chain of selections
// (plain, optional or indexed) from object, a bound variable or an
// iteration variable over such a path.
func (w *refWalk) path(e ast.Expr) ([]string, bool) {
	switch e.Kind() {
	case ast.IdentKind:
		if e.AsIdent() == "object" {
			return []string{}, true
		}
		p, ok := w.bound[e.AsIdent()]
		return p, ok
	case ast.SelectKind:
		s := e.AsSelect()
		if s.Operand().Kind() == ast.IdentKind && s.Operand().AsIdent() == "variables" {
			p, ok := w.vars[s.FieldName()]
			return p, ok
		}
		if p, ok := w.path(s.Operand()); ok {
			return append(append([]string{}, p...), s.FieldName()), true
		}
	case ast.CallKind:
		c := e.AsCall()
		if len(c.Args()) != 2 || (c.FunctionName() != "_?._" && c.FunctionName() != "_[_]" && c.FunctionName() != "_[?_]") {
			return nil, false
		}
		p, ok := w.path(c.Args()[0])
		if !ok {
			return nil, false
		}
		key := "[]"
		if arg := c.Args()[1]; arg.Kind() == ast.LiteralKind {
			if s, isStr := arg.AsLiteral().(types.String); isStr {
				key = string(s)
			}
		}
		return append(append([]string{}, p...), key), true
	}
	return nil, false
}

func (w *refWalk) walk(e ast.Expr) {
	if e == nil {
		return
	}
	if p, ok := w.path(e); ok && len(p) > 0 {
		w.r.paths = append(w.r.paths, p)
	}
	switch e.Kind() {
	case ast.IdentKind:
		switch e.AsIdent() {
		case "oldObject":
			w.r.oldObject = true
		case "authorizer":
			w.r.user = true
		case "namespaceObject":
			w.r.namespace = true
		}
	case ast.SelectKind:
		s := e.AsSelect()
		if s.Operand().Kind() == ast.IdentKind && s.Operand().AsIdent() == "request" {
			switch s.FieldName() {
			case "userInfo":
				w.r.user = true
			case "operation":
				w.r.operation = true
			case "oldObject":
				w.r.oldObject = true
			}
		}
		w.walk(s.Operand())
	case ast.CallKind:
		c := e.AsCall()
		w.walk(c.Target())
		for _, a := range c.Args() {
			w.walk(a)
		}
	case ast.ListKind:
		for _, x := range e.AsList().Elements() {
			w.walk(x)
		}
	case ast.MapKind:
		for _, x := range e.AsMap().Entries() {
			w.walk(x.AsMapEntry().Key())
			w.walk(x.AsMapEntry().Value())
		}
	case ast.StructKind:
		for _, x := range e.AsStruct().Fields() {
			w.walk(x.AsStructField().Value())
		}
	case ast.ComprehensionKind:
		w.comprehension(e.AsComprehension())
	}
}

// comprehension binds the iteration variable to the path of the range
// (each element), walks the loop and unbinds it.
func (w *refWalk) comprehension(c ast.ComprehensionExpr) {
	w.walk(c.IterRange())
	w.walk(c.AccuInit())
	if p, ok := w.path(c.IterRange()); ok {
		saved, had := w.bound[c.IterVar()]
		w.bound[c.IterVar()] = append(append([]string{}, p...), "[]")
		defer func() {
			if had {
				w.bound[c.IterVar()] = saved
			} else {
				delete(w.bound, c.IterVar())
			}
		}()
	}
	w.walk(c.LoopCondition())
	w.walk(c.LoopStep())
	w.walk(c.Result())
}

// absentPath is the first path the policy reads that the object leaves
// out and its kind has (inSchema), as the policy writes it
// ("spec.containers[].readinessProbe"); "" when there is none.
func (r refs) absentPath(obj map[string]any, has func([]string) bool) string {
	for _, p := range r.paths {
		if p[0] != "metadata" && p[0] != "apiVersion" && p[0] != "kind" && absent(obj, p) && has(p) {
			return strings.ReplaceAll(strings.Join(p, "."), ".[]", "[]")
		}
	}
	return ""
}

// absent: some step of the path is missing (for "[]", in any element).
// A value of another type than the path expects is not absence.
func absent(v any, path []string) bool {
	if len(path) == 0 {
		return false
	}
	switch x := v.(type) {
	case map[string]any:
		if path[0] == "[]" {
			for _, e := range x {
				if absent(e, path[1:]) {
					return true
				}
			}
			return false
		}
		e, ok := x[path[0]]
		return !ok || e == nil || absent(e, path[1:])
	case []any:
		if path[0] != "[]" {
			return false
		}
		for _, e := range x {
			if absent(e, path[1:]) {
				return true
			}
		}
	}
	return false
}
