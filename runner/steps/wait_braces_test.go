package steps

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/spec"
)

// A braced jsonpath ends at its own closing brace, at validation and at run
// time alike: a value with braces is the value (issue 11: "a}b" validated
// and then failed at run time; "{{x}}" validated and ran with no value).
func TestWaitBracedJSONPathMeansTheSameWhenValidatedAndRun(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, _ := newTestEnv(t)
	cm := createConfigMap(t, ns, "braces", map[string]string{"k": "a}b"})
	cm.Annotations = map[string]string{"tpl": "{{x}}"}
	if _, err := testCluster.Client.CoreV1().ConfigMaps(ns).Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ for_, met, unmet string }{
		{"jsonpath={.data.k}=a}b", "jsonpath={.data.k}=a}b", "jsonpath={.data.k}=a}c"},
		{"jsonpath={.metadata.annotations.tpl}={{x}}", "jsonpath={.metadata.annotations.tpl}={{x}}", "jsonpath={.metadata.annotations.tpl}={{y}}"},
	} {
		// Validation: the spec loads, and keeps the value.
		s := loadWaitSpec(t, ns, tc.for_)
		w, err := s.Steps[0].Wait.Condition()
		if err != nil || w.String() != tc.met {
			t.Fatalf("%s: validated as %q, %v", tc.for_, w, err)
		}
		// Run time: the same step is met on the live object...
		out := run(t, NewWaitExecutor(env), s.Steps[0])
		if want := tc.met + " met on configmap/braces in " + ns; out.Detail != want {
			t.Errorf("detail %q, want %q", out.Detail, want)
		}
		// ...and another value is not.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err = NewWaitExecutor(env).Execute(ctx, waitStep(spec.Wait{For: tc.unmet, On: "configmap/braces", Namespace: ns}))
		cancel()
		if err == nil {
			t.Errorf("%s was met on a ConfigMap that does not match", tc.unmet)
		}
	}
}

func loadWaitSpec(t *testing.T, ns, for_ string) *spec.Spec {
	t.Helper()
	file := filepath.Join(t.TempDir(), "khook.yaml")
	doc := fmt.Sprintf("apiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: braces\nsteps:\n  - name: wait\n    wait:\n      for: '%s'\n      on: configmap/braces\n      namespace: %s\n", for_, ns)
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := spec.Load(spec.LoadOptions{Files: []string{file}})
	if err != nil {
		t.Fatalf("the spec does not validate: %v", err)
	}
	return s
}
