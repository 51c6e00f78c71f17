package policy

import (
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/khook/khook/spec"
)

// nsNameLabel is the label the API server sets on every namespace.
const nsNameLabel = "kubernetes.io/metadata.name"

// Live reports whether the set judges against a cluster (a live plan,
// which reads namespaces); offline plans know only the spec.
func (set *Set) Live() bool { return set.Namespace != nil }

// DefineNamespace records a namespace the spec creates (a Namespace
// object, or a step's createNamespace) with its labels: what admission's
// namespaceSelector and namespaceObject see before it exists.
func (set *Set) DefineNamespace(name string, labels map[string]string) {
	if set == nil || name == "" {
		return
	}
	set.ns.define(name, labels)
}

// DefineSpecNamespaces records the namespaces the spec creates, for
// admission's namespaceSelector and namespaceObject before they exist:
// each included step's createNamespace, and the Namespace objects among
// objs (an offline plan's manifests; a live plan passes none: it defines
// each Namespace as a step plans it).
func (set *Set) DefineSpecNamespaces(s *spec.Spec, objs []*unstructured.Unstructured) {
	if set == nil {
		return
	}
	for _, st := range s.Steps {
		if b := st.Block(); b != nil && !st.Excluded() {
			set.DefineNamespace(b.CreatesNamespace(), nil)
		}
	}
	for _, o := range objs {
		if o.GetKind() == "Namespace" && o.GroupVersionKind().Group == "" {
			set.DefineNamespace(o.GetName(), o.GetLabels())
		}
	}
}

// User is the plan's identity as a SelfSubjectReview returns it.
type User struct {
	Name, UID string
	Groups    []string
	Extra     map[string][]string
}

func userOf(p *User) user.Info {
	if p == nil {
		return nil
	}
	return &user.DefaultInfo{Name: p.Name, UID: p.UID, Groups: p.Groups, Extra: p.Extra}
}

// namespacedParams are the built-in param kinds that are namespaced; a
// param kind of a CRD is namespaced when its objects in the files carry
// a namespace.
var namespacedParams = map[string]bool{"ConfigMap": true, "Secret": true}

// paramSource is the dispatcher's param informer over the params in the
// --policy files of the policy's paramKind (khook reads params nowhere
// else): a param of a namespaced kind written without a namespace is in
// default, where kubectl would create it.
func paramSource(pk *admissionv1.ParamKind, docs []*unstructured.Unstructured) (informers.GenericInformer, meta.RESTScope) {
	if pk == nil {
		return nil, nil
	}
	var of []*unstructured.Unstructured
	namespaced := namespacedParams[pk.Kind]
	for _, u := range docs {
		if u.GetAPIVersion() == pk.APIVersion && u.GetKind() == pk.Kind {
			of = append(of, u)
			namespaced = namespaced || u.GetNamespace() != ""
		}
	}
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, u := range of {
		if namespaced && u.GetNamespace() == "" {
			u = u.DeepCopy()
			u.SetNamespace("default")
		}
		_ = idx.Add(u)
	}
	gv, _ := schema.ParseGroupVersion(pk.APIVersion)
	gr := schema.GroupResource{Group: gv.Group, Resource: strings.ToLower(pk.Kind) + "s"}
	scope := meta.RESTScopeRoot
	if namespaced {
		scope = meta.RESTScopeNamespace
	}
	return paramInformer{lister: cache.NewGenericLister(idx, gr)}, scope
}

type paramInformer struct{ lister cache.GenericLister }

func (p paramInformer) Informer() cache.SharedIndexInformer { return synced{} }
func (p paramInformer) Lister() cache.GenericLister         { return p.lister }

// synced is an informer that has synced: the params are all in memory.
type synced struct{ cache.SharedIndexInformer }

func (synced) HasSynced() bool { return true }
