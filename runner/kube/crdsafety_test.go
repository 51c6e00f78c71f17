package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/runner/kube/apischema"
)

func schemaOf(t *testing.T, text string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(text), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRemovedFields(t *testing.T) {
	old := schemaOf(t, `
type: object
properties:
  spec:
    type: object
    properties:
      size: {type: string}
      color: {type: string}
      ports:
        type: array
        items: {type: object, properties: {name: {type: string}, port: {type: integer}}}
      extra: {type: object, properties: {a: {type: string}}}
`)
	next := schemaOf(t, `
type: object
properties:
  spec:
    type: object
    properties:
      size: {type: string}
      ports:
        type: array
        items: {type: object, properties: {port: {type: integer}}}
      extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
`)
	got := removedFields(old, next, "")
	want := []string{"spec.color", "spec.ports[].name"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("removedFields (-want +got):\n%s", d)
	}
	obj := map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": int64(1)}, map[string]any{"name": "x"}}}}
	if !hasPath(obj, []string{"spec", "ports[]", "name"}) || hasPath(obj, []string{"spec", "color"}) {
		t.Errorf("hasPath does not find spec.ports[].name, or finds spec.color")
	}
}

// A null where a CRD's schema allows none is what the API server refuses
// in a custom resource (velero's spec.provider); in metadata, or where the
// schema says nullable or has a default, null leaves the field unset.
func TestValidateNullInCustomResource(t *testing.T) {
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: locations.example.com}
spec:
  group: example.com
  names: {kind: Location, plural: locations}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              provider: {type: string}
              bucket: {type: string, nullable: true}
              region: {type: string, default: eu}
`), &crd.Object); err != nil {
		t.Fatal(err)
	}
	base, err := apischema.BuiltinSchemas()
	if err != nil {
		t.Fatal(err)
	}
	s := base.WithCRDs([]*unstructured.Unstructured{crd})
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Location",
		"metadata": map[string]any{"name": "default", "creationTimestamp": nil},
		"spec":     map[string]any{"provider": nil, "bucket": nil, "region": nil}}}
	problems, known := s.Validate(obj)
	want := []apischema.SchemaProblem{{Path: "spec.provider", Message: "spec.provider must be a string, not null"}}
	if d := cmp.Diff(want, problems); !known || d != "" {
		t.Errorf("Validate (known %t) (-want +got):\n%s", known, d)
	}
	// A built-in kind's null stays an unset field.
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x"}, "data": nil}}
	if problems, _ := s.Validate(cm); len(problems) > 0 {
		t.Errorf("ConfigMap with data: null: %v", problems)
	}
}
