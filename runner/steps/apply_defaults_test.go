package steps

import (
	"context"
	"fmt"
	"testing"
)

// ruleCRD is a CRD whose schema defaults a field inside list items, as
// kyverno's ClusterPolicy does for its rules: a merge patch replaces the
// list whole, so the manifest differs from the live object on every run.
func ruleCRD(group string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: policies.%[1]s
spec:
  group: %[1]s
  scope: Namespaced
  names: {plural: policies, singular: policy, kind: Policy}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              rules:
                type: array
                items:
                  type: object
                  properties:
                    name: {type: string}
                    message: {type: string}
                    audit: {type: boolean, default: true}
`, group)
}

func policy(group, message string) string {
	return fmt.Sprintf("apiVersion: %s/v1\nkind: Policy\nmetadata: {name: p}\nspec:\n  rules:\n  - name: r\n    message: %q\n", group, message)
}

func TestApplyConvergedWhenTheServerDefaultsListItems(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, writes := newTestEnv(t)
	x := NewApplyExecutor(env)
	g := "rules." + groupFor(ns)
	t.Cleanup(func() {
		_ = testCluster.Client.Discovery().RESTClient().Delete().
			AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/policies." + g).Do(context.Background()).Error()
	})
	run(t, x, applyStep(ns, ruleCRD(g)))
	if out := run(t, x, applyStep(ns, policy(g, "one"))); out.Detail != "created 1 object" {
		t.Fatalf("first apply: %q", out.Detail)
	}
	writes.n.Store(0)
	if out := run(t, x, applyStep(ns, policy(g, "one"))); out.Detail != "unchanged 1 object" || out.Writes != 0 || writes.n.Load() != 0 {
		t.Errorf("converged re-run: %q, %d writes, %d counted; want unchanged and no write", out.Detail, out.Writes, writes.n.Load())
	}
	if out := run(t, x, applyStep(ns, policy(g, "two"))); out.Detail != "configured 1 object" || out.Writes != 1 {
		t.Errorf("changed re-run: %q, %d writes; want configured", out.Detail, out.Writes)
	}
}
