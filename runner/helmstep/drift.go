package helmstep

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/chartsource"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/objdiff"
)

// Labels and annotations Helm adds to every object it applies; they are not
// part of a release manifest.
const (
	managedByLabel        = "app.kubernetes.io/managed-by"
	managedByHelm         = "Helm"
	releaseNameAnnotation = "meta.helm.sh/release-name"
	releaseNamespaceAnnot = "meta.helm.sh/release-namespace"
)

// DriftInput names a rendered release: its manifest (release.Manifest, or
// the manifest of an install/upgrade dry run) and where it lives.
type DriftInput struct {
	Release   string
	Namespace string // the release namespace: namespace-less namespaced objects go here
	Manifest  string // multi-document YAML
	// Applied says Manifest is what Helm applied last (the deployed
	// release's own): an object whose live state already holds every field
	// of it as written (objdiff.Holds) needs no dry run. A rendered
	// upgrade may drop fields Helm owns, so it is dry-run in full.
	Applied bool
	// Ignore are the step's ignore rules: fields the decision leaves out.
	Ignore objdiff.Options
	// OnImmutable is the step's onImmutable: an object the server refuses
	// for an immutable field is then a replace (replaceOf), not an error.
	OnImmutable string
	// Planned, when set, says the plan changes the CRD of the kind
	// ("Kind.group") first (Release.PlansKind): such an object is compared
	// locally, since a dry run would check it against the CRD live.
	Planned func(groupKind string) bool
}

// ObjectDiff is one object of a manifest whose live state differs from what
// applying the manifest would leave.
type ObjectDiff struct {
	APIVersion string
	Kind       string
	Namespace  string // empty for cluster-scoped objects
	Name       string
	// Action is create (the object is absent, or its kind is not served any
	// more) or configure (applying the manifest would change it): the change
	// decision's (objdiff.Decide).
	Action model.Action
	// Live is the object in the cluster (nil for create); Desired is the
	// object as the API server would store it after the apply (server-side
	// dry run, so defaulting and admission are accounted for), or the
	// manifest object for create. Both are normalised (objdiff.Normalize).
	// Secrets carry their data: callers that print them must mask it.
	Live, Desired *unstructured.Unstructured
}

// String is "ConfigMap demo/settings (configure)".
func (d ObjectDiff) String() string {
	id := d.Name
	if d.Namespace != "" {
		id = d.Namespace + "/" + d.Name
	}
	return fmt.Sprintf("%s %s (%s)", d.Kind, id, d.Action)
}

// Drift compares every object of a rendered release with the cluster and
// returns those that applying the manifest would create or change; none
// means converged. For each object it reads the live object (from the run's
// cache: one LIST per resource and namespace, see kube.Clients.Live) and,
// when it exists and may differ, sends a server-side apply dry run (DryRun=All, Helm's field
// manager, forced, with the release labels and annotations Helm adds), then
// compares the result with the live object. It sends no write. An object
// edited out of band (kubectl edit) shows as configure.
func Drift(ctx context.Context, c *kube.Clients, in DriftInput) ([]ObjectDiff, error) {
	objs, err := chartsource.DecodeManifest(in.Manifest)
	if err != nil {
		return nil, fmt.Errorf("release %s: cannot read its manifest: %w", in.Release, err)
	}
	var diffs []ObjectDiff
	for _, obj := range objs {
		d, err := driftOne(ctx, c, in, obj)
		if err != nil {
			return nil, err
		}
		if d != nil {
			diffs = append(diffs, *d)
		}
	}
	return diffs, nil
}

func driftOne(ctx context.Context, c *kube.Clients, in DriftInput, obj *unstructured.Unstructured) (*ObjectDiff, error) {
	gvk := obj.GroupVersionKind()
	d := &ObjectDiff{APIVersion: obj.GetAPIVersion(), Kind: gvk.Kind, Name: obj.GetName()}
	mapping, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		c.Mapper.Reset() // a kind registered since discovery was cached
		mapping, err = c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if meta.IsNoMatchError(err) {
		d.Namespace = obj.GetNamespace()
		change := objdiff.Decide(nil, obj, in.Ignore)
		d.Action, d.Desired = change.Action, change.After
		return d, nil // its kind is not served: the object cannot exist
	}
	if err != nil {
		return nil, fmt.Errorf("release %s: cannot resolve kind %s: %w", in.Release, gvk, err)
	}
	var ri dynamic.ResourceInterface = c.Dynamic.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if obj.GetNamespace() == "" {
			obj.SetNamespace(in.Namespace)
		}
		d.Namespace = obj.GetNamespace()
		ri = c.Dynamic.Resource(mapping.Resource).Namespace(d.Namespace)
	} else {
		obj.SetNamespace("")
	}

	desired := obj.DeepCopy()
	addHelmMetadata(desired, in.Release, in.Namespace)
	// Controllers update objects all the time (status, revision annotations):
	// a comparison only counts when the object did not change between the
	// GET and the dry run, which answers with the resourceVersion it used.
	for attempt := 0; ; attempt++ {
		var live *unstructured.Unstructured
		var cached bool
		if attempt == 0 {
			live, cached, err = c.Live(ctx, mapping, d.Namespace, obj.GetName())
		} else {
			live, err = ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
		}
		if apierrors.IsNotFound(err) && cached {
			continue // created since the run's cached read? read it fresh
		}
		if apierrors.IsNotFound(err) {
			if !in.Applied && (in.Planned == nil || !in.Planned(gvk.Kind+"."+gvk.Group)) {
				// What install or upgrade would create: the server's dry run
				// says whether it refuses it (an admission policy, RBAC, a
				// quota), as it would refuse Helm's create. A namespace the
				// release creates is not there yet: nothing to ask. A
				// custom resource whose CRD the plan changes first is
				// checked against that CRD instead (checkFields): the
				// server would check it against the CRD live.
				_, derr := dryRunApply(ctx, ri, desired)
				if r := kube.Refused(d.id(), derr); r != nil && !kube.IsUnreachable(derr) {
					return nil, fmt.Errorf("release %s: %w", in.Release, r)
				}
			}
			change := objdiff.Decide(nil, obj, in.Ignore)
			d.Action, d.Desired = change.Action, change.After
			return d, nil
		}
		if err != nil {
			return nil, fmt.Errorf("release %s: cannot read %s: %w", in.Release, d.id(), err)
		}
		if in.Applied && objdiff.Holds(mapping, live, desired, in.Ignore) {
			return nil, nil
		}
		if in.Planned != nil && in.Planned(gvk.Kind+"."+gvk.Group) {
			change := objdiff.Decide(live, overlay(live, desired), in.Ignore)
			if !change.Changed() {
				return nil, nil
			}
			d.Action, d.Live, d.Desired = change.Action, change.Live, change.After
			return d, nil
		}
		applied, replace, err := replaceOf(ctx, ri, desired, in.OnImmutable)
		if replace {
			change := objdiff.Decide(live, desired, in.Ignore)
			d.Action, d.Live, d.Desired = model.ActionReplace, change.Live, change.After
			return d, nil
		}
		if r := kube.Refused(d.id(), err); r != nil && !kube.IsUnreachable(err) {
			return nil, fmt.Errorf("release %s: %w", in.Release, r)
		}
		if err != nil {
			return nil, fmt.Errorf("release %s: cannot compare %s with the cluster (server-side apply dry run): %w", in.Release, d.id(), err)
		}
		if applied.GetResourceVersion() != live.GetResourceVersion() && attempt < 3 {
			continue
		}
		change := objdiff.Decide(live, applied, in.Ignore)
		if !change.Changed() {
			return nil, nil
		}
		d.Action, d.Live, d.Desired = change.Action, change.Live, change.After
		return d, nil
	}
}

func (d *ObjectDiff) id() string {
	if d.Namespace != "" {
		return fmt.Sprintf("%s %s/%s", d.Kind, d.Namespace, d.Name)
	}
	return d.Kind + " " + d.Name
}

// addHelmMetadata adds what Helm's install/upgrade adds to each object, so
// the dry run neither adds nor removes it.
func addHelmMetadata(obj *unstructured.Unstructured, release, namespace string) {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[managedByLabel] = managedByHelm
	obj.SetLabels(labels)
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[releaseNameAnnotation] = release
	ann[releaseNamespaceAnnot] = namespace
	obj.SetAnnotations(ann)
}

// overlay is live with desired's fields set over it (its labels and
// annotations added): a custom resource as an apply would leave it, when
// the server cannot yet say (its CRD changes first).
func overlay(live, desired *unstructured.Unstructured) *unstructured.Unstructured {
	out := live.DeepCopy()
	for k, v := range desired.Object {
		if k != "metadata" && k != "status" {
			out.Object[k] = v
		}
	}
	merge := func(have, add map[string]string) map[string]string {
		if len(add) == 0 {
			return have
		}
		if have == nil {
			have = map[string]string{}
		}
		for k, v := range add {
			have[k] = v
		}
		return have
	}
	out.SetLabels(merge(out.GetLabels(), desired.GetLabels()))
	out.SetAnnotations(merge(out.GetAnnotations(), desired.GetAnnotations()))
	return out
}
