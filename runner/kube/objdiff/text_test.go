package objdiff

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/redact"
)

func textObj(y map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: y}
}

func TestObjectDiffHidesChurnAndMasksSecrets(t *testing.T) {
	live := textObj(map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "creds", "namespace": "demo", "uid": "1234", "resourceVersion": "7",
			"creationTimestamp": "2026-01-01T00:00:00Z", "managedFields": []any{map[string]any{"manager": "khook"}},
			"annotations": map[string]any{"kubectl.kubernetes.io/last-applied-configuration": `{"stringData":{"password":"old-secret"}}`}},
		"data": map[string]any{"password": "b2xkLXNlY3JldA==", "user": "YWRtaW4="},
	})
	desired := live.DeepCopy()
	desired.Object["data"] = map[string]any{"password": "bmV3LXNlY3JldA==", "user": "YWRtaW4="}
	desired.SetResourceVersion("8")
	d, err := Text(Title(live), live, desired, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"b2xkLXNlY3JldA==", "bmV3LXNlY3JldA==", "old-secret", "YWRtaW4=", "managedFields", "resourceVersion", "uid:", "creationTimestamp", "last-applied"} {
		if strings.Contains(d, leak) {
			t.Errorf("diff shows %q:\n%s", leak, d)
		}
	}
	if !strings.Contains(d, "-  password: '***'") || !strings.Contains(d, "+  password: '*** (value 3)'") {
		t.Errorf("diff does not show the masked change:\n%s", d)
	}
	if strings.Contains(d, "-  user:") || strings.Contains(d, "+  user:") {
		t.Errorf("an unchanged secret key shows as a change:\n%s", d)
	}
	if !strings.HasPrefix(d, "--- live/v1/Secret/demo/creds\n+++ planned/v1/Secret/demo/creds\n") {
		t.Errorf("diff header:\n%s", d)
	}
}

func TestObjectDiffOfEqualObjectsIsEmpty(t *testing.T) {
	a := textObj(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x", "resourceVersion": "1"}})
	b := a.DeepCopy()
	b.SetResourceVersion("2")
	if d, err := Text("x", a, b, Options{}, nil); err != nil || d != "" {
		t.Errorf("diff of objects differing only in churn = %q, %v", d, err)
	}
	created, _ := Text("x", nil, a, Options{}, nil)
	if !strings.HasPrefix(created, "--- /dev/null\n+++ planned/x\n@@ -0,0 +1,") {
		t.Errorf("diff of a new object:\n%s", created)
	}
}

// A field whose planned value is a secret (decrypted from a sops file) is
// masked on the live side too: the old value was a secret of an earlier run.
func TestObjectDiffMasksTheLiveSideOfASecretField(t *testing.T) {
	r := redact.New()
	r.Add("new-Secret-value")
	live := textObj(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x"},
		"data": map[string]any{"greeting": "old-Secret-value", "plain": "a"}})
	desired := live.DeepCopy()
	desired.Object["data"] = map[string]any{"greeting": "new-Secret-value", "plain": "b"}
	d, err := Text("x", live, desired, Options{}, r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(d, "old-Secret-value") || strings.Contains(d, "new-Secret-value") ||
		!strings.Contains(d, "-  greeting: '***'") || !strings.Contains(d, "+  greeting: '*** (value 2)'") || !strings.Contains(d, "+  plain: b") {
		t.Errorf("diff:\n%s", d)
	}
	if live.Object["data"].(map[string]any)["greeting"] != "old-Secret-value" {
		t.Error("the diff changed the live object it was given")
	}
	same := live.DeepCopy()
	same.Object["data"] = map[string]any{"greeting": "new-Secret-value", "plain": "a"}
	if d, _ := Text("x", same, same.DeepCopy(), Options{}, r); d != "" {
		t.Errorf("an unchanged secret field shows:\n%s", d)
	}
}
