package kube

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestAPILifecycle(t *testing.T) {
	t.Parallel()
	pdb := schema.GroupVersionKind{Group: "policy", Version: "v1beta1", Kind: "PodDisruptionBudget"}
	for _, tc := range []struct {
		gvk     schema.GroupVersionKind
		version string
		want    string
	}{
		{pdb, "1.36", "policy/v1beta1 PodDisruptionBudget was removed in v1.25: use policy/v1"},
		{pdb, "v1.22.3", "policy/v1beta1 PodDisruptionBudget is deprecated and removed in v1.25: use policy/v1"},
		{pdb, "1.20", ""},
		{schema.GroupVersionKind{Group: "extensions", Version: "v1beta1", Kind: "Ingress"}, "1.36", "extensions/v1beta1 Ingress was removed in v1.22: use networking.k8s.io/v1"},
		{schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}, "1.36", ""},
		{schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, "1.36", ""},
	} {
		v, err := ParseKubeVersion(tc.version)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if st := APILifecycle(tc.gvk, v); st != nil {
			got = st.Error()
		}
		if got != tc.want {
			t.Errorf("APILifecycle(%s, %s) = %q, want %q", tc.gvk, tc.version, got, tc.want)
		}
	}
	for _, bad := range []string{"", "1", "x.y", "latest"} {
		if _, err := ParseKubeVersion(bad); err == nil {
			t.Errorf("ParseKubeVersion(%q) succeeded", bad)
		}
	}
}
