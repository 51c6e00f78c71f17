package apischema

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// DefaultKubeVersion is the Kubernetes version offline checks assume when
// none is given: the version khook is tested against (test/cluster).
const DefaultKubeVersion = "1.36"

// KubeVersion is a Kubernetes minor release.
type KubeVersion struct{ Major, Minor int }

func (v KubeVersion) String() string { return fmt.Sprintf("v%d.%d", v.Major, v.Minor) }

func (v KubeVersion) atLeast(major, minor int) bool {
	return v.Major > major || (v.Major == major && v.Minor >= minor)
}

// ParseKubeVersion reads "1.36", "v1.36" or "v1.36.3" (a server's
// gitVersion, "v1.36.3+k3s1" too).
func ParseKubeVersion(s string) (KubeVersion, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	parts := strings.SplitN(t, ".", 3)
	if len(parts) >= 2 {
		minor := parts[1] // "36", or "36+k3s1" in a two-part gitVersion
		if end := strings.IndexFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }); end >= 0 {
			minor = parts[1][:end]
		}
		maj, err1 := strconv.Atoi(parts[0])
		min, err2 := strconv.Atoi(minor)
		if err1 == nil && err2 == nil && maj > 0 && min >= 0 {
			return KubeVersion{maj, min}, nil
		}
	}
	return KubeVersion{}, fmt.Errorf("kube version %q is not a Kubernetes version: write it as 1.36", s)
}

// APIStatus is what a Kubernetes version says of an API version of a kind:
// removed (the server no longer serves it) or deprecated (served, but a
// later version removes it), with what replaces it. The data is the API
// machinery's own (k8s.io/api's generated prerelease-lifecycle methods),
// so it moves with the k8s.io/api version in go.mod.
type APIStatus struct {
	GVK         schema.GroupVersionKind
	Removed     bool
	Deprecated  bool
	RemovedIn   KubeVersion // zero when no removal is scheduled
	Replacement schema.GroupVersionKind
}

type (
	lifecycleRemoved     interface{ APILifecycleRemoved() (int, int) }
	lifecycleDeprecated  interface{ APILifecycleDeprecated() (int, int) }
	lifecycleReplacement interface {
		APILifecycleReplacement() schema.GroupVersionKind
	}
)

// APILifecycle says whether gvk is removed or deprecated in version v; nil
// when neither (or the kind is not a built-in one). A built-in kind whose
// type k8s.io/api has dropped since its removal answers from the data
// older k8s.io/api releases generated (lifecycle_dropped.go).
//
//go:generate go run gen_dropped.go
func APILifecycle(gvk schema.GroupVersionKind, v KubeVersion) *APIStatus {
	obj, err := scheme.Scheme.New(gvk)
	if err != nil {
		return droppedLifecycle(gvk, v)
	}
	st := &APIStatus{GVK: gvk}
	if r, ok := obj.(lifecycleRemoved); ok {
		if maj, min := r.APILifecycleRemoved(); maj > 0 {
			st.RemovedIn = KubeVersion{maj, min}
			st.Removed = v.atLeast(maj, min)
		}
	}
	if d, ok := obj.(lifecycleDeprecated); ok && !st.Removed {
		if maj, min := d.APILifecycleDeprecated(); maj > 0 {
			st.Deprecated = v.atLeast(maj, min)
		}
	}
	if r, ok := obj.(lifecycleReplacement); ok {
		st.Replacement = r.APILifecycleReplacement()
	}
	if !st.Removed && !st.Deprecated {
		return nil
	}
	return servedReplacement(st, v)
}

// servedReplacement follows st's replacement while v removed that too
// (flowcontrol v1alpha1 → v1beta3, itself removed → v1).
func servedReplacement(st *APIStatus, v KubeVersion) *APIStatus {
	for range 5 {
		next := APILifecycle(st.Replacement, v)
		if st.Replacement.Empty() || next == nil || !next.Removed || next.Replacement.Empty() {
			break
		}
		st.Replacement = next.Replacement
	}
	return st
}

// Error is the sentence: "policy/v1beta1 PodDisruptionBudget was removed
// in v1.25: use policy/v1", or the deprecation with the removal version.
func (s *APIStatus) Error() string {
	what := s.GVK.GroupVersion().String() + " " + s.GVK.Kind
	var msg string
	if s.Removed {
		msg = fmt.Sprintf("%s was removed in %s", what, s.RemovedIn)
	} else {
		msg = what + " is deprecated"
		if s.RemovedIn.Major > 0 {
			msg += fmt.Sprintf(" and removed in %s", s.RemovedIn)
		}
	}
	if !s.Replacement.Empty() {
		use := s.Replacement.GroupVersion().String()
		if s.Replacement.Kind != s.GVK.Kind {
			use += " " + s.Replacement.Kind
		}
		msg += ": use " + use
	}
	return msg
}

// IsRemovedAPI reports whether err is an object in an API version its
// Kubernetes version no longer serves.
func IsRemovedAPI(err error) bool {
	var st *APIStatus
	return errors.As(err, &st) && st.Removed
}

// droppedKind is the prerelease-lifecycle data of a kind k8s.io/api no
// longer defines (generated into lifecycle_dropped.go).
type droppedKind struct {
	deprecated, removed KubeVersion
	replacement         schema.GroupVersionKind
}

func droppedLifecycle(gvk schema.GroupVersionKind, v KubeVersion) *APIStatus {
	d, ok := droppedKinds[gvk]
	if !ok {
		return nil
	}
	st := &APIStatus{GVK: gvk, RemovedIn: d.removed, Replacement: d.replacement}
	st.Removed = d.removed.Major > 0 && v.atLeast(d.removed.Major, d.removed.Minor)
	st.Deprecated = !st.Removed && d.deprecated.Major > 0 && v.atLeast(d.deprecated.Major, d.deprecated.Minor)
	if !st.Removed && !st.Deprecated {
		return nil
	}
	return servedReplacement(st, v)
}
