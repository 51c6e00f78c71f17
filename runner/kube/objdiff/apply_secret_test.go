package objdiff

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestNormalizeSecret(t *testing.T) {
	secret := func(fields map[string]any) *unstructured.Unstructured {
		o := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s"}}
		for k, v := range fields {
			o[k] = v
		}
		return &unstructured.Unstructured{Object: o}
	}
	tests := []struct {
		name string
		in   *unstructured.Unstructured
		want *unstructured.Unstructured
	}{{
		name: "stringData becomes base64 data",
		in:   secret(map[string]any{"stringData": map[string]any{"password": "hunter2"}}),
		want: secret(map[string]any{"data": map[string]any{"password": "aHVudGVyMg=="}}),
	}, {
		name: "stringData wins over data on a shared key and keeps data's others",
		in: secret(map[string]any{
			"data":       map[string]any{"password": "b2xk", "user": "YWRtaW4="},
			"stringData": map[string]any{"password": "new"},
		}),
		want: secret(map[string]any{"data": map[string]any{"password": "bmV3", "user": "YWRtaW4="}}),
	}, {
		name: "an empty stringData is dropped",
		in:   secret(map[string]any{"stringData": nil, "type": "Opaque"}),
		want: secret(map[string]any{"type": "Opaque"}),
	}, {
		name: "a non-string value is left for the API server to reject",
		in:   secret(map[string]any{"stringData": map[string]any{"port": int64(5432)}}),
		want: secret(map[string]any{"stringData": map[string]any{"port": int64(5432)}}),
	}, {
		name: "data only is untouched",
		in:   secret(map[string]any{"data": map[string]any{"a": "Yg=="}}),
		want: secret(map[string]any{"data": map[string]any{"a": "Yg=="}}),
	}, {
		name: "another kind's stringData is untouched",
		in: &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Secret", "stringData": map[string]any{"a": "b"}}},
		want: &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Secret", "stringData": map[string]any{"a": "b"}}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.in.DeepCopy()
			got := NormalizeSecret(tt.in)
			if diff := cmp.Diff(tt.want.Object, got.Object); diff != "" {
				t.Errorf("NormalizeSecret (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before.Object, tt.in.Object); diff != "" {
				t.Errorf("NormalizeSecret changed its input (-before +after):\n%s", diff)
			}
		})
	}
}
