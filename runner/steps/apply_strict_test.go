package steps

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/spec"
)

// typoDeployment has resourcess: for resources: under its container (line 16).
const typoDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: nginx
          resourcess:
            limits: {memory: 64Mi}
`

// An unknown field fails the apply with the API server's sentence and the
// field's file:line:col, client-side and server-side, and the object is not created.
func TestApplyUnknownFieldFailsStrictlyAtItsLine(t *testing.T) {
	t.Parallel()
	for _, serverSide := range []bool{false, true} {
		ns := testCluster.Namespace(t)
		env, _ := newTestEnv(t)
		if err := os.WriteFile(filepath.Join(env.BaseDir, "web.yaml"), []byte(typoDeployment), 0o644); err != nil {
			t.Fatal(err)
		}
		st := &spec.Step{Name: "apply", Apply: &spec.Apply{Namespace: ns, ServerSide: serverSide, Manifests: []spec.Source{{File: "web.yaml"}}}}
		x := NewApplyExecutor(env)
		err := runErr(t, deadline(t, time.Minute), x, st, "resourcess", "deployment.apps/web in namespace "+ns, filepath.Join(env.BaseDir, "web.yaml")+":16:11")
		t.Logf("server-side %v: %v", serverSide, err)
		_, gerr := testCluster.Client.AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{})
		if !apierrors.IsNotFound(gerr) {
			t.Errorf("server-side %v: the Deployment exists (%v), want nothing created", serverSide, gerr)
		}
	}
}
