package manifest

import (
	"runtime"
	"sync"
	"weak"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/spec"
)

// origin is where a loaded manifest object is written: in a file, or in an
// inline block of the spec (positions map through its TextAt).
type origin struct {
	file string       // the file as the spec names it, joined with its directory
	at   *spec.TextAt // inline: where the text starts in the spec
	text []byte       // the whole source, every document
}

// origins maps each object LoadManifests returned to its origin, for as
// long as the object lives: errors about a field (a write the API server
// rejected, a warning it sent) find the field's line without every caller
// carrying the origin along.
var origins sync.Map // weak.Pointer[unstructured.Unstructured] → *origin

func rememberOrigin(objs []*unstructured.Unstructured, o *origin) {
	for _, obj := range objs {
		k := weak.Make(obj)
		origins.Store(k, o)
		runtime.AddCleanup(obj, func(k weak.Pointer[unstructured.Unstructured]) { origins.Delete(k) }, k)
	}
}

// SourcePos is where the field at path (as the API server spells it) of a
// loaded manifest object is written: in its file, or in the spec for an
// inline manifest. It is zero for an object khook did not load from a file
// or an inline literal block (a URL, a kustomization, a rendered chart).
func SourcePos(obj *unstructured.Unstructured, path string) spec.Pos {
	if obj == nil {
		return spec.Pos{}
	}
	v, ok := origins.Load(weak.Make(obj))
	if !ok {
		return spec.Pos{}
	}
	o := v.(*origin)
	if o.file == "" && o.at == nil {
		return spec.Pos{}
	}
	node := findDocument(yamlDocuments(o.text), obj)
	if node == nil {
		return spec.Pos{}
	}
	line, col := FieldPos(node, path)
	if line == 0 {
		return spec.Pos{}
	}
	if o.at != nil {
		return o.at.Pos(line, col)
	}
	return spec.Pos{File: o.file, Line: line, Col: col}
}

// findDocument is the document (or List item) that holds obj: the same
// apiVersion, kind and name.
func findDocument(docs []*yaml.Node, obj *unstructured.Unstructured) *yaml.Node {
	for _, d := range docs {
		root := d
		if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
			root = root.Content[0]
		}
		if same(root, obj) {
			return root
		}
		if _, items := lookup(root, "items"); items != nil && deref(items).Kind == yaml.SequenceNode {
			for _, it := range deref(items).Content {
				if same(it, obj) {
					return it
				}
			}
		}
	}
	return nil
}

func same(n *yaml.Node, obj *unstructured.Unstructured) bool {
	val := func(keys ...string) string {
		cur := n
		for _, k := range keys {
			_, cur = lookup(cur, k)
			if cur == nil {
				return ""
			}
		}
		return deref(cur).Value
	}
	return val("kind") == obj.GetKind() && val("apiVersion") == obj.GetAPIVersion() && val("metadata", "name") == obj.GetName()
}
