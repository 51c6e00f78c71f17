package steps

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner"
)

// change is one object's entry in a step's change set.
func change(action model.Did, m *meta.RESTMapping, ns, name string) model.Change {
	return model.Change{Action: action, Kind: m.GroupVersionKind.Kind, Namespace: ns, Name: name}
}

// owned is an applied object's inventory entry: the object as the server
// answered, so the UID is the one it has now.
func owned(m *meta.RESTMapping, live *unstructured.Unstructured, adopted bool) model.Owned {
	gvk := m.GroupVersionKind
	ns := live.GetNamespace()
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		ns = ""
	}
	return model.Owned{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: ns, Name: live.GetName(), UID: string(live.GetUID()), Adopted: adopted}
}

// namespaceCreated is createNamespace's entry.
func namespaceCreated(ns string) model.Change {
	return model.Change{Action: model.DidCreate, Kind: "Namespace", Name: ns}
}

// namespacePlanned is createNamespace's entry in a plan: the namespace
// EnsureNamespace would create, as it sends it.
func namespacePlanned(ns string) runner.PlannedObject {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	return runner.PlannedObject{Action: model.ActionCreate, Kind: "Namespace", Name: ns, Desired: obj}
}
