package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/spec"
	"github.com/khook/khook/words"
)

// Refusal is the API server's reason for refusing a write, in one line: for
// an invalid object each field and why, without the rejected value (for a
// selector or a pod template that is a Go struct dump of kilobytes); for
// any other refusal (admission webhook, RBAC, quota) its message. Apply,
// patch and helm word every refusal with it, and plan shows apply's words.
func Refusal(err error) string {
	var se apierrors.APIStatus
	if errors.As(err, &se) && apierrors.IsInvalid(err) {
		if d := se.Status().Details; d != nil && len(d.Causes) > 0 {
			var parts []string
			for _, c := range d.Causes {
				msg := withoutValue(c.Message)
				if c.Field != "" {
					msg = c.Field + ": " + msg
				}
				parts = append(parts, msg)
			}
			return words.OneLine(strings.Join(parts, "; "))
		}
	}
	return words.OneLine(APIMessage(err))
}

// ImmutableField is the field an invalid-object refusal says is immutable
// ("" when it says nothing of the kind). A Service's clusterIP and
// loadBalancerClass say "may not change once set"; a StatefulSet's spec
// (its selector, claim templates, serviceName) says "Forbidden: updates to
// statefulset spec for fields other than ...".
func ImmutableField(err error) string {
	var se apierrors.APIStatus
	if !errors.As(err, &se) || !apierrors.IsInvalid(err) || se.Status().Details == nil {
		return ""
	}
	for _, c := range se.Status().Details.Causes {
		if strings.Contains(c.Message, "is immutable") || strings.Contains(c.Message, "may not change once set") ||
			strings.Contains(c.Message, "updates to statefulset spec for fields other than") {
			if c.Field != "" {
				return c.Field
			}
			return "(unnamed field)"
		}
	}
	return ""
}

// withoutValue drops the rejected value of a field error's message:
// "Invalid value: v1.LabelSelector{...}: field is immutable" is "field is
// immutable".
func withoutValue(msg string) string {
	const invalid = "Invalid value: "
	if !strings.HasPrefix(msg, invalid) {
		return msg
	}
	if i := strings.LastIndex(msg, ": "); i >= len(invalid) {
		return msg[i+2:]
	}
	return msg
}

// RefusedError is a write the API server refused (invalid object, admission
// denial, forbidden, quota): one sentence naming the object and the
// server's reason.
type RefusedError struct {
	Object string // "Deployment web/api"
	Reason string // Refusal's line
	// Field is the immutable field the refusal names, if any.
	Field string
	Err   error
}

func (e *RefusedError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("the API server rejected %s: %s (the field is immutable: onImmutable: recreate on the helm or apply step that writes the object replaces it)", e.Object, e.Reason)
	}
	return fmt.Sprintf("the API server rejected %s: %s", e.Object, e.Reason)
}
func (e *RefusedError) Unwrap() error { return e.Err }

// Refused words a refused write of the named object. It fails closed:
// every answer of the API server about the object is a refusal (invalid,
// forbidden, an admission webhook that denied, failed or timed out, quota,
// a conflict, an internal error), as apply would fail on it. nil only when
// there is nothing to refuse: no error, the object or its namespace not
// found (callers decide on absence), the server unreachable or the
// credentials rejected (IsUnreachable: the run stops), or the run's own
// context ending.
func Refused(name string, err error) *RefusedError {
	switch {
	case err == nil, apierrors.IsNotFound(err), IsUnreachable(err),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return nil
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return nil // not an answer of the API server: the caller's own error
	}
	return &RefusedError{Object: name, Reason: Refusal(err), Field: ImmutableField(err), Err: err}
}

// MissingNamespaceError is a write into a namespace that does not exist.
type MissingNamespaceError struct {
	Namespace string
	Err       error
}

func (e *MissingNamespaceError) Error() string { return e.Err.Error() }
func (e *MissingNamespaceError) Unwrap() error { return e.Err }

// Recreates reports whether an object whose immutable field changes is
// replaced (deleted, then created again): its own annotation
// khook.io/on-immutable says so, else the step's onImmutable does, except
// for a Namespace, a CRD, or what holds data (HoldsData: a claim, a
// volume, a StatefulSet whose claims go with it): replacing those deletes
// what they hold, so only their own annotation replaces them.
func Recreates(obj *unstructured.Unstructured, onImmutable string) bool {
	if v, ok := obj.GetAnnotations()[spec.OnImmutableAnnotation]; ok {
		return v == spec.OnImmutableRecreate
	}
	gvk := obj.GroupVersionKind()
	switch {
	case gvk.Group == "" && gvk.Kind == "Namespace", IsCRD(obj), HoldsData(obj):
		return false
	}
	return onImmutable == spec.OnImmutableRecreate
}

// Replace deletes an object with foreground propagation (its dependents
// go first: a Job's pods) and only while it has the UID read (never a
// replacement someone else made), then waits, by watch, until it is gone;
// the caller creates it again. ctx bounds the wait (the step's timeout).
func (c *Clients) Replace(ctx context.Context, m *meta.RESTMapping, live *unstructured.Unstructured) error {
	uid := live.GetUID()
	fg := metav1.DeletePropagationForeground
	err := c.resourceFor(m, live.GetNamespace()).Delete(ctx, live.GetName(), metav1.DeleteOptions{
		PropagationPolicy: &fg, Preconditions: &metav1.Preconditions{UID: &uid}})
	InvalidateLiveOf(ctx, m, live.GetNamespace())
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("cannot replace %s: the delete failed: %w", ObjectName(live), c.Explain(err))
	}
	if err := waitGone(ctx, c, []Deleted{{Mapping: m, Namespace: live.GetNamespace(), Name: live.GetName(), UID: uid}}); err != nil {
		return fmt.Errorf("cannot replace %s: %w", ObjectName(live), err)
	}
	return nil
}
