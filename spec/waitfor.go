package spec

import (
	"fmt"
	"strings"

	"k8s.io/client-go/util/jsonpath"
)

// Wait condition kinds (WaitFor.Kind).
const (
	WaitCondition = "condition"
	WaitJSONPath  = "jsonpath"
	WaitDelete    = "delete"
)

// WaitFor is a parsed wait.for / apply.waitFor condition.
type WaitFor struct {
	Kind string // condition | jsonpath | delete | ready | cel
	// Condition is the condition type for condition=Name[=value].
	Condition string
	// JSONPath is the expression in braced form ("{.status.phase}"), ready
	// for k8s.io/client-go/util/jsonpath.
	JSONPath string
	// Value is the wanted value; HasValue tells "=value" was written. For
	// conditions without a value the wanted status is "True".
	Value    string
	HasValue bool
	// CEL is the expression of cel=<expr>, checked to yield a bool.
	CEL string
}

func (w WaitFor) String() string {
	switch w.Kind {
	case WaitDelete, WaitReady:
		return w.Kind
	case WaitCEL:
		return "cel=" + w.CEL
	case WaitCondition:
		if w.HasValue {
			return "condition=" + w.Condition + "=" + w.Value
		}
		return "condition=" + w.Condition
	}
	if w.HasValue {
		return "jsonpath=" + w.JSONPath + "=" + w.Value
	}
	return "jsonpath=" + w.JSONPath
}

// waitForms is the grammar's extension point: one parser per "form=" prefix
// (or bare keyword). Future forms ("ready", "cel=<expr>") are added here, and
// to waitForPattern in the schema.
var waitForms = map[string]func(arg string) (WaitFor, error){
	WaitCondition: parseConditionWait,
	WaitJSONPath:  parseJSONPathWait,
}

// WaitForHint is the one-line grammar summary used in messages.
const WaitForHint = "write ready, condition=<Name>[=<value>], jsonpath=<expr>[=<value>], cel=<expr> or delete"

// ApplyWaitForHint is WaitForHint without delete, for apply.waitFor.
const ApplyWaitForHint = "write ready, condition=<Name>[=<value>], jsonpath=<expr>[=<value>] or cel=<expr>"

// ParseWaitFor parses the wait.for grammar, kubectl wait's --for forms
// condition=Name[=value], jsonpath=<expr>[=value] and delete, plus ready and
// cel=<expr>. allowDelete is false for apply.waitFor.
func ParseWaitFor(s string, allowDelete bool) (WaitFor, error) {
	if s == WaitDelete {
		if !allowDelete {
			return WaitFor{}, fmt.Errorf("%q is not allowed here: an apply step cannot wait for the objects it applied to be deleted", s)
		}
		return WaitFor{Kind: WaitDelete}, nil
	}
	if s == WaitReady {
		return WaitFor{Kind: WaitReady}, nil
	}
	form, arg, ok := strings.Cut(s, "=")
	parse := waitForms[form]
	if !ok || parse == nil {
		return WaitFor{}, fmt.Errorf("%q is not a wait condition", s)
	}
	return parse(arg)
}

func parseConditionWait(arg string) (WaitFor, error) {
	name, value, hasValue := strings.Cut(arg, "=")
	if name == "" || strings.ContainsAny(name, " \t") {
		return WaitFor{}, fmt.Errorf("condition=%s: the condition name must be one word, e.g. condition=Ready", arg)
	}
	if hasValue && value == "" {
		return WaitFor{}, fmt.Errorf("condition=%s: empty value after \"=\"", arg)
	}
	return WaitFor{Kind: WaitCondition, Condition: name, Value: value, HasValue: hasValue}, nil
}

// parseJSONPathWait splits <expr>[=<value>]: a braced expression ends at its
// closing brace (so filters may contain "="); an unbraced one at the first
// "=". .status.phase, status.phase and {.status.phase} are equivalent.
func parseJSONPathWait(arg string) (WaitFor, error) {
	var expr, value string
	var hasValue bool
	if strings.HasPrefix(arg, "{") {
		end := closingBrace(arg)
		if end < 0 {
			return WaitFor{}, fmt.Errorf("jsonpath=%s: unbalanced braces", arg)
		}
		expr, rest := arg[:end+1], arg[end+1:]
		if rest != "" && !strings.HasPrefix(rest, "=") {
			return WaitFor{}, fmt.Errorf("jsonpath=%s: unexpected %q after the expression", arg, rest)
		}
		if rest != "" {
			value, hasValue = rest[1:], true
		}
		return finishJSONPath(arg, expr, value, hasValue)
	}
	expr, value, hasValue = strings.Cut(arg, "=")
	if strings.ContainsAny(expr, "?(") {
		return WaitFor{}, fmt.Errorf("jsonpath=%s: filters need the braced form, e.g. jsonpath={.status.conditions[?(@.type==\"Ready\")].status}=True", arg)
	}
	expr = strings.TrimPrefix(expr, ".")
	return finishJSONPath(arg, "{."+expr+"}", value, hasValue)
}

func finishJSONPath(arg, expr, value string, hasValue bool) (WaitFor, error) {
	if expr == "{.}" || expr == "{}" {
		return WaitFor{}, fmt.Errorf("jsonpath=%s: empty expression", arg)
	}
	if hasValue && value == "" {
		return WaitFor{}, fmt.Errorf("jsonpath=%s: empty value after \"=\"", arg)
	}
	if _, err := jsonpath.Parse("waitFor", expr); err != nil {
		return WaitFor{}, fmt.Errorf("jsonpath=%s: %v", arg, err)
	}
	return WaitFor{Kind: WaitJSONPath, JSONPath: expr, Value: value, HasValue: hasValue}, nil
}

// closingBrace returns the index of the brace closing s[0], skipping quoted text.
func closingBrace(s string) int {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// Condition is apply.waitFor parsed (nil when none is set): validation
// checks it with this method and the runner builds from it, so the two
// cannot read the same text differently.
func (a *Apply) Condition() (*WaitFor, error) {
	if a.WaitFor == "" {
		return nil, nil
	}
	w, err := ParseWaitFor(a.WaitFor, false)
	if err != nil {
		return nil, err
	}
	return &w, nil
}

// Condition is wait.for parsed, as validation checked it.
func (w *Wait) Condition() (WaitFor, error) { return ParseWaitFor(w.For, true) }
