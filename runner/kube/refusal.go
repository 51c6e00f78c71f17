package kube

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
			return oneLine(strings.Join(parts, "; "))
		}
	}
	return oneLine(APIMessage(err))
}

// ImmutableField is the field an invalid-object refusal says is immutable
// ("" when it says nothing of the kind).
func ImmutableField(err error) string {
	var se apierrors.APIStatus
	if !errors.As(err, &se) || !apierrors.IsInvalid(err) || se.Status().Details == nil {
		return ""
	}
	for _, c := range se.Status().Details.Causes {
		if strings.Contains(c.Message, "field is immutable") || strings.Contains(c.Message, "is immutable") {
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

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

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
		return fmt.Sprintf("the API server rejected %s: %s (an immutable field cannot change in place: set onImmutable: recreate to replace the object)", e.Object, e.Reason)
	}
	return fmt.Sprintf("the API server rejected %s: %s", e.Object, e.Reason)
}
func (e *RefusedError) Unwrap() error { return e.Err }

// Refused words a refused write of the named object; nil when err is not a
// refusal (not found, conflict, unreachable ...).
func Refused(name string, err error) *RefusedError {
	switch {
	case apierrors.IsInvalid(err), apierrors.IsForbidden(err), apierrors.IsBadRequest(err):
	default:
		return nil
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
