package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ignoreSpec is a helm step installing the demo chart as release "web"
// (Deployment and ConfigMap web-demo), with the given ignore rules.
func ignoreSpec(t *testing.T, ns, message, rules string) string {
	t.Helper()
	chart := filepath.Join(repoRoot, "test", "testdata", "charts", "demo")
	text := fmt.Sprintf(`apiVersion: khook.io/v1
kind: Khook
metadata: {name: ignore}
steps:
  - name: web
    helm: {chart: %s, release: web, namespace: %s, values: {replicaCount: 1, message: %s}}
%s`, chart, ns, message, rules)
	path := filepath.Join(t.TempDir(), "khook.yaml")
	must(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

func planExit(t *testing.T, file string) outcome {
	t.Helper()
	return khook(t, invocation{Args: []string{"plan", "-f", file, "--diff", "--detailed-exitcode"}})
}

// TestIgnoreRules: a field scaled or written out of band is drift without
// a rule; with one (a JSON pointer, or the writer's field manager) the plan
// exits 0 and apply leaves the field as it is.
func TestIgnoreRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := namespace(t)
	plain := ignoreSpec(t, ns, "hello", "")
	if out := applySpec(t, plain); out.Code != 0 {
		t.Fatalf("install: exit %d\n%s", out.Code, out.Stderr)
	}

	// The Deployment scaled out of band (an update: kubectl scale's manager).
	// A patch of the scale subresource, as kubectl scale sends: an update
	// of a fetched Scale races the controllers writing the Deployment.
	_, err := kc.Client.AppsV1().Deployments(ns).Patch(ctx, "web-demo", types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{FieldManager: "kubectl-scale"}, "scale")
	must(t, err)
	if out := planExit(t, plain); out.Code != 2 {
		t.Fatalf("without a rule the scaled Deployment must be drift (exit 2), got %d\n%s%s", out.Code, out.Stdout, out.Stderr)
	}
	replicas := ignoreSpec(t, ns, "hello", `    ignore:
      - target: {group: apps, kind: Deployment, name: "web*"}
        jsonPointers: [/spec/replicas]
`)
	if out := planExit(t, replicas); out.Code != 0 {
		t.Fatalf("with /spec/replicas ignored the plan must exit 0, got %d\n%s%s", out.Code, out.Stdout, out.Stderr)
	}
	// An upgrade (a changed value) leaves the ignored field too.
	replicas = ignoreSpec(t, ns, "changed", `    ignore:
      - target: {group: apps, kind: Deployment, name: "web*"}
        jsonPointers: [/spec/replicas]
`)
	if out := applySpec(t, replicas); out.Code != 0 {
		t.Fatalf("apply: exit %d\n%s", out.Code, out.Stderr)
	}
	d, err := kc.Client.AppsV1().Deployments(ns).Get(ctx, "web-demo", metav1.GetOptions{})
	must(t, err)
	if *d.Spec.Replicas != 5 {
		t.Errorf("apply reverted the ignored replica count to %d", *d.Spec.Replicas)
	}

	// A field another manager writes with server-side apply.
	patch := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web-demo"},"data":{"message":"injected"}}`)
	force := true
	_, err = kc.Client.CoreV1().ConfigMaps(ns).Patch(ctx, "web-demo", types.ApplyPatchType, patch, metav1.PatchOptions{FieldManager: "cainjector", Force: &force})
	must(t, err)
	if out := planExit(t, replicas); out.Code != 2 {
		t.Fatalf("a field cainjector wrote must be drift without its rule (exit 2), got %d\n%s%s", out.Code, out.Stdout, out.Stderr)
	}
	managers := ignoreSpec(t, ns, "changed", `ignore:
  - jsonPointers: [/spec/replicas]
  - managers: [cainjector]
`)
	if out := planExit(t, managers); out.Code != 0 {
		t.Fatalf("with cainjector's fields ignored the plan must exit 0, got %d\n%s%s", out.Code, out.Stdout, out.Stderr)
	}
	if out := applySpec(t, managers); out.Code != 0 {
		t.Fatalf("apply: exit %d\n%s", out.Code, out.Stderr)
	}
	cm, err := kc.Client.CoreV1().ConfigMaps(ns).Get(ctx, "web-demo", metav1.GetOptions{})
	must(t, err)
	if cm.Data["message"] != "injected" {
		t.Errorf("apply reverted cainjector's field to %q", cm.Data["message"])
	}
}
