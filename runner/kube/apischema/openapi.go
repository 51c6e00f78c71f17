package apischema

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The OpenAPI schemas of the built-in kinds, from the OpenAPI v3 documents
// of the k8s.io/kubernetes release test/tools/controlplane pins, cut to what
// validation reads (test/tools/controlplane/genschemas). They come with the binary:
// offline validation never asks the network.
//
//go:generate sh -c "cd ../../../test/tools/controlplane && go run ./genschemas -o ../../../runner/kube/apischema/schemas/kubernetes.json.gz"
//go:embed schemas/kubernetes.json.gz
var builtinSchemasGz []byte

// openAPISchema is one schema as genschemas writes it; a CRD's
// openAPIV3Schema reads into it too.
type openAPISchema struct {
	Type                 string                    `json:"type,omitempty"`
	Ref                  string                    `json:"$ref,omitempty"`
	Properties           map[string]*openAPISchema `json:"properties,omitempty"`
	Required             []string                  `json:"required,omitempty"`
	Items                *openAPISchema            `json:"items,omitempty"`
	AdditionalProperties *additional               `json:"additionalProperties,omitempty"`
	Enum                 []any                     `json:"enum,omitempty"`
	IntOrString          bool                      `json:"x-kubernetes-int-or-string,omitempty"`
	PreserveUnknown      bool                      `json:"x-kubernetes-preserve-unknown-fields,omitempty"`
	Embedded             bool                      `json:"x-kubernetes-embedded-resource,omitempty"`
	// Nullable and Default matter in a CRD's schema only: there a null
	// where neither allows one is refused.
	Nullable bool `json:"nullable,omitempty"`
	Default  any  `json:"default,omitempty"`
	// A CRD schema's combinators: their branches are not checked, and a
	// value they govern is not called the wrong type.
	AllOf []json.RawMessage `json:"allOf,omitempty"`
	AnyOf []json.RawMessage `json:"anyOf,omitempty"`
	OneOf []json.RawMessage `json:"oneOf,omitempty"`

	crd bool // the root of a CRD's schema
}

// additional is additionalProperties: a schema, or true/false (CRDs).
type additional struct {
	schema *openAPISchema
	allows bool
}

func (a *additional) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("true")) || bytes.Equal(b, []byte("false")) {
		a.allows = string(b) == "true"
		return nil
	}
	a.schema = &openAPISchema{}
	a.allows = true
	return json.Unmarshal(b, a.schema)
}

// Schemas are the OpenAPI schemas offline validation checks objects
// against: the built-in kinds of one Kubernetes release, and the kinds of
// the CRDs a spec applies (WithCRDs).
type Schemas struct {
	// Kubernetes is the release the built-in schemas are from ("1.36.3").
	Kubernetes string
	kinds      map[schema.GroupVersionKind]*openAPISchema
	defs       map[string]*openAPISchema
}

var builtin = sync.OnceValues(func() (*Schemas, error) {
	zr, err := gzip.NewReader(bytes.NewReader(builtinSchemasGz))
	if err != nil {
		return nil, err
	}
	var doc struct {
		Kubernetes string                    `json:"kubernetes"`
		Kinds      map[string]string         `json:"kinds"`
		Schemas    map[string]*openAPISchema `json:"schemas"`
	}
	if err := json.NewDecoder(zr).Decode(&doc); err != nil {
		return nil, err
	}
	s := &Schemas{Kubernetes: doc.Kubernetes, kinds: map[schema.GroupVersionKind]*openAPISchema{}, defs: doc.Schemas}
	for k, name := range doc.Kinds {
		gv, kind, _ := strings.Cut(k, ", Kind=") // "apps/v1, Kind=Deployment"
		g, err := schema.ParseGroupVersion(gv)
		if err != nil {
			continue
		}
		s.kinds[g.WithKind(kind)] = s.defs[name]
	}
	return s, nil
})

// BuiltinSchemas are the schemas of the built-in kinds khook carries.
func BuiltinSchemas() (*Schemas, error) {
	s, err := builtin()
	if err != nil {
		return nil, fmt.Errorf("cannot read the built-in OpenAPI schemas (internal error): %w", err)
	}
	return s, nil
}

// objectMetaRef is the schema every object's metadata is checked against.
const objectMetaRef = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

var crdGK = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

// WithCRDs adds the kinds of every CustomResourceDefinition among objs
// (each served version's openAPIV3Schema), as the API server would
// validate their objects once the CRD is established. A CRD whose schema
// does not read is left out: its own object is checked as a CRD.
func (s *Schemas) WithCRDs(objs []*unstructured.Unstructured) *Schemas {
	out := &Schemas{Kubernetes: s.Kubernetes, kinds: s.kinds, defs: s.defs}
	copied := false
	for _, obj := range objs {
		if obj.GroupVersionKind().GroupKind() != crdGK {
			continue
		}
		kind, group, _ := CRDNamesOf(obj)
		versions, _, _ := unstructured.NestedSlice(obj.Object, "spec", "versions")
		for _, v := range versions {
			vm, _ := v.(map[string]any)
			name, _ := vm["name"].(string)
			raw, ok, _ := unstructured.NestedMap(vm, "schema", "openAPIV3Schema")
			if !ok || name == "" || kind == "" {
				continue
			}
			root, err := crdSchema(raw)
			if err != nil {
				continue
			}
			if !copied {
				out.kinds = make(map[schema.GroupVersionKind]*openAPISchema, len(s.kinds)+8)
				for k, v := range s.kinds {
					out.kinds[k] = v
				}
				copied = true
			}
			out.kinds[schema.GroupVersionKind{Group: group, Version: name, Kind: kind}] = root
		}
	}
	return out
}

// crdSchema reads a CRD's openAPIV3Schema; apiVersion, kind and metadata
// are the API server's, whatever the CRD says of them.
func crdSchema(raw map[string]any) (*openAPISchema, error) {
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	root := &openAPISchema{}
	if err := json.Unmarshal(b, root); err != nil {
		return nil, err
	}
	if root.Properties == nil {
		root.Properties = map[string]*openAPISchema{}
	}
	root.Properties["apiVersion"] = &openAPISchema{Type: "string"}
	root.Properties["kind"] = &openAPISchema{Type: "string"}
	root.Properties["metadata"] = &openAPISchema{Ref: objectMetaRef}
	root.crd = true
	return root, nil
}

// CRDNamesOf is the kind, group and plural a CRD defines, read from an
// object known to be a CRD (a list's item may carry no kind of its own).
func CRDNamesOf(crd *unstructured.Unstructured) (kind, group, plural string) {
	kind, _, _ = unstructured.NestedString(crd.Object, "spec", "names", "kind")
	group, _, _ = unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ = unstructured.NestedString(crd.Object, "spec", "names", "plural")
	return kind, group, plural
}
