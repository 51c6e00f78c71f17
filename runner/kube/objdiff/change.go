// Package objdiff is the one change decision (after fluxcd/pkg ssa's
// jsondiff and normalize): whether applying an object changes it (Decide),
// the normalisation every comparison, diff and digest shares (Normalize),
// kubectl's three-way patch, and the spec's ignore rules. It is pure — no
// client — so plan, apply, drift, Helm drift and the saved plan's digests
// decide alike, offline or not.
//
// May import: of khook only model and the ground floor; of client-go only
// the built-in types' scheme (layout_test).
package objdiff

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/khook/khook/model"
)

// LastAppliedAnnotation is kubectl's client-side apply record.
const LastAppliedAnnotation = corev1.LastAppliedConfigAnnotation

// Options tunes the change decision. The zero value compares
// everything but the server's bookkeeping (Normalize). Ignore rules
// (IgnoreOptions: fields by JSON pointer or jq path, fields other managers
// own) are applied by Normalize to both sides alike, so plan, apply, drift
// and the saved plan's digests all honour them; an apply to an existing
// object leaves those fields to their owner (LeaveIgnored).
type Options struct {
	ignore []ignoreRule
}

// Change is the one decision of whether applying an object changes it, and
// how (after fluxcd/pkg ssa's Diff): Action is create (nothing is live),
// configure or unchanged. Live and After are the two sides normalised
// (Normalize), for a diff; Live is nil for create. Record says kubectl's
// last-applied annotation differs: not a change of the object, but a
// client-side apply still writes to keep its record current (as kubectl
// does), or its next three-way patch would start from a stale one.
type Change struct {
	Action      model.Action
	Live, After *unstructured.Unstructured
	Record      bool
}

// Changed reports whether the object changes.
func (c Change) Changed() bool { return c.Action != model.ActionUnchanged }

// Decide compares the live object (nil when absent) with the object as it
// will be after the apply: a server-side dry run's answer, a patch applied
// locally, or the manifest itself for an object to create. It is the one
// comparison plan, apply's reported outcome, drift, Helm drift and the
// saved plan's digests share.
func Decide(live, after *unstructured.Unstructured, opts Options) Change {
	if live == nil {
		return Change{Action: model.ActionCreate, After: normalize(after, after, opts)}
	}
	// Fields other managers own are found in live, on both sides.
	c := Change{Live: normalize(live, live, opts), After: normalize(after, live, opts)}
	c.Record = live.GetAnnotations()[LastAppliedAnnotation] != after.GetAnnotations()[LastAppliedAnnotation]
	c.Action = model.ActionConfigure
	if equality.Semantic.DeepEqual(c.Live.Object, c.After.Object) {
		c.Action = model.ActionUnchanged
	}
	return c
}

// Holds reports, without asking the server, whether live already holds
// every field desired sets, as desired sets it: the three-way patch from
// desired to live (original = modified = desired, as when desired is what
// was applied last) is empty after both are normalised. A field of desired
// that live lacks or holds differently makes it false, and so does any
// error: only the server's answer (Decide) can then tell. Helm drift uses it
// to dry-run only what may differ.
func Holds(m *meta.RESTMapping, live, desired *unstructured.Unstructured, opts Options) bool {
	modified, err := normalize(desired, live, opts).MarshalJSON()
	if err != nil {
		return false
	}
	_, patch, err := ThreeWayPatch(m, modified, modified, normalize(live, live, opts))
	return err == nil && string(patch) == "{}"
}

// bookkeeping are the fields the server (or a controller) sets on its own:
// they move on every write, dry runs included, without the object changing.
// Status is the controllers' report, which an apply of the object does not
// set.
var bookkeeping = [][]string{
	{"metadata", "managedFields"},
	{"metadata", "resourceVersion"},
	{"metadata", "generation"},
	{"metadata", "uid"},
	{"metadata", "creationTimestamp"},
	{"metadata", "selfLink"},
	{"status"},
}

// Normalize is the one normalisation of an object before it is compared,
// diffed or digested: a copy without the server's bookkeeping and status,
// without kubectl's last-applied annotation (a JSON copy of the object that
// would double every change, and not itself a change), and with a core
// Secret's stringData counted as the data it is stored as, and without the
// fields opts ignores (fields of managers: those u's managedFields give
// them). nil stays nil.
func Normalize(u *unstructured.Unstructured, opts Options) *unstructured.Unstructured {
	return normalize(u, u, opts)
}

// normalize is Normalize with the managers' fields read from owner.
func normalize(u, owner *unstructured.Unstructured, opts Options) *unstructured.Unstructured {
	if u == nil {
		return nil
	}
	ignored := opts.ignoredPaths(u, owner)
	u = NormalizeSecret(u).DeepCopy()
	dropIgnored(u, ignored)
	for _, path := range bookkeeping {
		unstructured.RemoveNestedField(u.Object, path...)
	}
	if ann := u.GetAnnotations(); ann != nil {
		delete(ann, LastAppliedAnnotation)
		if len(ann) == 0 {
			unstructured.RemoveNestedField(u.Object, "metadata", "annotations")
		} else {
			u.SetAnnotations(ann)
		}
	}
	return u
}

// ThreeWayPatch is kubectl apply's patch from original (the last-applied
// record) and modified (the manifest) against live: strategic merge for the
// built-in kinds, JSON merge for the others.
func ThreeWayPatch(m *meta.RESTMapping, original, modified []byte, live *unstructured.Unstructured) (types.PatchType, []byte, error) {
	current, err := live.MarshalJSON()
	if err != nil {
		return "", nil, err
	}
	typed, err := scheme.Scheme.New(m.GroupVersionKind)
	if err == nil {
		lookup, err := strategicpatch.NewPatchMetaFromStruct(typed)
		if err != nil {
			return "", nil, err
		}
		p, err := strategicpatch.CreateThreeWayMergePatch(original, modified, current, lookup, true)
		return types.StrategicMergePatchType, p, err
	}
	if !runtime.IsNotRegisteredError(err) {
		return "", nil, err
	}
	preconditions := []mergepatch.PreconditionFunc{
		mergepatch.RequireKeyUnchanged("apiVersion"),
		mergepatch.RequireKeyUnchanged("kind"),
		mergepatch.RequireMetadataKeyUnchanged("name"),
	}
	p, err := jsonmergepatch.CreateThreeWayJSONMergePatch(original, modified, current, preconditions...)
	return types.MergePatchType, p, err
}
