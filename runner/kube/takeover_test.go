package kube

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// khook takes a crds/ CRD's fields over from Helm alone: a CRD another
// manager also holds keeps its conflict.
func TestTakesOverFromHelm(t *testing.T) {
	with := func(managers ...string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		var mf []metav1.ManagedFieldsEntry
		for _, m := range managers {
			mf = append(mf, metav1.ManagedFieldsEntry{Manager: m})
		}
		// The API server writes a CRD's status: never a conflict.
		mf = append(mf, metav1.ManagedFieldsEntry{Manager: "kube-apiserver", Subresource: "status"})
		u.SetManagedFields(mf)
		return u
	}
	for _, tc := range []struct {
		live *unstructured.Unstructured
		want bool
	}{
		{nil, false},
		{with(), false},
		{with(FieldManager), false},
		{with(HelmFieldManager), true},
		{with(HelmFieldManager, FieldManager), true},
		{with(HelmFieldManager, "kubectl-edit"), false},
		{with("kubectl-client-side-apply"), false},
	} {
		var names []string
		if tc.live != nil {
			for _, f := range tc.live.GetManagedFields() {
				names = append(names, f.Manager)
			}
		}
		if got := TakesOverFromHelm(tc.live); got != tc.want {
			t.Errorf("TakesOverFromHelm(managers %v) = %v, want %v", names, got, tc.want)
		}
	}
}
