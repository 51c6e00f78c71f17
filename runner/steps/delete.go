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

	"github.com/khook/khook/report"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/spec"
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

// Delete removes what manifests define, what a resource argument selects, or
// (through Releases) a Helm release, then waits until it is gone.
type Delete struct {
	Env
	Releases ReleaseDeleter // nil: delete.release fails with a clear error
}

// NewDelete returns the delete executor.
func NewDelete(env Env, releases ReleaseDeleter) *Delete {
	return &Delete{Env: env, Releases: releases}
}

// Execute deletes and waits for the objects to disappear.
func (x *Delete) Execute(ctx context.Context, st *spec.Step) (runner.Outcome, error) {
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
		out, err := x.manifests(ctx, d)
		return x.finishStep(st, out, err)
	case d.Resource != "":
		out, err := x.resource(ctx, d)
		return x.finishStep(st, out, err)
	}
	return x.finish(runner.Outcome{}, errors.New("delete sets none of manifests, resource, release"))
}

func (x *Delete) manifests(ctx context.Context, d *spec.Delete) (runner.Outcome, error) {
	var out runner.Outcome
	objs, err := kube.LoadManifests(ctx, x.BaseDir, d.Manifests, x.Redactor)
	if err != nil {
		return out, err
	}
	c := x.Clients
	ns := spec.NamespaceOrDefault(d.Namespace)
	var victims []kube.Deleted
	var kept []string
	missing := 0
	for i := len(objs) - 1; i >= 0; i-- { // last first: CRs before their CRDs, objects before namespaces
		obj := objs[i]
		m, err := c.MapObject(ctx, obj, ns)
		if err != nil {
			if kube.IsUnreachable(err) {
				return out, err
			}
			// An unknown kind has no objects: nothing to delete.
			if !d.IgnoresNotFound() {
				return out, fmt.Errorf("cannot delete %s: %w", kube.ObjectName(obj), err)
			}
			missing++
			continue
		}
		v, keep, err := x.deleteOne(ctx, d, m, obj.GetNamespace(), obj.GetName())
		if err != nil {
			return out, err
		}
		if keep != "" {
			kept = append(kept, keep)
			continue
		}
		if v == nil {
			if !d.IgnoresNotFound() {
				return out, fmt.Errorf("cannot delete %s: not found (set ignoreNotFound: true to accept absent objects)", kube.ObjectName(obj))
			}
			missing++
			continue
		}
		out.Writes++
		victims = append(victims, *v)
		out.Changes = append(out.Changes, change(report.DidDelete, m, v.Namespace, v.Name))
	}
	if err := kube.WaitGone(ctx, c, victims); err != nil {
		return out, err
	}
	out.Detail = deleteDetail(len(victims), missing) + keptDetail(kept)
	return out, nil
}

// deleteOne deletes with background propagation (kubectl's default); nil
// means the object was not there. A CRD custom resources of which exist is
// kept unless the step says deleteCRDs: kept says so.
func (x *Delete) deleteOne(ctx context.Context, d *spec.Delete, m *meta.RESTMapping, ns, name string) (v *kube.Deleted, kept string, err error) {
	c := x.Clients
	r := c.Resource(m, ns)
	live, err := r.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("cannot read %s: %w", describe(m, ns, name), c.Explain(err))
	}
	action, reason, _, err := DeleteDecision(ctx, c, d, live)
	if err != nil {
		return nil, "", err
	}
	if action == report.ActionKeep {
		kube.Warn(ctx, kube.ObjectName(live), "kept: "+reason)
		return nil, "CRD " + name + " (" + reason + ")", nil
	}
	v, err = x.DeleteUID(ctx, m, ns, name, live.GetUID())
	return v, "", err
}

// DeleteDecision is what a delete step does to live, for plan and apply
// alike: delete, or keep a CRD custom resources of which exist when the
// step does not say deleteCRDs (reason says why). with is what a deleted
// CRD takes with it ("its 2 Widget objects in 1 namespace").
func DeleteDecision(ctx context.Context, c *kube.Clients, d *spec.Delete, live *unstructured.Unstructured) (action report.Action, reason, with string, err error) {
	if !kube.IsCRD(live) {
		return report.ActionDelete, "", "", nil
	}
	usage, err := c.CRDUsageOf(ctx, live)
	if err != nil || usage.Objects == 0 {
		return report.ActionDelete, "", "", err
	}
	if d.DeleteCRDs {
		return report.ActionDelete, "deleteCRDs: true", "its " + usage.String(), nil
	}
	return report.ActionKeep, usage.String() + " exist: deleting the CRD deletes them; set deleteCRDs: true on the step to delete both", "", nil
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
func (x *Delete) DeleteUID(ctx context.Context, m *meta.RESTMapping, ns, name string, uid types.UID) (*kube.Deleted, error) {
	c := x.Clients
	r := c.Resource(m, ns)
	bg := metav1.DeletePropagationBackground
	err := r.Delete(ctx, name, metav1.DeleteOptions{
		PropagationPolicy: &bg,
		Preconditions:     &metav1.Preconditions{UID: &uid},
	})
	kube.InvalidateLiveOf(ctx, m, ns)
	if m.Resource == kube.CRDMapping.Resource {
		c.ForgetCRD(name)
	}
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) { // gone, or replaced, meanwhile
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot delete %s: %w", describe(m, ns, name), c.Explain(err))
	}
	return &kube.Deleted{Mapping: m, Namespace: ns, Name: name, UID: uid}, nil
}

func (x *Delete) resource(ctx context.Context, d *spec.Delete) (runner.Outcome, error) {
	var out runner.Outcome
	c := x.Clients
	res, err := c.ResolveObject(ctx, "resource", d)
	if err != nil {
		return out, err
	}
	t := kube.Target{Mapping: res.Mapping, Name: res.Name, LabelSelector: d.Selector, FieldSelector: d.FieldSelector}
	if !d.AllNamespaces {
		t.Namespace = spec.NamespaceOrDefault(d.Namespace)
	}
	if err := t.Validate(); err != nil {
		return out, err
	}
	var victims []kube.Deleted
	var kept []string
	// One named object in one namespace: get and delete it. Everything else
	// (selectors, a name across all namespaces) lists first.
	if res.Name != "" && d.Selector == "" && d.FieldSelector == "" && (t.Namespace != "" || !res.Namespaced()) {
		v, keep, err := x.deleteOne(ctx, d, res.Mapping, t.Namespace, res.Name)
		if err != nil {
			return out, err
		}
		if keep != "" {
			out.Detail = "kept " + keep
			return out, nil
		}
		if v == nil {
			if !d.IgnoresNotFound() {
				return out, fmt.Errorf("cannot delete %s: not found (set ignoreNotFound: true to accept an absent object)", t)
			}
			out.Detail = fmt.Sprintf("%s already absent", t)
			return out, nil
		}
		victims = append(victims, *v)
	} else {
		list, err := t.ListWatch(c).ListWithContextFunc(ctx, metav1.ListOptions{})
		if err != nil {
			return out, fmt.Errorf("cannot list %s: %w", t, c.Explain(err))
		}
		items, _ := meta.ExtractList(list)
		for _, it := range items {
			u, ok := it.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			v, keep, err := x.deleteOne(ctx, d, res.Mapping, u.GetNamespace(), u.GetName())
			if err != nil {
				return out, err
			}
			if keep != "" {
				kept = append(kept, keep)
			}
			if v != nil {
				victims = append(victims, *v)
			}
		}
		if len(victims) == 0 && len(kept) == 0 && !d.IgnoresNotFound() {
			return out, fmt.Errorf("cannot delete %s: nothing matched (set ignoreNotFound: true to accept that)", t)
		}
	}
	out.Writes = len(victims)
	for _, v := range victims {
		out.Changes = append(out.Changes, change(report.DidDelete, v.Mapping, v.Namespace, v.Name))
	}
	if err := kube.WaitGone(ctx, c, victims); err != nil {
		return out, err
	}
	out.Detail = fmt.Sprintf("deleted %s", plural(len(victims), "object", "objects")) + keptDetail(kept)
	if len(victims) == 0 && len(kept) == 0 {
		out.Detail = fmt.Sprintf("nothing to delete: no %s", t)
	}
	return out, nil
}

func describe(m *meta.RESTMapping, ns, name string) string {
	s := kube.KindName(m) + "/" + name
	if ns != "" && m.Scope.Name() == meta.RESTScopeNameNamespace {
		s += " in namespace " + ns
	}
	return s
}

func deleteDetail(deleted, missing int) string {
	s := fmt.Sprintf("deleted %s", plural(deleted, "object", "objects"))
	if missing > 0 {
		s += fmt.Sprintf(", %d already absent", missing)
	}
	return s
}
