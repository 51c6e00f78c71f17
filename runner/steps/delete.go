package steps

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/manifest"
	"github.com/khook/khook/runner/kube/wait"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/words"
)

// ReleaseDeleter uninstalls a Helm release for delete.release (implemented
// by runner/helmstep). It reads st.Delete.Release, Namespace and
// IgnoresNotFound, and waits until the release's resources are gone.
type ReleaseDeleter interface {
	DeleteRelease(ctx context.Context, st *spec.Step) (runner.Outcome, error)
}

// ReleaseDeleterFunc adapts a function to ReleaseDeleter.
type ReleaseDeleterFunc func(ctx context.Context, st *spec.Step) (runner.Outcome, error)

// DeleteRelease calls f.
func (f ReleaseDeleterFunc) DeleteRelease(ctx context.Context, st *spec.Step) (runner.Outcome, error) {
	return f(ctx, st)
}

// DeleteExecutor removes what manifests define, what a resource argument selects, or
// (through Releases) a Helm release, then waits until it is gone.
type DeleteExecutor struct {
	Env
	Releases ReleaseDeleter // nil: delete.release fails with a clear error
}

// NewDeleteExecutor returns the delete executor.
func NewDeleteExecutor(env Env, releases ReleaseDeleter) *DeleteExecutor {
	return &DeleteExecutor{Env: env, Releases: releases}
}

// Execute deletes and waits for the objects to disappear.
func (x *DeleteExecutor) Execute(ctx context.Context, st *spec.Step) (runner.Outcome, error) {
	d := st.Delete
	if d == nil {
		return runner.Outcome{}, wrongStep(st, spec.TypeDelete)
	}
	switch {
	case d.Release != "":
		if x.Releases == nil {
			return x.finish(runner.Outcome{}, errors.New("delete.release is not available: khook was built without the helm executor"))
		}
		return x.finish(x.Releases.DeleteRelease(ctx, st))
	case len(d.Manifests) > 0:
		out, _, err := x.manifests(ctx, d, kube.DryRunNone)
		return x.finish(out, err)
	case d.Resource != "":
		out, _, err := x.resource(ctx, d, kube.DryRunNone)
		return x.finish(out, err)
	}
	return x.finish(runner.Outcome{}, errors.New("delete sets none of manifests, resource, release"))
}

// manifests and resource are the delete step's one path, for Execute and
// (dry: a server-side dry run of each delete, no wait) for Plan; they
// return what they deleted or kept, as read before.
func (x *DeleteExecutor) manifests(ctx context.Context, d *spec.Delete, dry kube.DryRunStrategy) (runner.Outcome, []runner.PlannedObject, error) {
	var out runner.Outcome
	var gone []runner.PlannedObject
	var kept, went []string
	objs, err := manifest.LoadManifests(ctx, x.BaseDir, d.Manifests, x.Redactor)
	if err != nil {
		return out, nil, err
	}
	c := x.Clients
	ns := spec.NamespaceOrDefault(d.Namespace)
	var victims []kube.Deleted
	missing := 0
	for i := len(objs) - 1; i >= 0; i-- { // last first: CRs before their CRDs, objects before namespaces
		obj := objs[i]
		m, err := c.MapObject(ctx, obj, ns)
		if err != nil {
			if kube.IsUnreachable(err) {
				return out, nil, err
			}
			// An unknown kind has no objects: nothing to delete.
			if !d.IgnoresNotFound() {
				return out, nil, fmt.Errorf("cannot delete %s: %w", kube.ObjectName(obj), err)
			}
			missing++
			continue
		}
		v, live, err := x.deleteOne(ctx, d, m, obj.GetNamespace(), obj.GetName(), dry)
		if err != nil {
			return out, nil, err
		}
		if live.Action == model.ActionKeep {
			kept = append(kept, heldName(live)+" ("+live.Reason+")")
			gone = append(gone, live)
			continue
		}
		if v == nil {
			if !d.IgnoresNotFound() {
				return out, nil, fmt.Errorf("cannot delete %s: not found (set ignoreNotFound: true to accept absent objects)", kube.ObjectName(obj))
			}
			missing++
			continue
		}
		out.Writes++
		victims = append(victims, *v)
		gone = append(gone, live)
		out.Changes = append(out.Changes, change(model.DidDelete, m, v.Namespace, v.Name))
		if live.With != "" { // deleteData: true; the result says the data went
			went = append(went, heldName(live)+" and "+live.With)
		}
	}
	if !dry.IsDryRun() {
		if err := wait.Gone(ctx, c, victims); err != nil {
			return out, nil, err
		}
	}
	out.Detail = deleteDetail(len(victims), missing) + wentDetail(went) + keptDetail(kept)
	return out, gone, nil
}

// deleteOne deletes with background propagation (kubectl's default), or
// dry-runs the delete; nil means the object was not there or is kept (a
// CRD custom resources of which exist, unless the step says deleteCRDs).
// It returns the object as read, with the decision.
func (x *DeleteExecutor) deleteOne(ctx context.Context, d *spec.Delete, m *meta.RESTMapping, ns, name string, dry kube.DryRunStrategy) (*kube.Deleted, runner.PlannedObject, error) {
	c := x.Clients
	r := c.Resource(m, ns)
	live, err := r.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, runner.PlannedObject{}, nil
	}
	if err != nil {
		return nil, runner.PlannedObject{}, fmt.Errorf("cannot read %s: %w", describe(m, ns, name), c.Explain(err))
	}
	action, reason, with, err := DeleteDecision(ctx, c, d, live)
	if err != nil {
		return nil, runner.PlannedObject{}, err
	}
	po := runner.PlannedObject{Action: action, Reason: reason, With: with, Kind: live.GetKind(), Namespace: live.GetNamespace(), Name: live.GetName(), Live: live}
	if action == model.ActionKeep {
		kube.Warn(ctx, kube.ObjectName(live), "kept: "+reason)
		return nil, po, nil
	}
	v, err := x.deleteUID(ctx, m, ns, name, live.GetUID(), dry)
	return v, po, err
}

// DeleteDecision is what a delete step does to live, for plan and apply
// alike: delete, or keep a CRD custom resources of which exist when the
// step does not say deleteCRDs, or what holds data (kube.HoldsData) when it
// does not say deleteData (reason says why). with is what data a deleted
// object takes with it ("its 2 Widget objects in 1 namespace").
func DeleteDecision(ctx context.Context, c *kube.Clients, d *spec.Delete, live *unstructured.Unstructured) (action model.Action, reason, with string, err error) {
	if kube.HoldsData(live) {
		what, err := c.DataOf(ctx, live)
		switch {
		case kube.IsUnreachable(err):
			return "", "", "", err
		case err != nil: // cannot tell what goes: keep it
			return model.ActionKeep, fmt.Sprintf("it holds data and khook cannot tell what (%v); set deleteData: true on the step to delete it anyway", err), "", nil
		case d.DeleteData:
			return model.ActionDelete, "deleteData: true", what, nil
		}
		return model.ActionKeep, fmt.Sprintf("deleting it deletes %s; set deleteData: true on the step to delete both", what), "", nil
	}
	if !kube.IsCRD(live) {
		return model.ActionDelete, "", "", nil
	}
	usage, err := c.CRDUsageOf(ctx, live)
	var uncounted *kube.UncountedError
	switch {
	case errors.As(err, &uncounted) && d.DeleteCRDs:
		return model.ActionDelete, "deleteCRDs: true", uncounted.With(), nil
	case errors.As(err, &uncounted): // whether it holds data cannot be told: kept, as if it did
		return model.ActionKeep, uncounted.Kept("set deleteCRDs: true on the step"), "", nil
	case err != nil || usage.Objects == 0:
		return model.ActionDelete, "", "", err
	}
	if d.DeleteCRDs {
		return model.ActionDelete, "deleteCRDs: true", "its " + usage.String(), nil
	}
	return model.ActionKeep, usage.String() + " exist: deleting the CRD deletes them; set deleteCRDs: true on the step to delete both", "", nil
}

// wentDetail says what data went with the deleted objects: "; deleted
// PersistentVolumeClaim shop/data and its data (...)".
func wentDetail(went []string) string {
	if len(went) == 0 {
		return ""
	}
	return "; deleted " + strings.Join(went, ", ")
}

func keptDetail(kept []string) string {
	if len(kept) == 0 {
		return ""
	}
	return "; kept " + strings.Join(kept, ", ")
}

// DeleteUID deletes the object only while it has uid (a precondition: a
// replacement is never deleted), with background propagation; nil means it
// was gone, or replaced, meanwhile. Pruning deletes through it.
func (x *DeleteExecutor) DeleteUID(ctx context.Context, m *meta.RESTMapping, ns, name string, uid types.UID) (*kube.Deleted, error) {
	return x.deleteUID(ctx, m, ns, name, uid, kube.DryRunNone)
}

func (x *DeleteExecutor) deleteUID(ctx context.Context, m *meta.RESTMapping, ns, name string, uid types.UID, dry kube.DryRunStrategy) (*kube.Deleted, error) {
	c := x.Clients
	r := c.Resource(m, ns)
	bg := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &bg, Preconditions: &metav1.Preconditions{UID: &uid}, DryRun: dry.Options()}
	err := r.Delete(ctx, name, opts)
	if !dry.IsDryRun() {
		kube.InvalidateLiveOf(ctx, m, ns)
		if m.Resource == kube.CRDMapping.Resource {
			c.ForgetCRD(name)
		}
	}
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) { // gone, or replaced, meanwhile
		return nil, nil
	}
	if r := kube.Refused(describe(m, ns, name), err); r != nil {
		return nil, r
	}
	if err != nil {
		return nil, fmt.Errorf("cannot delete %s: %w", describe(m, ns, name), c.Explain(err))
	}
	return &kube.Deleted{Mapping: m, Namespace: ns, Name: name, UID: uid}, nil
}

func (x *DeleteExecutor) resource(ctx context.Context, d *spec.Delete, dry kube.DryRunStrategy) (runner.Outcome, []runner.PlannedObject, error) {
	var out runner.Outcome
	var gone []runner.PlannedObject
	var kept []string
	c := x.Clients
	res, err := c.ResolveObject(ctx, "resource", d)
	if err != nil {
		if kube.IsUnreachable(err) {
			return out, nil, err
		}
		return out, nil, &runner.Pending{Err: err}
	}
	t := wait.Target{Mapping: res.Mapping, Name: res.Name, LabelSelector: d.Selector, FieldSelector: d.FieldSelector}
	if !d.AllNamespaces {
		t.Namespace = spec.NamespaceOrDefault(d.Namespace)
	}
	if err := t.Validate(); err != nil {
		return out, nil, err
	}
	var victims []kube.Deleted
	// One named object in one namespace: get and delete it. Everything else
	// (selectors, a name across all namespaces) lists first.
	if res.Name != "" && d.Selector == "" && d.FieldSelector == "" && (t.Namespace != "" || !res.Namespaced()) {
		v, live, err := x.deleteOne(ctx, d, res.Mapping, t.Namespace, res.Name, dry)
		if err != nil {
			return out, nil, err
		}
		if live.Action == model.ActionKeep {
			out.Detail = "kept CRD " + live.Name + " (" + live.Reason + ")"
			return out, []runner.PlannedObject{live}, nil
		}
		if v == nil {
			if !d.IgnoresNotFound() {
				return out, nil, fmt.Errorf("cannot delete %s: not found (set ignoreNotFound: true to accept an absent object)", t)
			}
			out.Detail = fmt.Sprintf("%s already absent", t)
			return out, gone, nil
		}
		victims = append(victims, *v)
		gone = append(gone, live)
	} else {
		list, err := t.ListWatch(c).ListWithContextFunc(ctx, metav1.ListOptions{})
		if err != nil {
			return out, nil, fmt.Errorf("cannot list %s: %w", t, c.Explain(err))
		}
		items, _ := meta.ExtractList(list)
		for _, it := range items {
			u, ok := it.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			v, live, err := x.deleteOne(ctx, d, res.Mapping, u.GetNamespace(), u.GetName(), dry)
			if err != nil {
				return out, nil, err
			}
			if live.Action == model.ActionKeep {
				kept = append(kept, heldName(live)+" ("+live.Reason+")")
				gone = append(gone, live)
				continue
			}
			if v != nil {
				victims = append(victims, *v)
				gone = append(gone, live)
			}
		}
		if len(victims) == 0 && len(kept) == 0 && !d.IgnoresNotFound() {
			return out, nil, fmt.Errorf("cannot delete %s: nothing matched (set ignoreNotFound: true to accept that)", t)
		}
	}
	out.Writes = len(victims)
	for _, v := range victims {
		out.Changes = append(out.Changes, change(model.DidDelete, v.Mapping, v.Namespace, v.Name))
	}
	if !dry.IsDryRun() {
		if err := wait.Gone(ctx, c, victims); err != nil {
			return out, nil, err
		}
	}
	var went []string
	for _, o := range gone {
		if o.Action == model.ActionDelete && o.With != "" {
			went = append(went, heldName(o)+" and "+o.With)
		}
	}
	out.Detail = fmt.Sprintf("deleted %s", words.Count(len(victims), "object", "objects")) + wentDetail(went) + keptDetail(kept)
	if len(victims) == 0 && len(kept) == 0 {
		out.Detail = fmt.Sprintf("nothing to delete: no %s", t)
	}
	return out, gone, nil
}

func describe(m *meta.RESTMapping, ns, name string) string {
	s := kube.KindName(m) + "/" + name
	if ns != "" && m.Scope.Name() == meta.RESTScopeNameNamespace {
		s += " in namespace " + ns
	}
	return s
}

func deleteDetail(deleted, missing int) string {
	s := fmt.Sprintf("deleted %s", words.Count(deleted, "object", "objects"))
	if missing > 0 {
		s += fmt.Sprintf(", %d already absent", missing)
	}
	return s
}

// ReleasePlanner predicts delete.release (implemented by runner/helmstep).
type ReleasePlanner interface {
	PlanDeleteRelease(ctx context.Context, st *spec.Step) (runner.Prediction, error)
}

// Plan is Execute's path with each delete dry-run on the server and no
// wait for the objects to go.
func (x *DeleteExecutor) Plan(ctx context.Context, st *spec.Step, _ runner.PlanInput) (runner.Prediction, error) {
	var p runner.Prediction
	d := st.Delete
	if d == nil {
		return p, wrongStep(st, spec.TypeDelete)
	}
	var gone []runner.PlannedObject
	var err error
	switch {
	case d.Release != "":
		rp, ok := x.Releases.(ReleasePlanner)
		if !ok {
			return p, errors.New("delete.release is not available: khook was built without the helm executor")
		}
		p, err = rp.PlanDeleteRelease(ctx, st)
		return p, err
	case len(d.Manifests) > 0:
		_, gone, err = x.manifests(ctx, d, kube.DryRunServer)
	default:
		_, gone, err = x.resource(ctx, d, kube.DryRunServer)
	}
	if err != nil {
		return p, err
	}
	return DeletePrediction(gone), nil
}

// DeletePrediction is a delete of objects as read: delete (count, and
// what goes with a CRD), keep (a CRD that holds data), or no-op when none
// is there.
func DeletePrediction(gone []runner.PlannedObject) runner.Prediction {
	p := runner.Prediction{Objects: gone}
	if len(gone) == 0 {
		p.Action, p.Reason = model.ActionNoop, "nothing to delete: already absent"
		return p
	}
	p.Action = model.ActionKeep
	deleted := 0
	var with []string
	for _, o := range gone {
		if o.Action != model.ActionDelete {
			continue
		}
		deleted++
		p.Action = model.ActionDelete
		if o.With != "" {
			with = append(with, heldName(o)+" and "+o.With)
		}
	}
	p.Reason = fmt.Sprintf("%s to delete", words.Count(deleted, "object", "objects"))
	if kept := len(gone) - deleted; kept > 0 {
		p.Reason += fmt.Sprintf(", %d kept", kept)
	}
	if len(with) > 0 {
		p.Reason += "; deletes " + strings.Join(with, ", ")
	}
	return p
}

// heldName names an object kept or deleted with its data as the plan's
// verdict does: "CRD widgets.example.com", "PersistentVolumeClaim shop/data".
func heldName(o runner.PlannedObject) string {
	return model.ObjectPlan{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}.Deleted()
}
