package readiness

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/cel-go/cel"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/jsonpath"

	"github.com/khook/khook/spec"
)

// ConditionType is the form of a wait.for expression.
type ConditionType int

// The wait.for forms, as kubectl wait --for spells them.
const (
	ForCondition ConditionType = iota + 1 // condition=<Name>[=<value>]
	ForJSONPath                           // jsonpath=<expr>[=<value>]
	ForDelete                             // delete
	ForReady                              // ready: kstatus Current, see Ready
	ForCEL                                // cel=<expr>, see celwait.go
)

// Condition is a parsed wait.for / apply.waitFor expression.
type Condition struct {
	Type ConditionType
	// Name is the condition type for ForCondition; Expr the normalised
	// jsonpath ("{.status.phase}") for ForJSONPath.
	Name string
	Expr string
	// Value is what the condition status or jsonpath result must equal;
	// HasValue false means "True" for conditions and "any non-empty result"
	// for jsonpath.
	Value    string
	HasValue bool
	// CEL is the expression of cel=<expr>.
	CEL string

	parsed  *jsonpath.JSONPath
	program cel.Program
}

// NewCondition builds the runtime condition from the wait.for value the
// spec parsed (spec.ParseWaitFor is the one grammar): it compiles the
// jsonpath or CEL expression and keeps everything else as parsed.
func NewCondition(w spec.WaitFor) (Condition, error) {
	switch w.Kind {
	case spec.WaitDelete:
		return Condition{Type: ForDelete}, nil
	case spec.WaitReady:
		return Condition{Type: ForReady}, nil
	case spec.WaitCEL:
		return parseCEL("cel="+w.CEL, w.CEL)
	case spec.WaitCondition:
		return Condition{Type: ForCondition, Name: w.Condition, Value: w.Value, HasValue: w.HasValue}, nil
	case spec.WaitJSONPath:
		jp := jsonpath.New("for")
		if err := jp.Parse(w.JSONPath); err != nil {
			return Condition{}, fmt.Errorf("for %q: invalid jsonpath expression %s: %v", w, w.JSONPath, err)
		}
		return Condition{Type: ForJSONPath, Expr: w.JSONPath, Value: w.Value, HasValue: w.HasValue, parsed: jp}, nil
	}
	return Condition{}, fmt.Errorf("for %q: unknown condition; %s", w, spec.WaitForHint)
}

// String renders the condition back in wait.for syntax.
func (c Condition) String() string {
	switch c.Type {
	case ForDelete:
		return "delete"
	case ForReady:
		return "ready"
	case ForCEL:
		return "cel=" + c.CEL
	case ForCondition:
		if c.HasValue {
			return "condition=" + c.Name + "=" + c.Value
		}
		return "condition=" + c.Name
	case ForJSONPath:
		if c.HasValue {
			return "jsonpath=" + c.Expr + "=" + c.Value
		}
		return "jsonpath=" + c.Expr
	}
	return "?"
}

// Met reports whether one object meets the condition and, when it does not,
// why in a few words ("Ready=False: ContainersNotReady", "no Ready condition
// yet", ".status.phase is Pending"). ForDelete is never met by an object
// that still exists.
func (c Condition) Met(obj *unstructured.Unstructured) (bool, string) {
	switch c.Type {
	case ForDelete:
		return false, "still exists"
	case ForCondition:
		return c.metCondition(obj)
	case ForJSONPath:
		return c.metJSONPath(obj)
	case ForReady:
		return Ready(obj)
	case ForCEL:
		return c.metCEL(obj)
	}
	return false, "unknown condition"
}

func (c Condition) metCondition(obj *unstructured.Unstructured) (bool, string) {
	want := "True"
	if c.HasValue {
		want = c.Value
	}
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, raw := range conds {
		cond, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		if t, _ := cond["type"].(string); !strings.EqualFold(t, c.Name) {
			continue
		}
		status, _ := cond["status"].(string)
		// A condition observed for an older generation says nothing yet.
		if og, ok := asInt64(cond["observedGeneration"]); ok && og < obj.GetGeneration() {
			return false, fmt.Sprintf("%s condition not yet observed for generation %d", c.Name, obj.GetGeneration())
		}
		if strings.EqualFold(status, want) {
			return true, ""
		}
		why := c.Name + "=" + status
		if r, _ := cond["reason"].(string); r != "" {
			why += ": " + r
		}
		return false, why
	}
	return false, "no " + c.Name + " condition yet"
}

func asInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case float64:
		return int64(n), true
	}
	return 0, false
}

func (c Condition) metJSONPath(obj *unstructured.Unstructured) (bool, string) {
	jp := c.parsed
	if jp == nil { // a Condition built by hand
		jp = jsonpath.New("for")
		if err := jp.Parse(c.Expr); err != nil {
			return false, "invalid jsonpath " + c.Expr
		}
	}
	results, err := jp.FindResults(obj.Object)
	if err != nil {
		return false, c.Expr + " not set yet"
	}
	var got []string
	for _, rs := range results {
		for _, v := range rs {
			s, empty := formatValue(v)
			if c.HasValue && s == c.Value {
				return true, ""
			}
			if !c.HasValue && !empty {
				return true, ""
			}
			got = append(got, s)
		}
	}
	switch {
	case len(got) == 0:
		return false, c.Expr + " not set yet"
	case c.HasValue:
		return false, c.Expr + " is " + strings.Join(got, ",")
	}
	return false, c.Expr + " is empty"
}

// formatValue renders a jsonpath result as kubectl prints it and says
// whether it is empty (nil, "", an empty list or map).
func formatValue(v reflect.Value) (string, bool) {
	for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "", true
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.String:
		return v.String(), v.Len() == 0
	case reflect.Map, reflect.Slice, reflect.Array:
		b, err := json.Marshal(v.Interface())
		if err != nil {
			return fmt.Sprint(v.Interface()), v.Len() == 0
		}
		return string(b), v.Len() == 0
	case reflect.Invalid:
		return "", true
	}
	return fmt.Sprint(v.Interface()), false
}

// Evaluate decides a condition over every object a target currently
// matches. Nothing matched is success for delete and "not yet" otherwise.
// pending describes what is not met yet ("2 of 3 not ready: pod/a
// (Ready=False: ContainersNotReady), pod/b (...)").
func (c Condition) Evaluate(objs []*unstructured.Unstructured) (done bool, pending string) {
	if c.Type == ForDelete {
		if len(objs) == 0 {
			return true, ""
		}
		return false, fmt.Sprintf("%d still present: %s", len(objs), listNames(objs, nil))
	}
	if len(objs) == 0 {
		return false, "nothing matches yet"
	}
	var notMet []*unstructured.Unstructured
	why := map[*unstructured.Unstructured]string{}
	for _, o := range objs {
		if ok, reason := c.Met(o); !ok {
			notMet = append(notMet, o)
			why[o] = reason
		}
	}
	if len(notMet) == 0 {
		return true, ""
	}
	return false, fmt.Sprintf("%d of %d not ready: %s", len(notMet), len(objs), listNames(notMet, why))
}

// Predicate decides over every object the target currently matches; pending
// says what is not met yet, for the timeout message. A non-nil err ends the
// wait at once (a rollout that exceeded its progress deadline).
type Predicate func(objs []*unstructured.Unstructured) (done bool, pending string, err error)

// Predicate adapts the condition to a wait (runner/kube/wait's For).
func (c Condition) Predicate() Predicate {
	return func(objs []*unstructured.Unstructured) (bool, string, error) {
		done, pending := c.Evaluate(objs)
		return done, pending, nil
	}
}

// maxListed bounds how many objects a pending message names.
const maxListed = 5

func listNames(objs []*unstructured.Unstructured, why map[*unstructured.Unstructured]string) string {
	var b strings.Builder
	for i, o := range objs {
		if i == maxListed {
			fmt.Fprintf(&b, ", and %d more", len(objs)-maxListed)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strings.ToLower(o.GetKind()) + "/" + o.GetName())
		if r := why[o]; r != "" {
			b.WriteString(" (" + r + ")")
		}
	}
	return b.String()
}
