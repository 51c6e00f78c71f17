package objdiff

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/redact"
)

// YAMLError is an object a diff cannot print; the caller names it (the
// plan as kubectl does, "deployment.apps/web in namespace demo").
type YAMLError struct {
	Object *unstructured.Unstructured
	Err    error
}

func (e *YAMLError) Error() string {
	return fmt.Sprintf("cannot print %s %s as YAML: %v", e.Object.GetKind(), e.Object.GetName(), e.Err)
}

// forDiff returns u as the change decision compares it (Normalize:
// no server bookkeeping, status or last-applied annotation; a Secret's
// stringData as data), with Secret values masked: a diff shows that a
// secret value changed, never the value.
func forDiff(u *unstructured.Unstructured, masks map[string]string) *unstructured.Unstructured {
	if u == nil {
		return nil
	}
	u = Normalize(u, Options{})
	if u.GetKind() == "Secret" && (u.GetAPIVersion() == "v1" || u.GetAPIVersion() == "") {
		maskSecret(u, masks)
	}
	return u
}

// maskSecret replaces every data/stringData value with *** — or, so that a
// changed value still shows as a change, *** plus a short marker that
// differs between the two sides of a diff (masks maps a value to its marker).
func maskSecret(u *unstructured.Unstructured, masks map[string]string) {
	for _, field := range []string{"data", "stringData"} {
		m, ok, _ := unstructured.NestedMap(u.Object, field)
		if !ok {
			continue
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys) // markers numbered in a stable order
		for _, k := range keys {
			m[k] = maskFor(fmt.Sprint(m[k]), masks)
		}
		_ = unstructured.SetNestedMap(u.Object, m, field)
	}
}

func maskFor(v string, masks map[string]string) string {
	if masks == nil {
		return redact.Mask
	}
	if mk, ok := masks[v]; ok {
		return mk
	}
	mk := redact.Mask
	if n := len(masks); n > 0 {
		mk = fmt.Sprintf("%s (value %d)", redact.Mask, n+1)
	}
	masks[v] = mk
	return mk
}

// objectDiff is the unified diff of one object from live to desired; a nil
// side is an absent object. Empty when they are equal.
// opts are the step's ignore rules: both sides as the change decision
// compares them (Decide), so an ignored field is no line of the diff.
// A field whose planned value holds a secret r knows (a value decrypted
// from a sops file, say) is masked on both sides (maskSecretPaths).
func Text(title string, live, desired *unstructured.Unstructured, opts Options, r *redact.Redactor) (string, error) {
	masks := map[string]string{}
	if live != nil && desired != nil {
		c := Decide(live, desired, opts)
		live, desired = c.Live, c.After
	} else {
		live, desired = Normalize(live, opts), Normalize(desired, opts)
	}
	if live != nil && desired != nil && r != nil && len(r.Values()) > 0 {
		live, desired = live.DeepCopy(), desired.DeepCopy()
		maskSecretPaths(live, desired, r, masks)
	}
	a, err := toYAML(forDiff(live, masks))
	if err != nil {
		return "", err
	}
	b, err := toYAML(forDiff(desired, masks))
	if err != nil {
		return "", err
	}
	return unified(title, a, b)
}

// maskSecretPaths masks each string field of desired that holds a secret,
// and the live value at the same path: the old value of a field that now
// holds a secret is one too (it was decrypted by an earlier run, not this
// one), and markers that differ keep a changed value a change.
func maskSecretPaths(live, desired *unstructured.Unstructured, r *redact.Redactor, masks map[string]string) {
	// secret reports whether a planned leaf holds a secret; the live side is
	// masked first so it reads "*** → *** (value 2)".
	secret := func(d any) (string, bool) {
		s, ok := d.(string)
		return s, ok && r.String(s) != s
	}
	var walk func(l, d any)
	walk = func(l, d any) {
		switch d := d.(type) {
		case map[string]any:
			lm, _ := l.(map[string]any)
			keys := make([]string, 0, len(d))
			for k := range d {
				keys = append(keys, k)
			}
			sort.Strings(keys) // markers numbered in a stable order
			for _, k := range keys {
				v := d[k]
				if s, ok := secret(v); ok {
					if ls, ok := lm[k].(string); ok {
						lm[k] = maskFor(ls, masks)
					}
					d[k] = maskFor(s, masks)
					continue
				}
				walk(lm[k], v)
			}
		case []any:
			ls, _ := l.([]any)
			for i, v := range d {
				var lv any
				if i < len(ls) {
					lv = ls[i]
				}
				if s, ok := secret(v); ok {
					if old, ok := lv.(string); ok {
						ls[i] = maskFor(old, masks)
					}
					d[i] = maskFor(s, masks)
					continue
				}
				walk(lv, v)
			}
		}
	}
	walk(live.Object, desired.Object)
}

func toYAML(u *unstructured.Unstructured) (string, error) {
	if u == nil {
		return "", nil
	}
	out, err := yaml.Marshal(u.Object)
	if err != nil {
		return "", &YAMLError{Object: u, Err: err}
	}
	return string(out), nil
}

// unified renders a unified diff with three lines of context.
func unified(title, a, b string) (string, error) {
	if a == b {
		return "", nil
	}
	from, to := "live/"+title, "planned/"+title
	if a == "" {
		from = "/dev/null"
	}
	if b == "" {
		to = "/dev/null"
	}
	return difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: lines(a), B: lines(b),
		FromFile: from, ToFile: to, Context: 3,
	})
}

// lines splits text for difflib; an absent object has no lines at all
// (difflib would otherwise print one empty context line).
func lines(s string) []string {
	if s == "" {
		return nil
	}
	// SplitLines turns a final newline into an extra empty line.
	return difflib.SplitLines(strings.TrimSuffix(s, "\n"))
}

// Join concatenates object diffs in order.
func Join(parts []string) string {
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		b.WriteString(p)
		if !strings.HasSuffix(p, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// Title names an object in a diff header: "v1/ConfigMap/demo/settings".
func Title(u *unstructured.Unstructured) string {
	parts := []string{u.GetAPIVersion(), u.GetKind()}
	if ns := u.GetNamespace(); ns != "" {
		parts = append(parts, ns)
	}
	return strings.Join(append(parts, u.GetName()), "/")
}
