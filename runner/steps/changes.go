package steps

import (
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/khook/khook/report"
)

// change is one object's entry in a step's change set.
func change(action report.Did, m *meta.RESTMapping, ns, name string) report.Change {
	return report.Change{Action: action, Kind: m.GroupVersionKind.Kind, Namespace: ns, Name: name}
}

// namespaceCreated is createNamespace's entry.
func namespaceCreated(ns string) report.Change {
	return report.Change{Action: report.DidCreate, Kind: "Namespace", Name: ns}
}
