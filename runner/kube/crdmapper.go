package kube

import (
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/khook/khook/runner/kube/apischema"
)

// crdMapper is a RESTMapper layered over the discovery mapper: kinds of the
// CRDs khook applied or saw Established resolve from the CRD object itself
// (group, served versions with the storage version preferred, plural,
// singular, short names, scope), so a custom resource right after its CRD
// needs no discovery round trip, and no wait for the API server to publish
// the new group in discovery (seconds after Established). Everything else
// goes to next. Reset resets next only: what a CRD says stays true for the
// run (ForgetCRD drops a deleted one).
type crdMapper struct {
	next meta.ResettableRESTMapper

	mu   sync.RWMutex
	crds map[string]*crdKind // by CRD name
}

// crdKind is what one CRD says about its kind.
type crdKind struct {
	name                    string // the CRD's name: <plural>.<group>
	group, kind             string
	plural, singular        string
	shortNames              []string
	versions                []string // served; the storage version first
	namespaced, established bool
}

func newCRDMapper(next meta.ResettableRESTMapper) *crdMapper {
	return &crdMapper{next: next, crds: map[string]*crdKind{}}
}

// learn records the kind a CRD object (as the API server returned it)
// defines; a CRD without served versions is forgotten.
func (m *crdMapper) learn(crd *unstructured.Unstructured) *crdKind {
	k := &crdKind{name: crd.GetName()}
	k.kind, k.group, k.plural = apischema.CRDNamesOf(crd)
	k.singular, _, _ = unstructured.NestedString(crd.Object, "spec", "names", "singular")
	k.shortNames, _, _ = unstructured.NestedStringSlice(crd.Object, "spec", "names", "shortNames")
	if k.singular == "" {
		k.singular = strings.ToLower(k.kind)
	}
	scope, _, _ := unstructured.NestedString(crd.Object, "spec", "scope")
	k.namespaced = scope != "Cluster"
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		name, _ := vm["name"].(string)
		if served, _ := vm["served"].(bool); !served || name == "" {
			continue
		}
		if storage, _ := vm["storage"].(bool); storage {
			k.versions = append([]string{name}, k.versions...)
		} else {
			k.versions = append(k.versions, name)
		}
	}
	k.established = crdEstablished(crd)
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(k.versions) == 0 || k.group == "" || k.kind == "" || k.plural == "" {
		delete(m.crds, k.name)
		return nil
	}
	m.crds[k.name] = k
	return k
}

func (m *crdMapper) forget(name string) {
	m.mu.Lock()
	delete(m.crds, name)
	m.mu.Unlock()
}

// pending returns the CRD whose kind mapping is and which khook has not
// seen Established yet ("" when none).
func (m *crdMapper) pending(mapping *meta.RESTMapping) string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, k := range m.crds {
		if !k.established && k.group == mapping.Resource.Group && k.plural == mapping.Resource.Resource {
			return k.name
		}
	}
	return ""
}

func crdEstablished(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		cm, _ := c.(map[string]any)
		if cm["type"] == "Established" && cm["status"] == "True" {
			return true
		}
	}
	return false
}

// byResource finds the CRD whose plural, singular or short name is r's
// resource (group and version must match when given) and the versions
// that apply: the given one, else all served, preferred first.
func (m *crdMapper) byResource(r schema.GroupVersionResource) (*crdKind, []string) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	name := strings.ToLower(r.Resource)
	for _, k := range m.crds {
		if r.Group != "" && r.Group != k.group {
			continue
		}
		if name != k.plural && name != k.singular && !contains(k.shortNames, name) {
			continue
		}
		if vs := k.served(r.Version); vs != nil {
			return k, vs
		}
	}
	return nil, nil
}

func (m *crdMapper) byKind(gk schema.GroupKind, versions []string) (*crdKind, []string) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, k := range m.crds {
		if gk.Group != k.group || !strings.EqualFold(gk.Kind, k.kind) {
			continue
		}
		var out []string
		for _, v := range versions {
			out = append(out, k.served(v)...)
		}
		if len(versions) == 0 {
			out = k.versions
		}
		if len(out) > 0 {
			return k, out
		}
	}
	return nil, nil
}

// served is [v] when v is served, every served version for "", else nil.
func (k *crdKind) served(v string) []string {
	if v == "" {
		return k.versions
	}
	if contains(k.versions, v) {
		return []string{v}
	}
	return nil
}

func (k *crdKind) mapping(v string) *meta.RESTMapping {
	scope := meta.RESTScopeRoot
	if k.namespaced {
		scope = meta.RESTScopeNamespace
	}
	return &meta.RESTMapping{
		Resource:         schema.GroupVersionResource{Group: k.group, Version: v, Resource: k.plural},
		GroupVersionKind: schema.GroupVersionKind{Group: k.group, Version: v, Kind: k.kind},
		Scope:            scope,
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (m *crdMapper) KindFor(r schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	if k, vs := m.byResource(r); k != nil {
		return k.mapping(vs[0]).GroupVersionKind, nil
	}
	return m.next.KindFor(r)
}

func (m *crdMapper) KindsFor(r schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	if k, vs := m.byResource(r); k != nil {
		var out []schema.GroupVersionKind
		for _, v := range vs {
			out = append(out, k.mapping(v).GroupVersionKind)
		}
		return out, nil
	}
	return m.next.KindsFor(r)
}

func (m *crdMapper) ResourceFor(r schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	if k, vs := m.byResource(r); k != nil {
		return k.mapping(vs[0]).Resource, nil
	}
	return m.next.ResourceFor(r)
}

func (m *crdMapper) ResourcesFor(r schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	if k, vs := m.byResource(r); k != nil {
		var out []schema.GroupVersionResource
		for _, v := range vs {
			out = append(out, k.mapping(v).Resource)
		}
		return out, nil
	}
	return m.next.ResourcesFor(r)
}

func (m *crdMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if k, vs := m.byKind(gk, versions); k != nil {
		return k.mapping(vs[0]), nil
	}
	return m.next.RESTMapping(gk, versions...)
}

func (m *crdMapper) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	if k, vs := m.byKind(gk, versions); k != nil {
		var out []*meta.RESTMapping
		for _, v := range vs {
			out = append(out, k.mapping(v))
		}
		return out, nil
	}
	return m.next.RESTMappings(gk, versions...)
}

func (m *crdMapper) ResourceSingularizer(resource string) (string, error) {
	m.mu.RLock()
	for _, k := range m.crds {
		if k.plural == resource {
			m.mu.RUnlock()
			return k.singular, nil
		}
	}
	m.mu.RUnlock()
	return m.next.ResourceSingularizer(resource)
}

func (m *crdMapper) Reset() { m.next.Reset() }
