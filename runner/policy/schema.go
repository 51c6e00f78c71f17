package policy

import (
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// inSchema says whether a field path ("spec", "containers", "[]", ...)
// can exist in an object of kind gvk, by its Go type in k8s.io/api: a
// field the kind does not have is never filled by the API server's
// defaulting. A policy written for several kinds reads, for a Deployment,
// the Pod branch's spec.containers too; that branch is not this object's.
// An unknown kind, or a part of the type khook cannot follow (a raw
// extension, a free-form value), counts as in the schema.
func inSchema(gvk schema.GroupVersionKind, path []string) bool {
	obj, err := scheme.Scheme.New(gvk)
	if err != nil {
		return true
	}
	t := reflect.TypeOf(obj)
	for _, seg := range path {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Slice, reflect.Array:
			if seg != "[]" {
				return true // an index khook does not follow
			}
			t = t.Elem()
		case reflect.Map:
			t = t.Elem() // any key, "[]" or a literal one
		case reflect.Struct:
			f, ok := jsonField(t, seg)
			if !ok {
				return false
			}
			t = f
		default:
			return true
		}
	}
	return true
}

// jsonField is the type of t's field serialized as name, looking into
// inlined (embedded) structs as encoding/json does.
func jsonField(t reflect.Type, name string) (reflect.Type, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == name:
			return f.Type, true
		case tag == "" && f.Anonymous:
			inner := f.Type
			if inner.Kind() == reflect.Pointer {
				inner = inner.Elem()
			}
			if inner.Kind() == reflect.Struct {
				if ft, ok := jsonField(inner, name); ok {
					return ft, true
				}
			}
		}
	}
	return nil, false
}
