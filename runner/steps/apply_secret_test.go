package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/runner/kube/objdiff"
)

func stringDataSecret(name, password string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\ntype: Opaque\ndata:\n  user: YWRtaW4=\nstringData:\n  password: %q\n", name, password)
}

// The API server moves stringData into data, so a request computed from
// stringData never matches the live Secret; apply must still send nothing
// once the Secret holds the manifest's values.
func TestApplySecretStringDataConverges(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, writes := newTestEnv(t)
	x := NewApplyExecutor(env)

	st := applyStep(ns, stringDataSecret("db", "one"))
	if out := run(t, x, st); out.Writes != 1 || writes.n.Load() != 1 {
		t.Errorf("first apply: %q, %d writes, %d counted; want 1", out.Detail, out.Writes, writes.n.Load())
	}
	writes.n.Store(0)
	if out := run(t, x, st); out.Detail != "unchanged 1 object" || out.Writes != 0 || writes.n.Load() != 0 {
		t.Errorf("converged re-run: %q, %d writes, %d counted; want unchanged and no write", out.Detail, out.Writes, writes.n.Load())
	}

	writes.n.Store(0)
	st = applyStep(ns, stringDataSecret("db", "two"))
	if out := run(t, x, st); out.Detail != "configured 1 object" || out.Writes != 1 || writes.n.Load() != 1 {
		t.Errorf("changed value: %q, %d writes, %d counted; want configured with 1 write", out.Detail, out.Writes, writes.n.Load())
	}
	s := getSecret(t, ns, "db")
	if string(s.Data["password"]) != "two" || string(s.Data["user"]) != "admin" {
		t.Errorf("live data after the change: %q", s.Data)
	}
	writes.n.Store(0)
	if out := run(t, x, st); out.Writes != 0 || writes.n.Load() != 0 {
		t.Errorf("converged after the change: %q, %d writes, %d counted", out.Detail, out.Writes, writes.n.Load())
	}
}

// A Secret last applied with stringData in its record (by kubectl, or by a
// khook before stringData was normalised) gets one write that moves the
// record to data, and none after.
func TestApplySecretOldStringDataRecordMigratesOnce(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	record, err := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata":   map[string]any{"name": "old", "namespace": ns},
		"data":       map[string]any{"user": "YWRtaW4="},
		"stringData": map[string]any{"password": "one"},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = testCluster.Client.CoreV1().Secrets(ns).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "old", Annotations: map[string]string{objdiff.LastAppliedAnnotation: string(record)}},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"user": []byte("admin"), "password": []byte("one")},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	env, writes := newTestEnv(t)
	x := NewApplyExecutor(env)
	st := applyStep(ns, stringDataSecret("old", "one"))
	if out := run(t, x, st); out.Writes != 1 || writes.n.Load() != 1 {
		t.Errorf("first apply over the old record: %q, %d writes, %d counted; want 1", out.Detail, out.Writes, writes.n.Load())
	}
	s := getSecret(t, ns, "old")
	if string(s.Data["password"]) != "one" || string(s.Data["user"]) != "admin" {
		t.Errorf("live data after the migration: %q", s.Data)
	}
	writes.n.Store(0)
	if out := run(t, x, st); out.Writes != 0 || writes.n.Load() != 0 {
		t.Errorf("re-run after the migration: %q, %d writes, %d counted; want none", out.Detail, out.Writes, writes.n.Load())
	}
}

func getSecret(t *testing.T, ns, name string) *corev1.Secret {
	t.Helper()
	s, err := testCluster.Client.CoreV1().Secrets(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("cannot read secret %s/%s: %v", ns, name, err)
	}
	return s
}
