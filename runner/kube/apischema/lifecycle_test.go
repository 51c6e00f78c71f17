package apischema

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestAPILifecycle(t *testing.T) {
	t.Parallel()
	pdb := schema.GroupVersionKind{Group: "policy", Version: "v1beta1", Kind: "PodDisruptionBudget"}
	hpa := schema.GroupVersionKind{Group: "autoscaling", Version: "v2beta2", Kind: "HorizontalPodAutoscaler"}
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
		// k8s.io/api no longer defines these types: the data of older releases.
		{hpa, "1.36", "autoscaling/v2beta2 HorizontalPodAutoscaler was removed in v1.26: use autoscaling/v2"},
		{hpa, "1.24", "autoscaling/v2beta2 HorizontalPodAutoscaler is deprecated and removed in v1.26: use autoscaling/v2"},
		{hpa, "1.22", ""},
		{schema.GroupVersionKind{Group: "flowcontrol.apiserver.k8s.io", Version: "v1alpha1", Kind: "FlowSchema"}, "1.36", "flowcontrol.apiserver.k8s.io/v1alpha1 FlowSchema was removed in v1.21: use flowcontrol.apiserver.k8s.io/v1"},
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
