package steps

import (
	"context"
	"fmt"
	"github.com/khook/khook/model"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/runner"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/test/cluster"
)

// deadline is a step context with a per-attempt deadline, like the engine's.
func deadline(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// stepContext is the context the engine gives an attempt of st: its
// deadline is st's timeout, and a wait that runs out of it says so.
func stepContext(t testing.TB, st *spec.Step) context.Context {
	ctx := deadline(t, st.Timeout.D())
	dl, _ := ctx.Deadline()
	return model.WithStepTimeout(ctx, dl, st.Timeout.D())
}

// run executes a step that must succeed.
func run(t *testing.T, x runner.Executor, st *spec.Step) runner.Outcome {
	t.Helper()
	out, err := x.Execute(deadline(t, time.Minute), st)
	if err != nil {
		t.Fatalf("step %s failed: %v", st.Name, err)
	}
	return out
}

// runErr executes a step that must fail with an error containing every want.
func runErr(t *testing.T, ctx context.Context, x runner.Executor, st *spec.Step, want ...string) error {
	t.Helper()
	if dl, ok := ctx.Deadline(); ok && st.Timeout > 0 {
		// As the engine's attempt: ctx's deadline is the step's timeout, so a
		// wait that runs out of it says st.Timeout however late it began.
		ctx = model.WithStepTimeout(ctx, dl, st.Timeout.D())
	}
	_, err := x.Execute(ctx, st)
	if err == nil {
		t.Fatalf("step %s succeeded, want an error containing %q", st.Name, want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("step %s error:\n  %v\nwant it to contain %q", st.Name, err, w)
		}
	}
	return err
}

func applyStep(ns string, docs ...string) *spec.Step {
	return &spec.Step{Name: "apply", Apply: &spec.Apply{Namespace: ns, Manifests: []spec.Source{{Inline: strings.Join(docs, "\n---\n")}}}}
}

func configMap(name, value string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  labels: {app: demo}\ndata:\n  key: %q\n", name, value)
}

// deployment renders a Deployment manifest; podAnnotations steer kwok
// (cluster.NeverReadyAnnotation and friends).
func deployment(name string, replicas int, podAnnotations map[string]string) string {
	annots := ""
	for k, v := range podAnnotations {
		annots += fmt.Sprintf("\n        %s: %q", k, v)
	}
	if annots != "" {
		annots = "\n      annotations:" + annots
	}
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
spec:
  replicas: %[2]d
  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}%[3]s
    spec:
      containers:
      - name: app
        image: registry.example/app:1.0
`, name, replicas, annots)
}

// crd renders a namespaced CRD of kind Widget in its own group, so parallel
// tests never share one.
func crd(group string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.%[1]s
spec:
  group: %[1]s
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wdg]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`, group)
}

func widget(group, name, size string) string {
	return fmt.Sprintf("apiVersion: %s/v1\nkind: Widget\nmetadata: {name: %s}\nspec: {size: %q}\n", group, name, size)
}

// groupFor derives a unique API group from a test namespace.
func groupFor(ns string) string { return ns + ".khook.test" }

func createDeployment(t *testing.T, ns, name string, replicas int32, podAnnotations map[string]string) {
	t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: podAnnotations},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1.0"}}},
			},
		},
	}
	if _, err := testCluster.Client.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func createConfigMap(t testing.TB, ns, name string, data map[string]string) *corev1.ConfigMap {
	t.Helper()
	cm, err := testCluster.Client.CoreV1().ConfigMaps(ns).Create(context.Background(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": "demo"}}, Data: data},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

var neverReady = map[string]string{cluster.NeverReadyAnnotation: "true"}
