// Package prune deletes what left the spec (#22): objects an apply step no
// longer produces, releases of helm steps that left the spec. The state
// record's inventory (runner/state) says what khook put in the cluster;
// plan and apply decide through the same Decide, so the plan shows what
// apply prunes and why it keeps the rest.
//
// May import: runner/kube, runner/state, runner/steps, runner/helmstep,
// model, spec, redact; no renderer.
package prune

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/spec"
)

// Annotation on a live object keeps it from being pruned.
const (
	Annotation         = "khook.io/prune"
	AnnotationDisabled = "disabled"
)

// Candidate is one leftover of a step: something the record says khook put
// in the cluster and the spec no longer produces.
type Candidate struct {
	Step   string // the step that put it there
	InSpec bool   // false: the step left the spec
	Item   model.Owned
	Policy spec.Prune
}

// Why is the reason it is a candidate, as the plan says it.
func (c Candidate) Why() string {
	if c.InSpec {
		return fmt.Sprintf("no longer in step %q", c.Step)
	}
	return fmt.Sprintf("step %q left the spec", c.Step)
}

// Decision is what pruning does with a candidate.
type Decision struct {
	Candidate
	// Action is ActionDelete, ActionUninstall, ActionNoop or ActionKeep (a
	// CRD with objects, a PVC, PV or claim-deleting StatefulSet: it holds
	// data; kept: Kept says why) or "" (already gone: nothing to do).
	Action model.Action
	Kept   string
	// With is what data goes with a deleted object: "its 2 Widget objects
	// in 1 namespace", "its data (volume pvc-1, 1Gi, reclaimPolicy Delete)".
	With string

	mapping *meta.RESTMapping
}

// Reason is the plan's reason for the object.
func (d Decision) Reason() string {
	switch {
	case d.Action == model.ActionNoop || d.Action == model.ActionKeep:
		return "kept: " + d.Kept
	}
	return d.Why()
}

// Releases is what Decide needs of the helm executor.
type Releases interface {
	Installed(name, ns string) (bool, error)
	// OnlyCRDNames are the CRDs a crds: only helm step applies now.
	OnlyCRDNames(ctx context.Context, st *spec.Step) ([]string, error)
}

// Decide reads the candidate's live state and applies the safety rules:
// khook deletes only an object it still manages, with the UID it
// recorded, not annotated khook.io/prune: disabled, and a CRD, Namespace
// or what holds data (kube.HoldsData) only when prune: asks. It only reads.
func Decide(ctx context.Context, c *kube.Clients, rel Releases, cand Candidate) (Decision, error) {
	d := Decision{Candidate: cand}
	it := cand.Item
	if it.IsRelease() {
		ok, err := rel.Installed(it.Name, it.Namespace)
		if err != nil {
			return d, err
		}
		switch {
		case !ok:
		case cand.Policy.Disabled:
			d.Action, d.Kept = model.ActionNoop, "prune: false"
		default:
			d.Action = model.ActionUninstall
		}
		return d, nil
	}
	m, err := c.MappingFor(ctx, schema.GroupVersionKind{Group: it.Group, Version: it.Version, Kind: it.Kind})
	if err != nil {
		if kube.IsUnreachable(err) {
			return d, err
		}
		return d, nil // its kind is gone, and with it the object
	}
	d.mapping = m
	live, err := c.Resource(m, it.Namespace).Get(ctx, it.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return d, nil
	}
	if err != nil {
		return d, fmt.Errorf("cannot read %s to prune it: %w", it, c.Explain(err))
	}
	d.Action = model.ActionNoop
	switch {
	case cand.Policy.Disabled:
		d.Kept = "prune: false"
	case string(live.GetUID()) != it.UID:
		d.Kept = "replaced since khook applied it (its UID is not the one khook recorded)"
	case it.Adopted:
		d.Kept = "it existed before khook applied it, and khook deletes only what it created"
	case !kube.ManagedByKhook(live):
		d.Kept = "khook's field manager no longer manages it"
	case live.GetAnnotations()[Annotation] == AnnotationDisabled:
		d.Kept = "annotated " + Annotation + ": " + AnnotationDisabled
	case kube.IsCRD(live):
		usage, err := c.CRDUsageOf(ctx, live)
		var uncounted *kube.UncountedError
		switch {
		case errors.As(err, &uncounted) && cand.Policy.CRDs:
			d.Action, d.With = model.ActionDelete, uncounted.With()
		case errors.As(err, &uncounted): // whether it holds data cannot be told: kept, as if it did
			d.Action, d.Kept = model.ActionKeep, "a CustomResourceDefinition: "+uncounted.Kept("set prune: {crds: true}")
		case err != nil:
			return d, err
		case cand.Policy.CRDs:
			d.Action = model.ActionDelete
			if usage.Objects > 0 {
				d.With = "its " + usage.String()
			}
		case usage.Objects > 0:
			d.Action, d.Kept = model.ActionKeep, fmt.Sprintf("a CustomResourceDefinition with %s: deleting it deletes them; set prune: {crds: true} to delete both", usage)
		default:
			d.Kept = "a CustomResourceDefinition: deleting it deletes every resource of its kind; set prune: {crds: true} to delete it"
		}
	case it.Group == "" && it.Kind == "Namespace" && !cand.Policy.Namespaces:
		d.Kept = "a Namespace: deleting it deletes everything in it; set prune: {namespaces: true} to delete it"
	case kube.HoldsData(live):
		what, err := c.DataOf(ctx, live)
		switch {
		case kube.IsUnreachable(err):
			return d, err
		case err != nil: // cannot tell what goes: keep it
			d.Action, d.Kept = model.ActionKeep, fmt.Sprintf("it holds data and khook cannot tell what (%v); set prune: {data: true} to delete it anyway", err)
		case cand.Policy.Data:
			d.Action, d.With = model.ActionDelete, what
		default:
			d.Action, d.Kept = model.ActionKeep, fmt.Sprintf("deleting it deletes %s; set prune: {data: true} to delete both", what)
		}
	default:
		d.Action, d.Kept = model.ActionDelete, ""
	}
	return d, nil
}

// uid is the recorded UID, the precondition of the delete.
func (d Decision) uid() types.UID { return types.UID(d.Item.UID) }
