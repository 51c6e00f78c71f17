package kube

import (
	"context"
	"fmt"
	"github.com/khook/khook/runner/kube/objdiff"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/khook/khook/model"
)

// FieldManager is khook's field manager for server-side apply and writes.
const FieldManager = "khook"

// ApplyRequest is the one request apply would send for one object: computed
// by PlanApply without writing, sent by Send (for real, or with DryRun=All
// for plan --diff).
type ApplyRequest struct {
	Mapping *meta.RESTMapping
	// Desired is the object as it will be sent (with the last-applied
	// annotation for client-side apply).
	Desired *unstructured.Unstructured
	Live    *unstructured.Unstructured // nil when the object does not exist
	// Action is create, configure or unchanged. Server-side apply always
	// sends its request; Action then only predicts create vs configure.
	Action     model.Action
	ServerSide bool
	PatchType  types.PatchType // configure (client-side) and server-side
	Patch      []byte
	// Force takes over, on a server-side apply, the fields another manager
	// holds: only set where that manager is Helm on what khook now owns
	// (TakesOverFromHelm).
	Force bool

	// Terminating is the live object when it carries a deletion timestamp
	// (a CRD an uninstall is deleting): a patch onto it answers 200 and
	// vanishes with it, so the request creates the object anew once it
	// has gone (Send awaits that); Live is then nil.
	Terminating *unstructured.Unstructured

	src    *unstructured.Unstructured // the manifest object, to plan again
	cached bool                       // Live came from the run's cache
	opts   objdiff.Options            // the step's ignore rules
}

// Adopts reports whether the request takes over an object khook did not
// write before: it exists and khook's field manager manages none of it.
// Pruning never deletes what khook did not create.
func (r *ApplyRequest) Adopts() bool { return r.Live != nil && !ManagedByKhook(r.Live) }

// ManagedByKhook reports whether khook's field manager manages any field
// of obj (managedFields).
func ManagedByKhook(obj *unstructured.Unstructured) bool {
	for _, f := range obj.GetManagedFields() {
		if f.Manager == FieldManager {
			return true
		}
	}
	return false
}

// HelmFieldManager is the field manager Helm writes with (its CRD
// installer, its install and upgrade).
const HelmFieldManager = "helm"

// TakesOverFromHelm reports whether every manager of live other than khook
// is Helm: a chart's crds/ CRD that Helm created (Helm never upgrades one)
// is then khook's to upgrade, forcing Helm's fields over; a CRD another
// tool or an operator also manages stays theirs, and its conflict is
// apply's error. Status (a subresource) is the API server's and does not
// count.
func TakesOverFromHelm(live *unstructured.Unstructured) bool {
	if live == nil {
		return false
	}
	helm := false
	for _, f := range live.GetManagedFields() {
		if f.Subresource != "" {
			continue // status: the API server's, not a conflict
		}
		switch f.Manager {
		case FieldManager:
		case HelmFieldManager:
			helm = true
		default:
			return false
		}
	}
	return helm
}

// Name names the request's object for messages.
func (r *ApplyRequest) Name() string { return ObjectName(r.Desired) }

// PlanApply reads the live object and computes the request kubectl apply
// would send: create when missing; otherwise a three-way patch from the
// last-applied annotation (strategic merge for built-in types, JSON merge
// for custom resources), unchanged when that patch is empty. With
// serverSide, the request is a server-side apply patch. obj must be mapped
// (MapObject) already. A Secret's stringData is sent as data (see
// normalizeSecret), so a converged Secret sends nothing. opts are the
// step's ignore rules: on an object that exists, the request leaves the
// fields they name to their owner (objdiff.Options.LeaveIgnored), and the decision does
// not count them.
func (c *Clients) PlanApply(ctx context.Context, obj *unstructured.Unstructured, m *meta.RESTMapping, serverSide bool, opts objdiff.Options) (*ApplyRequest, error) {
	req, err := c.planApply(ctx, obj, m, serverSide, true, opts)
	if err == nil && req.cached && req.Action == model.ActionConfigure && !serverSide {
		// A change decided on the run's cached read: patch what is live now.
		return c.planApply(ctx, obj, m, serverSide, false, opts)
	}
	return req, err
}

func (c *Clients) planApply(ctx context.Context, src *unstructured.Unstructured, m *meta.RESTMapping, serverSide, useCache bool, opts objdiff.Options) (*ApplyRequest, error) {
	obj := objdiff.NormalizeSecret(src)
	var live *unstructured.Unstructured
	var cached bool
	var err error
	if useCache {
		live, cached, err = c.Live(ctx, m, obj.GetNamespace(), obj.GetName())
	} else {
		live, err = c.resourceFor(m, obj.GetNamespace()).Get(ctx, obj.GetName(), metav1.GetOptions{})
	}
	switch {
	case apierrors.IsNotFound(err):
		live = nil
	case err != nil:
		return nil, fmt.Errorf("cannot read %s: %w", ObjectName(obj), c.Explain(err))
	}
	var terminating *unstructured.Unstructured
	if live != nil && live.GetDeletionTimestamp() != nil {
		Warn(ctx, ObjectName(obj), BeingDeleted(live)+": apply waits for it to go, then creates it anew")
		terminating, live = live, nil
	}
	if live != nil && IsCRD(obj) {
		warnings, err := c.CheckCRDChange(ctx, live, obj)
		if err != nil {
			return nil, err
		}
		for _, w := range warnings {
			Warn(ctx, ObjectName(obj), w)
		}
	}
	req := &ApplyRequest{Mapping: m, Live: live, Terminating: terminating, ServerSide: serverSide, src: src, cached: cached, opts: opts}
	if serverSide {
		req.Desired = opts.LeaveIgnored(live, obj, true).DeepCopy()
		req.Action = model.ActionConfigure
		if live == nil {
			req.Action = model.ActionCreate
		}
		req.PatchType = types.ApplyPatchType
		req.Patch, err = req.Desired.MarshalJSON()
		return req, err
	}
	desired, modified, err := withLastApplied(obj)
	if err == nil && live != nil && opts.Ignores() {
		// The record stays the manifest as written; what is sent holds the
		// live values of ignored fields, so the three-way patch leaves them.
		desired = opts.LeaveIgnored(live, desired, false)
		modified, err = desired.MarshalJSON()
	}
	if err != nil {
		return nil, fmt.Errorf("cannot encode %s: %v", ObjectName(obj), err)
	}
	req.Desired = desired
	if live == nil {
		req.Action = model.ActionCreate
		return req, nil
	}
	original := []byte(live.GetAnnotations()[objdiff.LastAppliedAnnotation])
	req.PatchType, req.Patch, err = objdiff.ThreeWayPatch(m, original, modified, live)
	if err != nil {
		return nil, fmt.Errorf("cannot compute the patch for %s: %v", ObjectName(obj), err)
	}
	req.Action = model.ActionConfigure
	if string(req.Patch) == "{}" {
		req.Action = model.ActionUnchanged
		return req, nil
	}
	// A patch can be non-empty and still change nothing: a merge patch
	// replaces a list whole, so a custom resource whose list items the
	// server defaults (kyverno's ClusterPolicy rules) differs from its
	// manifest on every run, and kubectl apply says "configured" each time.
	// The server decides: the patch is kept only if its dry run would
	// change the object. A dry run that fails keeps it, and the real write
	// reports why.
	if out, err := c.Send(ctx, req, DryRunServer); err == nil {
		if change := objdiff.Decide(live, out, opts); !change.Changed() && !change.Record {
			req.Action = model.ActionUnchanged
		}
	}
	return req, nil
}

// Outcome is what the request does to its object. A server-side apply is
// always sent: Decide tells from the server's answer (Send's, or its dry
// run's for plan) whether it changed anything. A client-side request was
// decided before it was sent (PlanApply): its Action.
func (r *ApplyRequest) Outcome(answer *unstructured.Unstructured) model.Action {
	if !r.ServerSide || r.Live == nil || answer == nil {
		return r.Action
	}
	return objdiff.Decide(r.Live, answer, r.opts).Action
}

// withLastApplied returns a copy of obj carrying the last-applied
// annotation, and its JSON (kubectl's GetModifiedConfiguration).
func withLastApplied(obj *unstructured.Unstructured) (*unstructured.Unstructured, []byte, error) {
	out := obj.DeepCopy()
	annots := out.GetAnnotations()
	delete(annots, objdiff.LastAppliedAnnotation)
	out.SetAnnotations(annots)
	original, err := out.MarshalJSON()
	if err != nil {
		return nil, nil, err
	}
	if annots == nil {
		annots = map[string]string{}
	}
	annots[objdiff.LastAppliedAnnotation] = string(original)
	out.SetAnnotations(annots)
	modified, err := out.MarshalJSON()
	return out, modified, err
}

// Send sends the request (nothing for unchanged) and returns the object the
// server answered with (the live object for unchanged). Under a dry run
// (DryRunServer) it is sent with DryRun=All: nothing is persisted. The
// error names the object and says what to do about namespaces, conflicts
// and immutable fields.
func (c *Clients) Send(ctx context.Context, req *ApplyRequest, dry DryRunStrategy) (*unstructured.Unstructured, error) {
	dr := dry.Options()
	if req.Terminating != nil {
		if dry.IsDryRun() {
			// The server would answer the create AlreadyExists until the
			// object has gone: predict the create apply makes then.
			return req.Desired, nil
		}
		if err := c.awaitGone(ctx, req.Mapping, req.Terminating); err != nil {
			return nil, err
		}
		fresh, err := c.planApply(ctx, req.src, req.Mapping, req.ServerSide, false, req.opts)
		if err != nil {
			return nil, err
		}
		*req = *fresh
		if req.Terminating != nil { // deleted again meanwhile
			return nil, fmt.Errorf("cannot apply %s: %s", req.Name(), BeingDeleted(req.Terminating))
		}
	}
	out, err := c.send(ctx, req, dr)
	if apierrors.IsAlreadyExists(err) && req.cached {
		// Created since the run's cached read: plan again on a fresh GET.
		fresh, perr := c.planApply(ctx, req.src, req.Mapping, req.ServerSide, false, req.opts)
		if perr != nil {
			return nil, perr
		}
		*req = *fresh
		out, err = c.send(ctx, req, dr)
	}
	if apierrors.IsNotFound(err) {
		// A custom resource of a CRD applied moments ago: the API server
		// serves its kind once the CRD is Established. Await that (a
		// watch), then send again.
		if m := c.crds(); m != nil {
			if crd := m.pending(req.Mapping); crd != "" {
				if werr := c.WaitCRDEstablished(ctx, crd); werr != nil {
					return nil, fmt.Errorf("cannot apply %s: its CRD %s: %w", req.Name(), crd, werr)
				}
				out, err = c.send(ctx, req, dr)
			}
		}
	}
	if err != nil {
		return nil, c.writeError(req, err)
	}
	if !dry.IsDryRun() {
		if req.Action != model.ActionUnchanged || req.ServerSide {
			c.remember(ctx, req.Mapping, out) // a later read sees own write
		}
		if IsCRD(out) {
			c.LearnCRD(out) // its kind maps now, without discovery
		}
	}
	return out, nil
}

func (c *Clients) send(ctx context.Context, req *ApplyRequest, dr []string) (*unstructured.Unstructured, error) {
	ctx = WithObject(ctx, req.Name())
	r := c.resourceFor(req.Mapping, req.Desired.GetNamespace())
	switch {
	case req.ServerSide:
		if len(dr) == 0 { // kubectl's --server-side migration (csaupgrade.go)
			if _, err := c.UpgradeClientSide(ctx, req.Mapping, req.Live, FieldManager); err != nil {
				return nil, err
			}
		}
		force := req.Force
		return r.Patch(ctx, req.Desired.GetName(), types.ApplyPatchType, req.Patch,
			metav1.PatchOptions{FieldManager: FieldManager, FieldValidation: FieldValidation, Force: &force, DryRun: dr})
	case req.Action == model.ActionCreate:
		return r.Create(ctx, req.Desired, metav1.CreateOptions{FieldManager: FieldManager, FieldValidation: FieldValidation, DryRun: dr})
	case req.Action == model.ActionConfigure:
		return r.Patch(ctx, req.Desired.GetName(), req.PatchType, req.Patch,
			metav1.PatchOptions{FieldManager: FieldManager, FieldValidation: FieldValidation, DryRun: dr})
	}
	return req.Live, nil
}

func (c *Clients) writeError(req *ApplyRequest, err error) error {
	name := req.Name()
	if fe := fieldError(err, req.src, name); fe != nil {
		return fe
	}
	switch {
	case req.ServerSide && apierrors.IsConflict(err):
		return fmt.Errorf("server-side apply of %s conflicts with fields another manager owns (khook does not force): %s; drop those fields from the manifest or change them with that manager", name, conflictDetail(err))
	case apierrors.IsNotFound(err) && req.Desired.GetNamespace() != "" && strings.Contains(err.Error(), "namespaces"):
		return &MissingNamespaceError{Namespace: req.Desired.GetNamespace(), Err: fmt.Errorf("cannot apply %s: namespace %q does not exist; create it in an earlier step", name, req.Desired.GetNamespace())}
	}
	if r := Refused(name, err); r != nil && !IsUnreachable(err) {
		return r
	}
	return fmt.Errorf("cannot apply %s: %w", name, c.Explain(err))
}

func conflictDetail(err error) string {
	if se, ok := err.(apierrors.APIStatus); ok && se.Status().Details != nil {
		var parts []string
		for _, cause := range se.Status().Details.Causes {
			if cause.Field != "" {
				parts = append(parts, cause.Message+" on "+cause.Field)
			} else {
				parts = append(parts, cause.Message)
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, "; ")
		}
	}
	return APIMessage(err)
}

// APIMessage is the API server's own message in an error (its Status
// message), else the error's text.
func APIMessage(err error) string {
	if se, ok := err.(apierrors.APIStatus); ok && se.Status().Message != "" {
		return se.Status().Message
	}
	return err.Error()
}

// Resource returns the dynamic client for a mapping in a namespace
// (ignored for cluster-scoped mappings).
func (c *Clients) Resource(m *meta.RESTMapping, namespace string) dynamic.ResourceInterface {
	return c.resourceFor(m, namespace)
}

func (c *Clients) resourceFor(m *meta.RESTMapping, namespace string) dynamic.ResourceInterface {
	r := c.Dynamic.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return r.Namespace(namespace)
	}
	return r
}

// EnsureNamespace creates the namespace when it is missing; it reports
// whether it sent a write.
func (c *Clients) EnsureNamespace(ctx context.Context, name string) (bool, error) {
	_, _, err := c.Live(ctx, NamespaceMapping, "", name)
	if err == nil {
		return false, nil
	}
	if !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("cannot read namespace %s: %w", name, c.Explain(err))
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	_, err = c.Typed.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{FieldManager: FieldManager, FieldValidation: FieldValidation})
	InvalidateLiveOf(ctx, NamespaceMapping, "")
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return true, fmt.Errorf("cannot create namespace %s: %w", name, c.Explain(err))
	}
	return true, nil
}
