// Package apischema holds what khook knows of the Kubernetes API without a
// cluster: the OpenAPI schemas of the built-in kinds, embedded
// (schemas/kubernetes.json.gz), with CRDs' schemas added (Schemas.WithCRDs)
// and objects checked against them (Schemas.Validate, offline validation and
// helm's crds/); and API lifecycles (APILifecycle: a kind's deprecation and
// removal by Kubernetes version, from k8s.io/api's prerelease-lifecycle data
// and lifecycle_dropped.go for kinds it no longer defines). Pure: no client.
// runner/kube uses it (a mapping miss says an API was removed; a schema
// problem worded as the API server's refusal of fields, SchemaFieldError).
//
// May import: of khook nothing (the ground floor at most); of client-go only
// the built-in types' scheme (layout_test).
package apischema
