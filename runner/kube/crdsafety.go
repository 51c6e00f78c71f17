package kube

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/khook/khook/words"
)

// The safety checks of a CRD change (docs/charts.md, "CRDs"), for every
// way a CRD reaches the cluster: a chart's crds/, its templates and apply
// steps. One place: the helm executor and apply's decision (PlanApply)
// both call CheckCRDChange before they write, plan and apply alike.

// CRDRefusedError is a CRD update khook refuses because it would strand
// the objects the cluster stores.
type CRDRefusedError struct{ msg string }

func (e *CRDRefusedError) Error() string { return e.msg }

// CRDUsage is how many custom resources of a CRD's kind exist, in how
// many namespaces.
type CRDUsage struct {
	Kind       string
	Objects    int
	Namespaces int
}

// String is "3 Widget objects in 2 namespaces".
func (u CRDUsage) String() string {
	s := fmt.Sprintf("%d %s %s", u.Objects, u.Kind, words.Plural(u.Objects, "object", "objects"))
	if u.Namespaces > 0 {
		s += fmt.Sprintf(" in %d %s", u.Namespaces, words.Plural(u.Namespaces, "namespace", "namespaces"))
	}
	return s
}

// crdVersion is one entry of a CRD's spec.versions.
type crdVersion struct {
	served  bool
	storage bool
	schema  map[string]any // openAPIV3Schema
}

func crdVersions(crd *unstructured.Unstructured) (map[string]crdVersion, []string) {
	out := map[string]crdVersion{}
	var order []string
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		name, _ := vm["name"].(string)
		if name == "" {
			continue
		}
		cv := crdVersion{}
		cv.served, _ = vm["served"].(bool)
		cv.storage, _ = vm["storage"].(bool)
		cv.schema, _, _ = unstructured.NestedMap(vm, "schema", "openAPIV3Schema")
		out[name] = cv
		order = append(order, name)
	}
	return out, order
}

// CRDUsageOf counts the custom resources of crd (as the cluster holds it)
// through a version it serves, the storage version first. A CRD that
// serves no version while status.storedVersions says objects were stored
// cannot be counted: that is an *UncountedError, and a decision to delete
// keeps it (fail closed).
func (c *Clients) CRDUsageOf(ctx context.Context, crd *unstructured.Unstructured) (CRDUsage, error) {
	_, usage, err := c.listCustomResources(ctx, crd, "")
	if err == nil && usage.Objects == 0 && servedVersion(crd) == "" {
		if stored, _, _ := unstructured.NestedStringSlice(crd.Object, "status", "storedVersions"); len(stored) > 0 {
			return usage, &UncountedError{CRD: crd.GetName(), Reason: fmt.Sprintf("it serves no version, and objects were stored as %s (status.storedVersions): they cannot be listed to count them", strings.Join(stored, ", "))}
		}
	}
	return usage, err
}

// UncountedError: the custom resources of a CRD cannot be counted, so
// whether deleting it deletes data cannot be told.
type UncountedError struct{ CRD, Reason string }

func (e *UncountedError) Error() string {
	return fmt.Sprintf("cannot count the custom resources of CRD %s: %s", e.CRD, e.Reason)
}

// Kept is why a decision to delete keeps the CRD; word is the spec's
// word that deletes it anyway ("set deleteCRDs: true on the step").
func (e *UncountedError) Kept(word string) string {
	return e.Reason + ": it is kept as if they existed; " + word + " to delete it"
}

// With is what deleting the CRD anyway takes with it.
func (e *UncountedError) With() string {
	return "its custom resources, which cannot be counted (" + e.Reason + ")"
}

// servedVersion is the version listCustomResources lists through: the
// storage version if served, else the last served one; "" for none.
func servedVersion(crd *unstructured.Unstructured) string {
	version := ""
	versions, order := crdVersions(crd)
	for _, v := range order {
		if versions[v].served && (version == "" || versions[v].storage) {
			version = v
		}
	}
	return version
}

// listCustomResources lists every custom resource of crd through version
// (or, when empty, the storage version or else any served one).
func (c *Clients) listCustomResources(ctx context.Context, crd *unstructured.Unstructured, version string) ([]unstructured.Unstructured, CRDUsage, error) {
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	usage := CRDUsage{Kind: kind}
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	if version == "" {
		version = servedVersion(crd)
	}
	if version == "" || plural == "" {
		return nil, usage, nil
	}
	gvr := schema.GroupVersionResource{Group: group, Version: version, Resource: plural}
	var items []unstructured.Unstructured
	opts := metav1.ListOptions{Limit: 500}
	for {
		list, err := c.Dynamic.Resource(gvr).List(ctx, opts)
		if apierrors.IsNotFound(err) {
			return nil, usage, nil // not served (yet): nothing stored
		}
		if err != nil {
			return nil, usage, fmt.Errorf("cannot list the %s objects of CRD %s: %w", kind, crd.GetName(), c.Explain(err))
		}
		items = append(items, list.Items...)
		if opts.Continue = list.GetContinue(); opts.Continue == "" {
			break
		}
	}
	namespaces := map[string]bool{}
	for i := range items {
		if ns := items[i].GetNamespace(); ns != "" {
			namespaces[ns] = true
		}
	}
	usage.Objects, usage.Namespaces = len(items), len(namespaces)
	return items, usage, nil
}

// CheckCRDChange checks the update of live (the CRD as the cluster holds
// it) to desired before it is written. It refuses (a *CRDRefusedError)
// an update that drops a version status.storedVersions lists, or stops
// serving such a version while objects of the kind exist: the objects
// would no longer be readable. It warns (the returned sentences) of a
// schema change that removes a field existing objects carry: the API
// server prunes it at their next write. A new CRD (live nil) needs no
// check. It lists the kind's objects only when an update drops a version
// or a field, so a converged run sends no request.
func (c *Clients) CheckCRDChange(ctx context.Context, live, desired *unstructured.Unstructured) (warnings []string, err error) {
	if live == nil || desired == nil {
		return nil, nil
	}
	name := desired.GetName()
	kind, _, _ := unstructured.NestedString(live.Object, "spec", "names", "kind")
	liveV, liveOrder := crdVersions(live)
	wantV, _ := crdVersions(desired)
	stored, _, _ := unstructured.NestedStringSlice(live.Object, "status", "storedVersions")

	var usage *CRDUsage
	count := func() (CRDUsage, error) {
		if usage == nil {
			_, u, err := c.listCustomResources(ctx, live, "")
			if err != nil {
				return u, err
			}
			usage = &u
		}
		return *usage, nil
	}
	for _, v := range stored {
		w, kept := wantV[v]
		if kept && w.served {
			continue
		}
		u, err := count()
		if err != nil {
			return nil, err
		}
		if !kept {
			return nil, &CRDRefusedError{fmt.Sprintf("CRD %s: the update drops version %s, which status.storedVersions lists, with %s stored: keep %s in spec.versions until its objects are migrated to another version and it is removed from status.storedVersions", name, v, u, v)}
		}
		if u.Objects > 0 {
			return nil, &CRDRefusedError{fmt.Sprintf("CRD %s: the update stops serving version %s, which status.storedVersions lists, while %s exist: keep it served until its objects are migrated to another version and it is removed from status.storedVersions", name, v, u)}
		}
	}

	for _, v := range liveOrder {
		lv, w := liveV[v], wantV[v]
		if !lv.served || !w.served || lv.schema == nil || w.schema == nil {
			continue
		}
		removed := removedFields(lv.schema, w.schema, "")
		if len(removed) == 0 {
			continue
		}
		items, _, err := c.listCustomResources(ctx, live, v)
		if err != nil {
			return nil, err
		}
		for _, path := range removed {
			n := 0
			for i := range items {
				if hasPath(items[i].Object, strings.Split(path, ".")) {
					n++
				}
			}
			if n > 0 {
				warnings = append(warnings, fmt.Sprintf("CRD %s version %s: the update removes field %s, which %d %s %s carry: the API server drops it from them at their next write", name, v, path, n, kind, words.Plural(n, "object", "objects")))
			}
		}
	}
	return warnings, nil
}

// removedFields lists the property paths of old that new no longer has
// ("spec.color"; list items as "spec.ports[]"), stopping where new keeps
// unknown fields.
func removedFields(old, new map[string]any, path string) []string {
	if keep, _ := new["x-kubernetes-preserve-unknown-fields"].(bool); keep {
		return nil
	}
	var out []string
	if oi, ok := old["items"].(map[string]any); ok {
		if ni, ok := new["items"].(map[string]any); ok {
			out = append(out, removedFields(oi, ni, path+"[]")...)
		}
	}
	oldProps, _ := old["properties"].(map[string]any)
	newProps, _ := new["properties"].(map[string]any)
	if len(oldProps) == 0 {
		return out
	}
	if _, open := new["additionalProperties"]; open && len(newProps) == 0 {
		return out
	}
	keys := make([]string, 0, len(oldProps))
	for k := range oldProps {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := k
		if path != "" {
			p = path + "." + k
		}
		if path == "" && slices.Contains([]string{"apiVersion", "kind", "metadata"}, k) {
			continue
		}
		ns, ok := newProps[k].(map[string]any)
		if !ok {
			out = append(out, p)
			continue
		}
		os, _ := oldProps[k].(map[string]any)
		out = append(out, removedFields(os, ns, p)...)
	}
	return out
}

// hasPath reports whether v holds the path ("spec", "ports[]", "name"):
// a "[]" segment matches any item of a list.
func hasPath(v any, path []string) bool {
	if len(path) == 0 {
		return true
	}
	seg := path[0]
	list := strings.HasSuffix(seg, "[]")
	seg = strings.TrimSuffix(seg, "[]")
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	next, ok := m[seg]
	if !ok {
		return false
	}
	if !list {
		return hasPath(next, path[1:])
	}
	items, _ := next.([]any)
	for _, it := range items {
		if hasPath(it, path[1:]) {
			return true
		}
	}
	return false
}
