package kube

import (
	"github.com/khook/khook/runner/kube/apischema"
	"github.com/khook/khook/runner/kube/manifest"

	"github.com/khook/khook/spec"

	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// Resource is a resolved kubectl resource argument: a type and, for the
// kind/name form, one object's name.
type Resource struct {
	Mapping *meta.RESTMapping
	Name    string // empty: every object of the type
}

// Namespaced reports whether the resource lives in namespaces.
func (r Resource) Namespaced() bool { return r.Mapping.Scope.Name() == meta.RESTScopeNameNamespace }

// String renders the resource kubectl-style: "deployment.apps/web", "pods".
func (r Resource) String() string {
	if r.Name == "" {
		return TypeName(r.Mapping)
	}
	return KindName(r.Mapping) + "/" + r.Name
}

// TypeName is the plural resource with its group ("deployments.apps", "pods").
func TypeName(m *meta.RESTMapping) string {
	if m.Resource.Group == "" {
		return m.Resource.Resource
	}
	return m.Resource.Resource + "." + m.Resource.Group
}

// KindName is the lower-case kind with its group ("deployment.apps", "pod"),
// the way kubectl names an object.
func KindName(m *meta.RESTMapping) string {
	k := strings.ToLower(m.GroupVersionKind.Kind)
	if m.GroupVersionKind.Group == "" {
		return k
	}
	return k + "." + m.GroupVersionKind.Group
}

// ObjectName names an object kubectl-style for messages: "deployment.apps/web"
// or "deployment.apps/web in namespace demo".
func ObjectName(obj *unstructured.Unstructured) string {
	gvk := obj.GroupVersionKind()
	k := strings.ToLower(gvk.Kind)
	if gvk.Group != "" {
		k += "." + gvk.Group
	}
	if ns := obj.GetNamespace(); ns != "" {
		return k + "/" + obj.GetName() + " in namespace " + ns
	}
	return k + "/" + obj.GetName()
}

// Object is a spec field that holds a resource argument: delete.resource,
// patch.target, wait.on, rollout.restart/status.
type Object interface {
	Object() (spec.Resource, error)
}

// ResolveObject resolves the resource argument of a spec field, parsed by
// the spec's grammar (the one validation checked). Errors start with the
// field's name when one is given: `target "deploy/x": the server has no
// resource type "deploy"`, `target "pods" names no object: ...`.
func (c *Clients) ResolveObject(ctx context.Context, field string, o Object) (Resource, error) {
	prefix := ""
	if field != "" {
		prefix = field + " "
	}
	r, err := o.Object()
	if err != nil {
		return Resource{}, fmt.Errorf("%s%w", prefix, err) // the grammar's error quotes the value
	}
	res, err := c.ResolveResource(ctx, r)
	if err != nil {
		return res, fmt.Errorf("%s%q: %w", prefix, r.String(), err)
	}
	return res, nil
}

// ResolveResource maps a resource argument the spec parsed (TYPE or
// TYPE/NAME: "pods", "deploy/web", "deployments.apps/web", "Deployment/web")
// the way kubectl's resource builder does.
func (c *Clients) ResolveResource(ctx context.Context, r spec.Resource) (Resource, error) {
	m, err := c.MappingForType(ctx, r.Type)
	if err != nil {
		return Resource{}, err
	}
	return Resource{Mapping: m, Name: r.Name}, nil
}

// MappingForType maps a resource type, short name or kind (optionally
// group-qualified) the way kubectl's resource builder does. A miss resets
// discovery (an earlier step may have registered a CRD) and, when a matching
// CRD exists but is not Established yet, waits for it.
func (c *Clients) MappingForType(ctx context.Context, typ string) (*meta.RESTMapping, error) {
	var m *meta.RESTMapping
	err := c.withRefresh(ctx, func(crd *unstructured.Unstructured) bool { return crdMatchesType(crd, typ) }, func() error {
		var err error
		m, err = c.mappingFor(typ)
		return err
	})
	if err != nil {
		if meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("the server has no resource type %q (not a built-in type, short name or installed CRD)", typ)
		}
		return nil, c.Explain(err)
	}
	return m, nil
}

// mappingFor is kubectl's ResourceBuilder.mappingFor: try the argument as a
// resource, then as a kind.
func (c *Clients) mappingFor(arg string) (*meta.RESTMapping, error) {
	fullGVR, gr := schema.ParseResourceArg(arg)
	gvk := schema.GroupVersionKind{}
	if fullGVR != nil {
		gvk, _ = c.Mapper.KindFor(*fullGVR)
	}
	if gvk.Empty() {
		var err error
		gvk, err = c.Mapper.KindFor(gr.WithVersion(""))
		if err != nil && !meta.IsNoMatchError(err) && !IsNotFoundish(err) {
			return nil, err
		}
	}
	if !gvk.Empty() {
		return c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	fullGVK, gk := schema.ParseKindArg(arg)
	if fullGVK == nil {
		v := gk.WithVersion("")
		fullGVK = &v
	}
	if !fullGVK.Empty() {
		if m, err := c.Mapper.RESTMapping(fullGVK.GroupKind(), fullGVK.Version); err == nil {
			return m, nil
		}
	}
	// Kinds are case-sensitive in the mapper; users write "deployment" too.
	return c.Mapper.RESTMapping(gk)
}

// IsNotFoundish reports an error that says something was not found.
func IsNotFoundish(err error) bool {
	return err != nil && strings.Contains(err.Error(), "not found")
}

// MappingFor maps an object's kind, with the same discovery refresh and CRD
// wait as MappingForType.
func (c *Clients) MappingFor(ctx context.Context, gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	var m *meta.RESTMapping
	err := c.withRefresh(ctx, func(crd *unstructured.Unstructured) bool {
		k, g, _ := apischema.CRDNamesOf(crd)
		return g == gvk.Group && k == gvk.Kind
	}, func() error {
		var err error
		m, err = c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		return err
	})
	if err != nil {
		if meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("the server does not know kind %q in %q: install its CRD first (an earlier step or earlier in the same manifests)", gvk.Kind, gvk.GroupVersion())
		}
		return nil, c.Explain(err)
	}
	return m, nil
}

// MapObject maps obj and defaults its namespace: namespaced objects without
// one get defaultNS (else the kubeconfig's); cluster-scoped objects lose any
// namespace they were written with, as kubectl ignores it.
func (c *Clients) MapObject(ctx context.Context, obj *unstructured.Unstructured, defaultNS string) (*meta.RESTMapping, error) {
	m, err := c.MappingFor(ctx, obj.GroupVersionKind())
	if err != nil {
		if st := c.removedAPI(obj.GroupVersionKind()); st != nil {
			err = st // not served because its Kubernetes version removed it
			if pos := manifest.SourcePos(obj, "apiVersion"); !pos.IsZero() {
				err = fmt.Errorf("%w (apiVersion at %s)", st, pos)
			}
		}
		return nil, fmt.Errorf("%s: %w", ObjectName(obj), err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if obj.GetNamespace() == "" {
			if defaultNS == "" {
				defaultNS = c.Namespace
			}
			obj.SetNamespace(defaultNS)
		}
	} else {
		obj.SetNamespace("")
	}
	return m, nil
}

// withRefresh runs fn; on a no-match it resets discovery and retries; if it
// still misses and a matching CRD exists, the mapper learns the kind from
// the CRD itself (waiting for Established through a watch when it is not
// yet), so no retry waits for discovery to publish the new group.
func (c *Clients) withRefresh(ctx context.Context, match func(*unstructured.Unstructured) bool, fn func() error) error {
	err := fn()
	if err == nil || !meta.IsNoMatchError(err) {
		return err
	}
	c.Mapper.Reset()
	if err = fn(); err == nil || !meta.IsNoMatchError(err) {
		return err
	}
	crd := c.findCRD(ctx, match)
	if crd == nil {
		return err
	}
	if crdEstablished(crd) {
		c.LearnCRD(crd)
	} else if werr := c.WaitCRDEstablished(ctx, crd.GetName()); werr != nil {
		return werr
	}
	return fn()
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CRDMapping is the REST mapping of CustomResourceDefinitions.
var CRDMapping = &meta.RESTMapping{
	Resource:         crdGVR,
	GroupVersionKind: crdGVR.GroupVersion().WithKind("CustomResourceDefinition"),
	Scope:            meta.RESTScopeRoot,
}

// NamespaceMapping is the REST mapping of Namespaces.
var NamespaceMapping = &meta.RESTMapping{
	Resource:         schema.GroupVersionResource{Version: "v1", Resource: "namespaces"},
	GroupVersionKind: schema.GroupVersionKind{Version: "v1", Kind: "Namespace"},
	Scope:            meta.RESTScopeRoot,
}

// IsCRD reports whether obj is a CustomResourceDefinition.
func IsCRD(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return gvk.Group == crdGVR.Group && gvk.Kind == "CustomResourceDefinition"
}

func (c *Clients) findCRD(ctx context.Context, match func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	list, err := c.Dynamic.Resource(crdGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	for i := range list.Items {
		if match(&list.Items[i]) {
			return &list.Items[i]
		}
	}
	return nil
}

func crdMatchesType(crd *unstructured.Unstructured, typ string) bool {
	name, group, _ := strings.Cut(typ, ".")
	if g, _, _ := unstructured.NestedString(crd.Object, "spec", "group"); group != "" && g != group {
		return false
	}
	names, _, _ := unstructured.NestedMap(crd.Object, "spec", "names")
	for _, k := range []string{"plural", "singular", "kind"} {
		if v, ok := names[k].(string); ok && strings.EqualFold(v, name) {
			return true
		}
	}
	short, _, _ := unstructured.NestedStringSlice(crd.Object, "spec", "names", "shortNames")
	for _, s := range short {
		if strings.EqualFold(s, name) {
			return true
		}
	}
	return false
}

// WaitCRDEstablished blocks until the named CRD reports Established, then
// maps its kind from the CRD as the server returned it. A plain list and
// watch of the one CRD (no informer: its teardown alone took about two
// seconds, longer than the CRD takes to be Established).
func (c *Clients) WaitCRDEstablished(ctx context.Context, name string) error {
	start := time.Now()
	r := c.Dynamic.Resource(crdGVR)
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	pending := "not found"
	var seen types.UID // the CRD awaited: once seen, its going ends the wait
	for ctx.Err() == nil {
		list, err := r.List(ctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return fmt.Errorf("cannot read CRD %s: %w", name, c.Explain(err))
		}
		if len(list.Items) == 0 && seen != "" {
			return fmt.Errorf("CRD %s was deleted while khook waited for condition=Established", name)
		}
		for i := range list.Items {
			u := &list.Items[i]
			if u.GetDeletionTimestamp() != nil {
				return fmt.Errorf("%s: it will not become Established", BeingDeleted(u))
			}
			if seen != "" && u.GetUID() != seen {
				return fmt.Errorf("CRD %s was deleted (and made again by someone else) while khook waited for condition=Established", name)
			}
			seen = u.GetUID()
			if crdEstablished(u) {
				c.LearnCRD(u)
				return nil
			}
			pending = "not Established yet"
		}
		w, err := r.Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: list.GetResourceVersion(), AllowWatchBookmarks: true})
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return fmt.Errorf("cannot watch CRD %s: %w", name, c.Explain(err))
		}
		for ev := range w.ResultChan() {
			if ev.Type == watch.Deleted {
				w.Stop()
				return fmt.Errorf("CRD %s was deleted while khook waited for condition=Established", name)
			}
			if ev.Type != watch.Added && ev.Type != watch.Modified {
				continue // bookmarks; an error: the next list tells
			}
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			if u.GetDeletionTimestamp() != nil {
				w.Stop()
				return fmt.Errorf("%s: it will not become Established", BeingDeleted(u))
			}
			if crdEstablished(u) {
				w.Stop()
				c.LearnCRD(u)
				return nil
			}
			seen = u.GetUID()
			pending = "not Established yet"
		}
		w.Stop() // the server ended the watch: list again
	}
	return WaitError(ctx, start, "condition=Established", KindName(CRDMapping)+"/"+name, pending)
}

// CRDNames are the kind, group and plural a CRD object defines (empty for
// any other object).
func CRDNames(obj *unstructured.Unstructured) (kind, group, plural string) {
	if !IsCRD(obj) {
		return "", "", ""
	}
	return apischema.CRDNamesOf(obj)
}

// removedAPI is the removal of gvk in the server's version when the server
// does not serve it for that reason; nil otherwise. Only a kind that
// k8s.io/api says some version removes costs the version request.
func (c *Clients) removedAPI(gvk schema.GroupVersionKind) *apischema.APIStatus {
	if apischema.APILifecycle(gvk, apischema.KubeVersion{Major: 1 << 20}) == nil || c.Discovery == nil {
		return nil
	}
	info, err := c.Discovery.ServerVersion()
	if err != nil {
		return nil
	}
	v, err := apischema.ParseKubeVersion(info.GitVersion)
	if err != nil {
		return nil
	}
	if st := apischema.APILifecycle(gvk, v); st != nil && st.Removed {
		return st
	}
	return nil
}
