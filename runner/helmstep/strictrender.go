package helmstep

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	rel "helm.sh/helm/v4/pkg/release/v1"

	"github.com/khook/khook/runner/chartsource"
	"github.com/khook/khook/runner/kube"
)

// checkFields sends every object of a dry-run release (its manifest and
// the hooks an install or upgrade runs) to the API server as a server-side
// apply dry run with strict field validation: Helm's own server dry run
// renders without sending the objects, so a typo in a rendered field would
// otherwise plan as an install and fail only when apply writes. Only the
// API server's refusal of fields fails the plan, at the field's line in
// the template's rendered output; an object that cannot be dry-run alone
// (its namespace or kind comes with the release, a webhook refuses it) is
// left to apply, as before.
func (e *Executor) checkFields(ctx context.Context, r *Release, res *rel.Release) error {
	var refused []error
	check := func(source, manifest string) error {
		text := []byte(manifest)
		objs, err := chartsource.DecodeManifest(manifest)
		if err != nil {
			return nil // Helm's render read it; apply reports what it cannot
		}
		kube.RememberRendered(objs, source, text)
		for _, obj := range objs {
			if fe := e.checkObject(ctx, r, obj); fe != nil {
				refused = append(refused, fe)
			}
		}
		return ctx.Err()
	}
	for _, doc := range chartsource.SplitBySource(res.Manifest) {
		if err := check(doc.Source, doc.Text); err != nil {
			return err
		}
	}
	for _, h := range res.Hooks {
		if chartsource.RunsOnInstallOrUpgrade(h) {
			if err := check(h.Path, "---\n# Source: "+h.Path+"\n"+h.Manifest+"\n"); err != nil {
				return err
			}
		}
	}
	return errors.Join(refused...)
}

func (e *Executor) checkObject(ctx context.Context, r *Release, obj *unstructured.Unstructured) *kube.FieldError {
	gvk := obj.GroupVersionKind()
	mapping, err := e.clients.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		fe, _ := r.checkPlanned(obj, gvk.Kind+" "+obj.GetName())
		return fe // a kind the release (or an earlier step) registers
	}
	var ri dynamic.ResourceInterface = e.clients.Dynamic.Resource(mapping.Resource)
	name := gvk.Kind + " " + obj.GetName()
	desired := obj.DeepCopy()
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if desired.GetNamespace() == "" {
			desired.SetNamespace(r.Namespace)
		}
		ri = e.clients.Dynamic.Resource(mapping.Resource).Namespace(desired.GetNamespace())
		name = gvk.Kind + " " + desired.GetNamespace() + "/" + obj.GetName()
	}
	if fe, ok := r.checkPlanned(obj, name); ok {
		return fe // its CRD changes first: checked against the planned one
	}
	addHelmMetadata(desired, r.Name, r.Namespace)
	_, err = dryRunApply(kube.WithObject(ctx, name), ri, desired)
	return kube.AsFieldError(err, obj, name)
}
