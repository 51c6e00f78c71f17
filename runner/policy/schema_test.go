package policy

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A path is in a kind's schema when its Go type has it; what khook cannot
// follow counts as in it (defaulting may fill it).
func TestInSchema(t *testing.T) {
	deploy := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	pod := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	for _, tc := range []struct {
		gvk  schema.GroupVersionKind
		path string
		want bool
	}{
		{deploy, "spec.template.spec.containers.[].imagePullPolicy", true},
		{deploy, "spec.revisionHistoryLimit", true},
		{deploy, "spec.containers", false},
		{deploy, "spec.hostPID", false},
		{pod, "spec.template.spec.containers", false},
		{pod, "spec.containers.[].securityContext.readOnlyRootFilesystem", true},
		{pod, "metadata.labels.app", true},
		{pod, "kind", true},
		{pod, "spec.nope", false},
		{schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, "spec.anything", true},
	} {
		if got := inSchema(tc.gvk, strings.Split(tc.path, ".")); got != tc.want {
			t.Errorf("inSchema(%s, %s) = %v, want %v", tc.gvk.Kind, tc.path, got, tc.want)
		}
	}
}
