package spec

import (
	"fmt"
	"path"
	"strings"

	"github.com/itchyny/gojq"
)

// drift: values of a step.
const (
	DriftFail = "fail"
	DriftWarn = "warn"
)

// IgnoreRule names fields khook leaves to another owner: they are left out
// of plan diffs, drift and the changes output, and an apply to an object
// that exists does not revert them (a create still sets them).
type IgnoreRule struct {
	// Target selects the objects the rule applies to; nil is every object.
	Target *IgnoreTarget `json:"target,omitempty"`
	// JSONPointers are RFC 6901 pointers (/spec/replicas).
	JSONPointers []string `json:"jsonPointers,omitempty"`
	// JQPaths are jq path expressions (gojq): .webhooks[]?.clientConfig.caBundle.
	JQPaths []string `json:"jqPaths,omitempty"`
	// Managers are field managers (managedFields) whose fields are ignored.
	Managers []string `json:"managers,omitempty"`
}

// IgnoreTarget selects objects; every key is optional and a glob
// (path.Match: *, ?, [a-z]).
type IgnoreTarget struct {
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
}

// ignoreFor returns the rules that apply to a step's objects: the spec's,
// then the step's own.
func (s *Spec) ignoreFor(st *Step) []IgnoreRule {
	if len(st.Ignore) == 0 {
		return s.Ignore
	}
	return append(append([]IgnoreRule(nil), s.Ignore...), st.Ignore...)
}

// DriftWarns reports whether drift in the step only warns.
func (st *Step) DriftWarns() bool { return st.Drift == DriftWarn }

// CompileJQPath compiles a jq path expression as khook evaluates it:
// path(EXPR), so anything but a path is an error when it runs, and a
// syntax error is one now.
func CompileJQPath(expr string) (*gojq.Code, error) {
	if _, err := gojq.Parse(expr); err != nil {
		return nil, fmt.Errorf("is not a jq path expression: %v", err)
	}
	q, err := gojq.Parse("path(" + expr + ")")
	if err != nil {
		return nil, fmt.Errorf("is not a jq path expression: %v", err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, fmt.Errorf("is not a jq path expression: %v", err)
	}
	// A filter that is no path (.a | length) fails on any input: try null.
	it := code.Run(nil)
	for {
		v, ok := it.Next()
		if !ok {
			break
		}
		if err, ok := v.(error); ok && strings.Contains(err.Error(), "invalid path") {
			return nil, fmt.Errorf("is not a jq path expression: %v", err)
		}
	}
	return code, nil
}

// CheckJSONPointer says what is wrong with an RFC 6901 pointer ("" when
// nothing): it starts with / and ~ escapes only ~0 and ~1.
func CheckJSONPointer(p string) string {
	if !strings.HasPrefix(p, "/") {
		return fmt.Sprintf("%q is not a JSON pointer: it must start with / (e.g. /spec/replicas)", p)
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '~' && (i+1 == len(p) || (p[i+1] != '0' && p[i+1] != '1')) {
			return fmt.Sprintf("%q is not a JSON pointer: ~ must be followed by 0 (for ~) or 1 (for /)", p)
		}
	}
	return ""
}

// ignore checks a list of rules at path ("ignore", "steps.2.ignore").
func (v *validator) ignore(at string, rules []IgnoreRule) {
	for i, r := range rules {
		p := fmt.Sprintf("%s.%d", at, i)
		if len(r.JSONPointers)+len(r.JQPaths)+len(r.Managers) == 0 {
			v.errorf(p, "add jsonPointers:, jqPaths: or managers:", "the rule ignores nothing")
		}
		if t := r.Target; t != nil {
			for _, g := range [][2]string{{"group", t.Group}, {"kind", t.Kind}, {"namespace", t.Namespace}, {"name", t.Name}} {
				if _, err := path.Match(g[1], ""); err != nil {
					v.errorf(p+".target."+g[0], "use *, ? and [a-z] globs", "%q is not a valid glob", g[1])
				}
			}
		}
		for j, ptr := range r.JSONPointers {
			if msg := CheckJSONPointer(ptr); msg != "" {
				v.errorf(fmt.Sprintf("%s.jsonPointers.%d", p, j), "", "%s", msg)
			}
		}
		for j, q := range r.JQPaths {
			if _, err := CompileJQPath(q); err != nil {
				v.errorf(fmt.Sprintf("%s.jqPaths.%d", p, j), "write a path such as .spec.replicas or .webhooks[]?.clientConfig.caBundle", "%q %v", q, err)
			}
		}
		for j, m := range r.Managers {
			if strings.TrimSpace(m) == "" {
				v.errorf(fmt.Sprintf("%s.managers.%d", p, j), "", "a field manager name is required")
			}
		}
	}
}

// stepIgnore checks a step's ignore: and drift: fields.
func (v *validator) stepIgnore(st *Step) {
	p := st.Path
	if len(st.Ignore) > 0 || v.written(p+".ignore") {
		if t := st.Type(); t != TypeHelm && t != TypeApply {
			v.errorf(p+".ignore", "move the rule to the helm or apply step that applies the object", "ignore: applies to helm and apply steps, not to a %s step", t)
		} else {
			v.ignore(p+".ignore", st.Ignore)
		}
	}
	if v.written(p+".drift") && st.Drift != DriftFail && st.Drift != DriftWarn {
		v.errorf(p+".drift", "", "must be fail or warn, got %q", st.Drift)
	}
}

func ignoreSchema() obj {
	glob := func(what string) obj { return obj{"type": "string", "description": what + " (a glob: *, ?, [a-z])"} }
	list := func(what string) obj {
		return obj{"type": "array", "items": obj{"type": "string"}, "description": what}
	}
	return obj{
		"type":        "array",
		"description": "Ignore rules: the fields are left out of plan diffs, drift and changes, and an apply to an existing object leaves them to their current owner (a create still sets them)",
		"items": object(obj{
			"target": desc(object(obj{
				"group":     glob("API group (\"\" is the core group)"),
				"kind":      glob("Kind"),
				"namespace": glob("Namespace"),
				"name":      glob("Name"),
			}), "The objects the rule applies to (every key optional; none: every object)"),
			"jsonPointers": list("RFC 6901 JSON pointers, e.g. /spec/replicas"),
			"jqPaths":      list("jq path expressions (gojq), e.g. .webhooks[]?.clientConfig.caBundle"),
			"managers":     list("Field managers whose fields (managedFields) are ignored, e.g. cainjector"),
		}),
	}
}
