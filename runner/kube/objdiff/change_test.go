package objdiff

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/khook/khook/model"
)

var secretMapping = meta.RESTMapping{
	Resource:         schema.GroupVersionResource{Version: "v1", Resource: "secrets"},
	GroupVersionKind: schema.GroupVersionKind{Version: "v1", Kind: "Secret"},
	Scope:            meta.RESTScopeNamespace,
}

func configMap(fields map[string]any) *unstructured.Unstructured {
	o := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": "n"}}
	for k, v := range fields {
		o[k] = v
	}
	return &unstructured.Unstructured{Object: o}
}

// TestDecideIgnoresBookkeeping: what the server and controllers set on
// their own is not a change; content is.
func TestDecideIgnoresBookkeeping(t *testing.T) {
	live := configMap(map[string]any{"data": map[string]any{"a": "1"}, "status": map[string]any{"phase": "x"}})
	live.SetResourceVersion("7")
	live.SetGeneration(3)
	live.SetUID("u")
	live.SetManagedFields(nil)
	unstructured.SetNestedField(live.Object, "2026-01-01T00:00:00Z", "metadata", "creationTimestamp")
	live.SetAnnotations(map[string]string{LastAppliedAnnotation: `{"data":{"a":"0"}}`})
	after := configMap(map[string]any{"data": map[string]any{"a": "1"}, "status": map[string]any{"phase": "y"}})
	after.SetResourceVersion("8")
	if c := Decide(live, after, Options{}); c.Action != model.ActionUnchanged {
		t.Errorf("bookkeeping only: action %q, want unchanged", c.Action)
	}
	after.Object["data"] = map[string]any{"a": "2"}
	c := Decide(live, after, Options{})
	if c.Action != model.ActionConfigure || c.Live.GetResourceVersion() != "" || c.Live.GetAnnotations() != nil {
		t.Errorf("content change: action %q, live %v; want configure with normalised sides", c.Action, c.Live.Object)
	}
	if live.GetResourceVersion() != "7" {
		t.Error("Decide changed its input")
	}
	if c := Decide(nil, after, Options{}); c.Action != model.ActionCreate || c.Live != nil {
		t.Errorf("absent: action %q, want create", c.Action)
	}
}

// TestDecideSecretStringData: a Secret's stringData is the data it is
// stored as.
func TestDecideSecretStringData(t *testing.T) {
	secret := func(fields map[string]any) *unstructured.Unstructured {
		s := configMap(fields)
		s.SetKind("Secret")
		return s
	}
	live := secret(map[string]any{"data": map[string]any{"password": "aHVudGVyMg=="}})
	manifest := secret(map[string]any{"stringData": map[string]any{"password": "hunter2"}})
	if c := Decide(live, manifest, Options{}); c.Changed() {
		t.Errorf("stringData equal to data: action %q, want unchanged", c.Action)
	}
	if !Holds(&secretMapping, live, manifest, Options{}) {
		t.Error("Holds: live Secret holds the manifest's stringData as data")
	}
	manifest.Object["stringData"] = map[string]any{"password": "hunter3"}
	if c := Decide(live, manifest, Options{}); !c.Changed() {
		t.Error("changed stringData: unchanged, want configure")
	}
	if Holds(&secretMapping, live, manifest, Options{}) {
		t.Error("Holds: a changed stringData value is not held")
	}
}

// TestDecideRecord: kubectl's last-applied record is no change of the
// object, but Decide says when it differs.
func TestDecideRecord(t *testing.T) {
	live := configMap(map[string]any{"data": map[string]any{"a": "1"}})
	live.SetAnnotations(map[string]string{LastAppliedAnnotation: `{"stringData":{}}`})
	after := live.DeepCopy()
	after.SetAnnotations(map[string]string{LastAppliedAnnotation: `{"data":{}}`})
	if c := Decide(live, after, Options{}); c.Changed() || !c.Record {
		t.Errorf("record only: action %q, record %v; want unchanged with a record change", c.Action, c.Record)
	}
	if c := Decide(live, live.DeepCopy(), Options{}); c.Record {
		t.Error("same record reported as changed")
	}
}
