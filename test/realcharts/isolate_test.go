package realcharts

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// namespacedKinds are the namespaced objects a chart's arm leaves
// terminating in the release namespace that the next arm creates anew.
var namespacedKinds = []schema.GroupVersionResource{
	{Version: "v1", Resource: "pods"}, {Version: "v1", Resource: "services"},
	{Version: "v1", Resource: "serviceaccounts"}, {Version: "v1", Resource: "configmaps"},
	{Version: "v1", Resource: "secrets"}, {Version: "v1", Resource: "persistentvolumeclaims"},
	{Group: "apps", Version: "v1", Resource: "deployments"}, {Group: "apps", Version: "v1", Resource: "statefulsets"},
	{Group: "apps", Version: "v1", Resource: "daemonsets"}, {Group: "batch", Version: "v1", Resource: "jobs"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
}

// armGoneWithin bounds the wait for an arm's objects: a CRD's finalizer
// deletes its custom resources first, and a loaded CI machine is slow.
const armGoneWithin = 3 * time.Minute

// awaitArmGone returns once nothing the previous arm deleted is still
// terminating: the chart's CRDs (cluster-scoped, so the next arm creates
// the same names), the release's webhooks and APIServices, and the release
// namespace's objects. A CRD helm kept (no deletion) is not awaited: it is
// meant to meet the next arm. It fails the test naming what is still
// terminating and what holds it (a CRD's Terminating condition says why its
// finalizer cannot finish).
func awaitArmGone(t *testing.T, release, ns string, crdNames []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), armGoneWithin)
	defer cancel()
	var left []string
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		left = terminating(ctx, t, release, ns, crdNames)
		return len(left) == 0, nil
	})
	if err != nil {
		t.Fatalf("the previous arm's objects of %s were still terminating after %s, and the next arm would meet them: %s", release, armGoneWithin, strings.Join(left, "; "))
	}
}

// terminating names what of the arm is being deleted and not gone yet.
func terminating(ctx context.Context, t *testing.T, release, ns string, crdNames []string) []string {
	d := dyn(t)
	var left []string
	for _, name := range crdNames {
		crd, err := d.Resource(crds).Get(ctx, name, metav1.GetOptions{})
		if err == nil && crd.GetDeletionTimestamp() != nil {
			left = append(left, "customresourcedefinition/"+name+" "+crdTerminating(crd))
		} else if err != nil && !apierrors.IsNotFound(err) {
			left = append(left, fmt.Sprintf("customresourcedefinition/%s cannot be read: %v", name, err))
		}
	}
	// Templated CRDs (metallb's frr-k8s ones) carry the release's
	// annotation like its webhooks and APIServices; crds/ ones are by name above.
	for _, gvr := range clusterScoped {
		left = append(left, deleting(ctx, t, gvr, "", func(o *unstructured.Unstructured) bool {
			return o.GetAnnotations()["meta.helm.sh/release-name"] == release
		})...)
	}
	for _, gvr := range namespacedKinds {
		left = append(left, deleting(ctx, t, gvr, ns, func(*unstructured.Unstructured) bool { return true })...)
	}
	return left
}

func deleting(ctx context.Context, t *testing.T, gvr schema.GroupVersionResource, ns string, ours func(*unstructured.Unstructured) bool) []string {
	list, err := dyn(t).Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{fmt.Sprintf("%s in %q cannot be listed: %v", gvr.Resource, ns, err)}
	}
	var left []string
	for i := range list.Items {
		if o := &list.Items[i]; o.GetDeletionTimestamp() != nil && ours(o) {
			left = append(left, fmt.Sprintf("%s/%s (finalizers %v)", gvr.Resource, o.GetName(), o.GetFinalizers()))
		}
	}
	return left
}

// crdTerminating is what a CRD's Terminating condition says: why the
// apiextensions finalizer has not removed its custom resources yet.
func crdTerminating(crd *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Terminating" {
			return fmt.Sprintf("(Terminating: %v: %v; finalizers %v)", m["reason"], m["message"], crd.GetFinalizers())
		}
	}
	return fmt.Sprintf("(Terminating; finalizers %v)", crd.GetFinalizers())
}
