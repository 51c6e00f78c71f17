package steps

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/report"
)

// change is one object's entry in a step's change set.
func change(action report.Did, m *meta.RESTMapping, ns, name string) report.Change {
	return report.Change{Action: action, Kind: m.GroupVersionKind.Kind, Namespace: ns, Name: name}
}

// owned is an applied object's inventory entry: the object as the server
// answered, so the UID is the one it has now.
func owned(m *meta.RESTMapping, live *unstructured.Unstructured, adopted bool) report.Owned {
	gvk := m.GroupVersionKind
	ns := live.GetNamespace()
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		ns = ""
	}
	return report.Owned{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: ns, Name: live.GetName(), UID: string(live.GetUID()), Adopted: adopted}
}

// namespaceCreated is createNamespace's entry.
func namespaceCreated(ns string) report.Change {
	return report.Change{Action: report.DidCreate, Kind: "Namespace", Name: ns}
}
