package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/model"
)

// kubectlClientSideCreate creates cm as `kubectl apply` (client-side) does
// for a missing object: the object carries its own last-applied
// annotation, and the write is kubectl's Update under the field manager
// kubectl-client-side-apply.
func kubectlClientSideCreate(t *testing.T, cm *corev1.ConfigMap) {
	t.Helper()
	cm.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
	last, err := json.Marshal(cm)
	must(t, err)
	cm.Annotations = map[string]string{corev1.LastAppliedConfigAnnotation: string(last) + "\n"}
	_, err = kc.Client.CoreV1().ConfigMaps(cm.Namespace).Create(context.Background(), cm,
		metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"})
	must(t, err)
}

func liveData(t *testing.T, ns, name string) map[string]string {
	t.Helper()
	cm, err := kc.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	must(t, err)
	return cm.Data
}

// TestTakeOver: objects a script created with kubectl apply (client-side)
// are adopted by a helm step with takeOwnership (plan names them) and by
// a serverSide apply step; a key then dropped from chart values and
// manifest is gone from both live objects. An object of another release
// is refused with that release's name.
func TestTakeOver(t *testing.T) {
	ns := namespace(t)
	for _, name := range []string{"scripted-helm", "scripted-ssa"} {
		kubectlClientSideCreate(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Data: map[string]string{"a": "1", "b": "2"}})
	}

	plan := khook(t, invocation{Args: []string{"plan", "-f", testdata("adopt", "adopt.yaml"), "--set", "NS=" + ns, "-o", "json"}})
	var p model.Plan
	if err := json.Unmarshal([]byte(plan.Stdout), &p); err != nil || plan.Code != 2 && plan.Code != 0 {
		t.Fatalf("plan: exit %d, %v\nstdout:\n%s\nstderr:\n%s", plan.Code, err, plan.Stdout, plan.Stderr)
	}
	if want := "takes ownership of configmap/scripted-helm in namespace " + ns; len(p.Steps) == 0 || !strings.Contains(p.Steps[0].Reason, want) {
		t.Errorf("the plan of the helm step does not say %q:\n%s", want, plan.Stdout)
	}

	out := applySpec(t, testdata("adopt", "adopt.yaml"), "NS="+ns)
	expectSteps(t, out, []want{{Name: "chart", Status: model.StatusOK, Attempts: 1}, {Name: "manifests", Status: model.StatusOK, Attempts: 1}})
	cm, err := kc.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), "scripted-helm", metav1.GetOptions{})
	must(t, err)
	if cm.Annotations["meta.helm.sh/release-name"] != "adopt" {
		t.Errorf("scripted-helm was not adopted by release adopt: annotations %v", cm.Annotations)
	}

	out = applySpec(t, testdata("adopt", "adopt-dropped.yaml"), "NS="+ns)
	expectSteps(t, out, []want{{Name: "chart", Status: model.StatusOK, Attempts: 1}, {Name: "manifests", Status: model.StatusOK, Attempts: 1}})
	for _, name := range []string{"scripted-helm", "scripted-ssa"} {
		if got := liveData(t, ns, name); len(got) != 1 || got["a"] != "1" {
			t.Errorf("%s: data %v after key b was dropped, want only a=1", name, got)
		}
	}

	// Another release's object is never taken.
	_, err = kc.Client.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: "owned-elsewhere", Namespace: ns, Labels: map[string]string{"app.kubernetes.io/managed-by": "Helm"},
		Annotations: map[string]string{"meta.helm.sh/release-name": "other", "meta.helm.sh/release-namespace": ns}}}, metav1.CreateOptions{})
	must(t, err)
	dir := t.TempDir()
	foreign := filepath.Join(dir, "foreign.yaml")
	must(t, os.WriteFile(foreign, []byte(`apiVersion: khook.io/v1
kind: Khook
metadata: {name: e2e-adopt-foreign}
steps:
  - name: chart
    helm:
      chart: `+testdata("charts", "e2e-adopt")+`
      release: thief
      namespace: ${NS}
      takeOwnership: true
      values: {name: owned-elsewhere, data: {a: "1"}}
`), 0o644))
	out = applySpec(t, foreign, "NS="+ns)
	expectSteps(t, out, []want{{Name: "chart", Status: model.StatusFailed, Attempts: 1,
		Error: "configmap/owned-elsewhere in namespace " + ns + " belongs to Helm release other in namespace " + ns}})
}
