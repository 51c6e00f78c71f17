package objdiff

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
)

func deployment(replicas int64, ann map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web-1", "namespace": "apps"},
		"spec":     map[string]any{"replicas": replicas},
	}}
	if ann != nil {
		u.Object["metadata"].(map[string]any)["annotations"] = ann
	}
	return u
}

func mustIgnore(t *testing.T, rules ...spec.IgnoreRule) Options {
	t.Helper()
	o, err := IgnoreOptions(rules)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestIgnoreRulesLeaveFieldsOutOfTheDecision(t *testing.T) {
	live, desired := deployment(5, nil), deployment(1, nil)
	if Decide(live, desired, Options{}).Action != model.ActionConfigure {
		t.Fatal("without a rule, a changed replica count is a change")
	}
	for name, rule := range map[string]spec.IgnoreRule{
		"pointer": {Target: &spec.IgnoreTarget{Group: "apps", Kind: "Deployment", Namespace: "*", Name: "web*"}, JSONPointers: []string{"/spec/replicas"}},
		"jq":      {JQPaths: []string{".spec.replicas"}},
	} {
		if got := Decide(live, desired, mustIgnore(t, rule)).Action; got != model.ActionUnchanged {
			t.Errorf("%s: %s, want unchanged", name, got)
		}
	}
	other := mustIgnore(t, spec.IgnoreRule{Target: &spec.IgnoreTarget{Name: "db*"}, JSONPointers: []string{"/spec/replicas"}})
	if Decide(live, desired, other).Action != model.ActionConfigure {
		t.Error("a rule for other objects ignored the field")
	}
}

func TestIgnoreManagersFromLiveManagedFields(t *testing.T) {
	live := deployment(1, map[string]any{"cert-manager.io/inject-ca-from": "x", "team": "a"})
	live.SetManagedFields([]metav1.ManagedFieldsEntry{{
		Manager: "cainjector", Operation: metav1.ManagedFieldsOperationApply,
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:annotations":{"f:cert-manager.io/inject-ca-from":{}}}}`)},
	}})
	desired := deployment(1, map[string]any{"team": "a"})
	opts := mustIgnore(t, spec.IgnoreRule{Managers: []string{"cainjector"}})
	if got := Decide(live, desired, opts).Action; got != model.ActionUnchanged {
		t.Fatalf("%s, want unchanged: cainjector's annotation is ignored", got)
	}
	desired.SetAnnotations(map[string]string{"team": "b"})
	if got := Decide(live, desired, opts).Action; got != model.ActionConfigure {
		t.Fatalf("%s, want configure: the team annotation is khook's", got)
	}
}

func TestLeaveIgnored(t *testing.T) {
	opts := mustIgnore(t, spec.IgnoreRule{JSONPointers: []string{"/spec/replicas"}})
	live, desired := deployment(5, nil), deployment(1, nil)
	ssa := opts.LeaveIgnored(live, desired, true)
	if _, ok, _ := unstructured.NestedFieldNoCopy(ssa.Object, "spec", "replicas"); ok {
		t.Error("server-side apply still sends a field another owner changed")
	}
	csa := opts.LeaveIgnored(live, desired, false)
	if n, _, _ := unstructured.NestedInt64(csa.Object, "spec", "replicas"); n != 5 {
		t.Errorf("client-side apply sends replicas %d, want the live 5", n)
	}
	if opts.LeaveIgnored(nil, desired, true) != desired {
		t.Error("a create must send the field")
	}
	if n, _, _ := unstructured.NestedInt64(desired.Object, "spec", "replicas"); n != 1 {
		t.Error("LeaveIgnored changed its argument")
	}
}
