package objdiff

import (
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"strconv"
	"strings"

	"github.com/itchyny/gojq"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/khook/khook/spec"
)

// ignoreRule is a spec ignore rule made ready to run.
type ignoreRule struct {
	target   spec.IgnoreTarget
	pointers [][]string
	jq       []*gojq.Code
	managers map[string]bool
}

// IgnoreOptions compiles a step's ignore rules (spec.Spec.IgnoreFor) into
// the change decision's options. The spec validated them: an error here
// names the rule that still fails.
func IgnoreOptions(rules []spec.IgnoreRule) (Options, error) {
	var opts Options
	for i, r := range rules {
		ir := ignoreRule{managers: map[string]bool{}}
		if r.Target != nil {
			ir.target = *r.Target
		}
		for _, p := range r.JSONPointers {
			if msg := spec.CheckJSONPointer(p); msg != "" {
				return opts, fmt.Errorf("ignore rule %d: %s", i+1, msg)
			}
			ir.pointers = append(ir.pointers, pointerTokens(p))
		}
		for _, q := range r.JQPaths {
			code, err := spec.CompileJQPath(q)
			if err != nil {
				return opts, fmt.Errorf("ignore rule %d: %q %v", i+1, q, err)
			}
			ir.jq = append(ir.jq, code)
		}
		for _, m := range r.Managers {
			ir.managers[m] = true
		}
		opts.ignore = append(opts.ignore, ir)
	}
	return opts, nil
}

func pointerTokens(p string) []string {
	toks := strings.Split(p, "/")[1:]
	for i, t := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks
}

func (r ignoreRule) matches(u *unstructured.Unstructured) bool {
	gvk := u.GroupVersionKind()
	for _, g := range [][2]string{{r.target.Group, gvk.Group}, {r.target.Kind, gvk.Kind}, {r.target.Namespace, u.GetNamespace()}, {r.target.Name, u.GetName()}} {
		if g[0] == "" {
			continue
		}
		if ok, _ := path.Match(g[0], g[1]); !ok {
			return false
		}
	}
	return true
}

// ignoredPaths returns the concrete paths (map keys and list indexes) of
// u's fields the rules ignore. Fields named by managers are those the
// managers own in owner's managedFields (the live object), found in u by
// their keys.
func (o Options) ignoredPaths(u, owner *unstructured.Unstructured) [][]any {
	if u == nil || len(o.ignore) == 0 {
		return nil
	}
	var out [][]any
	var doc any
	for _, r := range o.ignore {
		if !r.matches(u) {
			continue
		}
		for _, toks := range r.pointers {
			if p, ok := resolvePointer(u.Object, toks); ok {
				out = append(out, p)
			}
		}
		if len(r.jq) > 0 && doc == nil {
			doc = jsonDoc(u)
		}
		for _, code := range r.jq {
			it := code.Run(doc)
			for {
				v, ok := it.Next()
				if !ok {
					break
				}
				if p, ok := v.([]any); ok {
					out = append(out, p)
				}
			}
		}
		if len(r.managers) > 0 && owner != nil {
			for _, mf := range owner.GetManagedFields() {
				if !r.managers[mf.Manager] || mf.FieldsV1 == nil {
					continue
				}
				set := &fieldpath.Set{}
				if err := set.FromJSON(strings.NewReader(string(mf.FieldsV1.Raw))); err != nil {
					continue
				}
				set.Leaves().Iterate(func(fp fieldpath.Path) {
					if p, ok := resolveFieldPath(u.Object, fp); ok {
						out = append(out, p)
					}
				})
			}
		}
	}
	return out
}

// jsonDoc is u as plain JSON values, as gojq takes them.
func jsonDoc(u *unstructured.Unstructured) any {
	b, err := json.Marshal(u.Object)
	if err != nil {
		return nil
	}
	var doc any
	_ = json.Unmarshal(b, &doc)
	return doc
}

func resolvePointer(obj any, toks []string) ([]any, bool) {
	var out []any
	cur := obj
	for _, t := range toks {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[t]
			if !ok {
				return nil, false
			}
			out, cur = append(out, t), v
		case []any:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			out, cur = append(out, i), c[i]
		default:
			return nil, false
		}
	}
	return out, true
}

// resolveFieldPath finds a managedFields path in obj: a list item by its
// keys or value, whatever its index.
func resolveFieldPath(obj any, fp fieldpath.Path) ([]any, bool) {
	var out []any
	cur := obj
	for _, pe := range fp {
		switch {
		case pe.FieldName != nil:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			v, ok := m[*pe.FieldName]
			if !ok {
				return nil, false
			}
			out, cur = append(out, *pe.FieldName), v
		case pe.Index != nil:
			l, ok := cur.([]any)
			if !ok || *pe.Index >= len(l) {
				return nil, false
			}
			out, cur = append(out, *pe.Index), l[*pe.Index]
		default:
			l, ok := cur.([]any)
			if !ok {
				return nil, false
			}
			found := -1
			for i, item := range l {
				if itemMatches(item, pe) {
					found = i
					break
				}
			}
			if found < 0 {
				return nil, false
			}
			out, cur = append(out, found), l[found]
		}
	}
	return out, true
}

func itemMatches(item any, pe fieldpath.PathElement) bool {
	if pe.Value != nil {
		return value.Equals(*pe.Value, value.NewValueInterface(item))
	}
	m, ok := item.(map[string]any)
	if !ok || pe.Key == nil {
		return false
	}
	for _, f := range *pe.Key {
		v, ok := m[f.Name]
		if !ok || !value.Equals(f.Value, value.NewValueInterface(v)) {
			return false
		}
	}
	return true
}

// valueAt returns the value at a concrete path.
func valueAt(obj any, p []any) (any, bool) {
	cur := obj
	for _, e := range p {
		switch k := e.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[k]; !ok {
				return nil, false
			}
		case int:
			l, ok := cur.([]any)
			if !ok || k < 0 || k >= len(l) {
				return nil, false
			}
			cur = l[k]
		default:
			return nil, false
		}
	}
	return cur, true
}

// remove deletes the field at a concrete path (a list item by index), and
// the maps it leaves empty.
func remove(obj map[string]any, p []any) {
	if len(p) == 0 {
		return
	}
	var walk func(cur any, p []any) any
	walk = func(cur any, p []any) any {
		switch k := p[0].(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return cur
			}
			child, ok := m[k]
			if !ok {
				return cur
			}
			if len(p) == 1 {
				delete(m, k)
			} else if nc := walk(child, p[1:]); isEmptyMap(nc) {
				delete(m, k) // emptied by the removal
			} else {
				m[k] = nc
			}
			return m
		case int:
			l, ok := cur.([]any)
			if !ok || k < 0 || k >= len(l) {
				return cur
			}
			if len(p) == 1 {
				return append(l[:k:k], l[k+1:]...)
			}
			l[k] = walk(l[k], p[1:])
			return l
		}
		return cur
	}
	walk(obj, p)
}

func isEmptyMap(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

// setAt writes v at a concrete path, creating the maps on the way; it does
// not add list items.
func setAt(obj map[string]any, p []any, v any) bool {
	var cur any = obj
	for i, e := range p {
		last := i == len(p)-1
		switch k := e.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return false
			}
			if last {
				m[k] = v
				return true
			}
			next, ok := m[k]
			if !ok {
				next = map[string]any{}
				m[k] = next
			}
			cur = next
		case int:
			l, ok := cur.([]any)
			if !ok || k < 0 || k >= len(l) {
				return false
			}
			if last {
				l[k] = v
				return true
			}
			cur = l[k]
		}
	}
	return false
}

// dropIgnored removes the ignored fields from u (a copy the caller owns),
// longest paths first so list indexes stay valid.
func dropIgnored(u *unstructured.Unstructured, paths [][]any) {
	sortPaths(paths)
	for _, p := range paths {
		remove(u.Object, p)
	}
}

// sortPaths orders paths so that removing one never shifts another: deeper
// first, and later list items before earlier ones.
func sortPaths(paths [][]any) {
	less := func(a, b []any) bool {
		for i := 0; i < len(a) && i < len(b); i++ {
			ai, aok := a[i].(int)
			bi, bok := b[i].(int)
			if aok && bok && ai != bi {
				return ai > bi
			}
			if !reflect.DeepEqual(a[i], b[i]) {
				return fmt.Sprint(a[i]) < fmt.Sprint(b[i])
			}
		}
		return len(a) > len(b)
	}
	for i := 1; i < len(paths); i++ {
		for j := i; j > 0 && less(paths[j], paths[j-1]); j-- {
			paths[j], paths[j-1] = paths[j-1], paths[j]
		}
	}
}

// LeaveIgnored returns the object to apply to live so that the apply
// leaves ignored fields to their current owner (nil live: a create sets
// them all, desired itself). A field the manifest sets as it is live stays:
// applying it changes nothing, and khook keeps what it owns. A field that
// differs is someone else's now (an update takes a field's ownership, a
// forced server-side apply too): server-side apply leaves it out of the
// applied configuration, so the apply neither reverts it nor claims it (a
// field khook no longer owns stays as it is); a client-side apply, whose
// three-way patch would delete a field the record holds and the manifest
// lacks, sends the live value instead, which is no change.
func (o Options) LeaveIgnored(live, desired *unstructured.Unstructured, serverSide bool) *unstructured.Unstructured {
	if live == nil || len(o.ignore) == 0 {
		return desired
	}
	out := desired.DeepCopy()
	var drop [][]any
	for _, p := range o.ignoredPaths(desired, live) {
		dv, _ := valueAt(desired.Object, p)
		lv, ok := valueAt(live.Object, p)
		switch {
		case ok && reflect.DeepEqual(dv, lv):
		case serverSide || !ok:
			drop = append(drop, p)
		default:
			setAt(out.Object, p, lv)
		}
	}
	if !serverSide {
		for _, p := range o.ignoredPaths(live, live) {
			if _, ok := valueAt(desired.Object, p); !ok {
				lv, _ := valueAt(live.Object, p)
				setAt(out.Object, p, lv)
			}
		}
	}
	dropIgnored(out, drop)
	return out
}

// Ignores reports whether any rule could apply.
func (o Options) Ignores() bool { return len(o.ignore) > 0 }
