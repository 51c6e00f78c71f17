package steps

import (
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/khook/khook/report"
	"github.com/khook/khook/runner/kube"
)

// didOf turns the apply decision into what was done.
var didOf = map[string]string{
	kube.ActionCreate: report.DidCreate, kube.ActionConfigure: report.DidConfigure, kube.ActionUnchanged: report.DidUnchanged,
}

// change is one object's entry in a step's change set.
func change(action string, m *meta.RESTMapping, ns, name string) report.Change {
	return report.Change{Action: action, Kind: m.GroupVersionKind.Kind, Namespace: ns, Name: name}
}

// namespaceCreated is createNamespace's entry.
func namespaceCreated(ns string) report.Change {
	return report.Change{Action: report.DidCreate, Kind: "Namespace", Name: ns}
}
