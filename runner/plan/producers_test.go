package plan

import (
	"testing"

	"github.com/khook/khook/spec"
)

func TestProducersNameTheStep(t *testing.T) {
	s := &spec.Spec{BaseDir: t.TempDir(), Steps: []*spec.Step{
		{Name: "ns", Helm: &spec.Helm{Chart: "x", Namespace: "apps", CreateNamespace: true}},
		{Name: "crds", Apply: &spec.Apply{Manifests: []spec.Source{{Inline: `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.io
spec:
  group: example.io
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true}]
---
apiVersion: v1
kind: Namespace
metadata:
  name: extra
`}}}},
	}}
	p := producersOf(s)
	for _, c := range []struct{ got, want string }{
		{p.namespaceReason("apps"), "namespace apps does not exist yet: step ns creates it"},
		{p.namespaceReason("extra"), "namespace extra does not exist yet: step crds creates it"},
		{p.namespaceReason("nope"), "namespace nope does not exist and no step creates it"},
		{p.kindReason("Widget", "example.io"), "kind Widget.example.io is not served yet: step crds registers it"},
		{p.objectReason(objectKey("Namespace", "", "extra"), "namespace/extra"), "namespace/extra does not exist yet: step crds applies it"},
		{p.objectReason(objectKey("ConfigMap", "apps", "x"), "configmap/x"), "configmap/x does not exist yet (an earlier step may create it)"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
