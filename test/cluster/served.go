package cluster

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
)

// CreateServed creates a custom resource of a CRD just created: the API
// server's CRD handler serves the kind moments after the CRD is Established
// (its own informer lags the condition), so a NotFound is retried until the
// kind is served or 30s pass. There is no event to watch for this.
func CreateServed(t testing.TB, ri dynamic.ResourceInterface, obj *unstructured.Unstructured) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := ri.Create(ctx, obj, metav1.CreateOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil // not served yet
		}
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("creating %s %s: %v", obj.GetKind(), obj.GetName(), err)
	}
}
