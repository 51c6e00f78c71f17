package policy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
)

// examples loads a spec with examples/policies' rules and admission policy.
func examples(t testing.TB) (*spec.Spec, *Set) {
	t.Helper()
	dir := filepath.Join("..", "..", "examples", "policies")
	s, err := spec.Load(spec.LoadOptions{Files: []string{filepath.Join(dir, "khook.yaml")},
		Policies: []string{filepath.Join(dir, "rules.yaml"), filepath.Join(dir, "admission.yaml")}})
	if err != nil {
		t.Fatal(err)
	}
	set, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	return s, set
}

func obj(t testing.TB, y string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(y), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func change(a model.Action, desired, live *unstructured.Unstructured) Change {
	ref := desired
	if ref == nil {
		ref = live
	}
	return Change{Action: a, Kind: ref.GetKind(), Namespace: ref.GetNamespace(), Name: ref.GetName(), Desired: desired, Live: live}
}

const goodDeploy = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, labels: {team: search}}
spec:
  replicas: 2
  template:
    spec:
      containers:
        - name: web
          image: registry.local:5000/web:1.2.3
          resources: {limits: {memory: 64Mi}}
`

// Each example rule fires on the change it is about, and not on a
// compliant one.
func TestExampleRules(t *testing.T) {
	s, set := examples(t)
	helm := &spec.Step{Name: "app", Helm: &spec.Helm{}}
	apply := s.Step("web")
	chart := func(v string) *unstructured.Unstructured {
		o := obj(t, goodDeploy)
		o.SetLabels(map[string]string{"team": "search", "helm.sh/chart": "web-" + v})
		return o
	}
	cases := []struct {
		name   string
		step   *spec.Step
		c      Change
		policy string // "" : no violation
		effect string
	}{
		{"compliant", apply, change(model.ActionCreate, obj(t, goodDeploy), nil), "", ""},
		{"latest", apply, change(model.ActionCreate, obj(t, strings.Replace(goodDeploy, "web:1.2.3", "web:latest", 1)), nil), "no-latest-images", model.EffectDeny},
		{"untagged", apply, change(model.ActionPlanned, obj(t, strings.Replace(goodDeploy, "web:1.2.3", "web", 1)), nil), "no-latest-images", model.EffectDeny},
		{"no limits", apply, change(model.ActionCreate, obj(t, strings.Replace(goodDeploy, "resources: {limits: {memory: 64Mi}}", "resources: {}", 1)), nil), "resource-limits-required", model.EffectDeny},
		{"one replica", apply, change(model.ActionConfigure, obj(t, strings.Replace(goodDeploy, "replicas: 2", "replicas: 1", 1)), obj(t, goodDeploy)), "single-replica", model.EffectWarn},
		{"pvc delete", apply, change(model.ActionDelete, nil, obj(t, "{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data, namespace: shop}}")), "no-pvc-or-namespace-delete", model.EffectDeny},
		{"namespace delete", apply, change(model.ActionDelete, nil, obj(t, "{apiVersion: v1, kind: Namespace, metadata: {name: shop}}")), "no-pvc-or-namespace-delete", model.EffectDeny},
		{"replace in prod", apply, change(model.ActionReplace, obj(t, "{apiVersion: v1, kind: Service, metadata: {name: web, namespace: prod}}"), obj(t, "{apiVersion: v1, kind: Service, metadata: {name: web, namespace: prod}}")), "no-replace-in-prod", model.EffectDeny},
		{"replace in dev", apply, change(model.ActionReplace, obj(t, "{apiVersion: v1, kind: Service, metadata: {name: web, namespace: dev}}"), obj(t, "{apiVersion: v1, kind: Service, metadata: {name: web, namespace: dev}}")), "", ""},
		{"chart downgrade", helm, change(model.ActionConfigure, chart("1.9.0"), chart("1.10.0")), "no-chart-downgrade", model.EffectDeny},
		{"chart upgrade", helm, change(model.ActionConfigure, chart("1.10.0"), chart("1.9.0")), "", ""},
		{"cluster-admin", apply, change(model.ActionCreate, obj(t, "{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRoleBinding, metadata: {name: ci}, roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}, subjects: [{kind: ServiceAccount, name: ci, namespace: ci}]}"), nil), "no-new-cluster-admin", model.EffectDeny},
		{"no team label", apply, change(model.ActionCreate, obj(t, strings.Replace(goodDeploy, "labels: {team: search}", "labels: {}", 1)), nil), "require-team-label (binding require-team-label)", model.EffectDeny},
		{"config without owner", apply, change(model.ActionCreate, obj(t, "{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: shop}}"), nil), "settings-have-an-owner", model.EffectWarn},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vs := set.Check(context.Background(), tc.step, []Change{tc.c}).Violations
			if tc.policy == "" {
				if len(vs) > 0 {
					t.Errorf("violations %v, want none", vs)
				}
				return
			}
			if len(vs) != 1 || vs[0].Policy != tc.policy || vs[0].Effect != tc.effect || vs[0].Message == "" {
				t.Errorf("violations %v, want one %s %s", vs, tc.effect, tc.policy)
			}
		})
	}
}

// A rule over its CEL cost limit is a deny naming the rule, at once.
func TestRuleOverBudgetFails(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "khook.yaml")
	r := "[" + strings.Repeat("1,", 99) + "1]"
	os.WriteFile(f, []byte(`apiVersion: khook.io/v1
kind: Khook
metadata: {name: x}
policies:
  - name: spin
    warn: >-
      `+r+`.all(a, `+r+`.all(b, `+r+`.all(c, `+r+`.all(d, a+b+c+d > 0))))
steps:
  - {name: w, wait: {for: "delete", on: "configmap/x"}}
`), 0o644)
	s, err := spec.Load(spec.LoadOptions{Files: []string{f}})
	if err != nil {
		t.Fatal(err)
	}
	set, _ := New(s)
	vs := set.Check(context.Background(), s.Steps[0], []Change{change(model.ActionCreate, obj(t, "{kind: ConfigMap, metadata: {name: x}}"), nil)}).Violations
	if len(vs) != 1 || vs[0].Effect != model.EffectDeny || vs[0].Policy != "spin" || !strings.Contains(vs[0].Message, "cost limit") {
		t.Errorf("violations %v, want a deny of spin over its cost limit", vs)
	}
}

// BenchmarkCheckPlatform is the policies' share of a platform plan: 2,000
// created objects (the platform workload's size) against the examples'
// 10 rules (7 khook rules, the spec's own, and an admission policy through
// its binding and params). Compare with the plan's time
// (test/bench BenchmarkPlatform): docs/policies.md has the figures.
func BenchmarkCheckPlatform(b *testing.B) {
	s, set := examples(b)
	var changes []Change
	for i := range 2000 {
		o := obj(b, goodDeploy)
		o.SetName(o.GetName() + "-" + string(rune('a'+i%26)) + strings.Repeat("x", i/26))
		changes = append(changes, change(model.ActionCreate, o, nil))
	}
	st := s.Step("web")
	b.ResetTimer()
	for b.Loop() {
		if vs := set.Check(context.Background(), st, changes).Violations; len(vs) != 0 {
			b.Fatalf("violations: %v", vs[0])
		}
	}
}
