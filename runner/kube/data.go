package kube

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/spec"
	"github.com/khook/khook/words"
)

// HoldsData reports whether deleting obj deletes data: a
// PersistentVolumeClaim, a PersistentVolume, or a StatefulSet whose
// persistentVolumeClaimRetentionPolicy deletes its claims with it (the
// controller makes them its dependents). Such an object is deleted, pruned
// or replaced only when the spec says so (deleteData, prune: {data: true},
// its own khook.io/on-immutable: recreate).
func HoldsData(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	switch {
	case gvk.Group == "" && (gvk.Kind == "PersistentVolumeClaim" || gvk.Kind == "PersistentVolume"):
		return true
	case gvk.Group == "apps" && gvk.Kind == "StatefulSet":
		return ClaimsDeletedWith(obj)
	}
	return false
}

// ClaimsDeletedWith reports whether a StatefulSet's claims go when it is
// deleted (persistentVolumeClaimRetentionPolicy whenDeleted: Delete).
func ClaimsDeletedWith(sts *unstructured.Unstructured) bool {
	v, _, _ := unstructured.NestedString(sts.Object, "spec", "persistentVolumeClaimRetentionPolicy", "whenDeleted")
	return v == "Delete"
}

// DataOf says what data deleting live takes with it, for the plan:
// "its data (volume pvc-1, 1Gi, reclaimPolicy Delete)", "its 2
// PersistentVolumeClaims data-db-0, data-db-1 (...)". An error means khook
// cannot tell: the caller keeps the object and says why.
func (c *Clients) DataOf(ctx context.Context, live *unstructured.Unstructured) (string, error) {
	switch live.GetKind() {
	case "PersistentVolumeClaim":
		volume, _, _ := unstructured.NestedString(live.Object, "spec", "volumeName")
		if volume == "" {
			return "its data (not bound to a volume yet)", nil
		}
		pv, err := c.Typed.CoreV1().PersistentVolumes().Get(ctx, volume, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("cannot read its volume %s: %w", volume, c.Explain(err))
		}
		size := pv.Spec.Capacity.Storage()
		return fmt.Sprintf("its data (volume %s, %s, reclaimPolicy %s)", volume, size, pv.Spec.PersistentVolumeReclaimPolicy), nil
	case "PersistentVolume":
		policy, _, _ := unstructured.NestedString(live.Object, "spec", "persistentVolumeReclaimPolicy")
		size, _, _ := unstructured.NestedString(live.Object, "spec", "capacity", "storage")
		return fmt.Sprintf("its data (%s, reclaimPolicy %s)", size, policy), nil
	case "StatefulSet":
		claims, err := c.Typed.CoreV1().PersistentVolumeClaims(live.GetNamespace()).List(ctx, metav1.ListOptions{})
		if err != nil {
			return "", fmt.Errorf("cannot list its PersistentVolumeClaims: %w", c.Explain(err))
		}
		var names []string
		for _, pvc := range claims.Items {
			for _, ref := range pvc.OwnerReferences {
				if ref.UID == live.GetUID() {
					names = append(names, pvc.Name)
				}
			}
		}
		if len(names) == 0 {
			return "its PersistentVolumeClaims once it makes any (persistentVolumeClaimRetentionPolicy whenDeleted: Delete)", nil
		}
		return fmt.Sprintf("its %d %s %s and their data (persistentVolumeClaimRetentionPolicy whenDeleted: Delete)",
			len(names), words.Plural(len(names), "PersistentVolumeClaim", "PersistentVolumeClaims"), strings.Join(names, ", ")), nil
	}
	return "", nil
}

// LosesAddress says what replacing a Service of type LoadBalancer loses:
// its load balancer and the address it was given; "" for another object.
func LosesAddress(live *unstructured.Unstructured) string {
	if live.GetKind() != "Service" || live.GroupVersionKind().Group != "" {
		return ""
	}
	if t, _, _ := unstructured.NestedString(live.Object, "spec", "type"); t != "LoadBalancer" {
		return ""
	}
	ingress, _, _ := unstructured.NestedSlice(live.Object, "status", "loadBalancer", "ingress")
	var addrs []string
	for _, i := range ingress {
		m, _ := i.(map[string]any)
		for _, k := range []string{"ip", "hostname"} {
			if s, _ := m[k].(string); s != "" {
				addrs = append(addrs, s)
			}
		}
	}
	if len(addrs) == 0 {
		return "it loses its load balancer (no address assigned yet)"
	}
	return "it loses its load balancer address " + strings.Join(addrs, ", ") + " (a new one is assigned)"
}

// ReplaceHeldBack refuses onImmutable: recreate on an object that holds
// data (as written or live: the live claim retention is what deletes the
// claims) without its own annotation khook.io/on-immutable: recreate, the
// one word that replaces it with its data. nil when it may be replaced, or
// when Recreates keeps it for another reason (a Namespace, a CRD).
func (c *Clients) ReplaceHeldBack(ctx context.Context, obj, live *unstructured.Unstructured) error {
	if _, ok := obj.GetAnnotations()[spec.OnImmutableAnnotation]; ok || (!HoldsData(obj) && !HoldsData(live)) {
		return nil
	}
	what, err := c.DataOf(ctx, live)
	if err != nil {
		return fmt.Errorf("cannot replace %s (an immutable field changes; onImmutable: recreate): it holds data and khook cannot tell what: %w", ObjectName(live), err)
	}
	return fmt.Errorf("cannot replace %s (an immutable field changes; onImmutable: recreate): replacing it deletes %s; annotate it %s: %s to replace it with its data",
		ObjectName(live), what, spec.OnImmutableAnnotation, spec.OnImmutableRecreate)
}

// ReplaceLoses says what replacing live loses beyond the object: its data
// (an annotated object that holds data), its load balancer address.
func (c *Clients) ReplaceLoses(ctx context.Context, live *unstructured.Unstructured) (string, error) {
	if HoldsData(live) {
		what, err := c.DataOf(ctx, live)
		if err != nil {
			return "", fmt.Errorf("cannot replace %s: it holds data and khook cannot tell what: %w", ObjectName(live), err)
		}
		return "deletes " + what, nil
	}
	return LosesAddress(live), nil
}
