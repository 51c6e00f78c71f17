package helmstep

import (
	"context"
	"fmt"

	rel "helm.sh/helm/v4/pkg/release/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/manifest"
)

// adopted is an object of the rendered release that exists in the cluster
// without belonging to the release: takeOwnership adopts it.
type adopted struct {
	obj     *unstructured.Unstructured
	mapping *meta.RESTMapping
}

// takeOver runs a takeOwnership step (helm --take-ownership). It renders
// the release as a server-side dry run first, names every existing object
// the release would adopt (r.Adopts: plan lists them), refuses an object
// another release owns with that release's name, and, for real, hands the
// fields client-side kubectl apply owns on each adopted object to Helm's
// server-side apply manager, so a field later dropped from the chart is
// removed from the object.
func (e *Executor) takeOver(ctx context.Context, r *Release, do verdict, dry kube.DryRunStrategy) (*rel.Release, error) {
	preview, err := e.runAction(ctx, r, do, kube.DryRunServer)
	if err != nil || dry.IsDryRun() {
		if err == nil {
			_, err = adoptions(ctx, e.clients, r, preview.Manifest)
		}
		return preview, err
	}
	objs, err := adoptions(ctx, e.clients, r, preview.Manifest)
	if err != nil {
		return nil, err
	}
	for _, a := range objs {
		if _, err := e.clients.UpgradeClientSide(ctx, a.mapping, a.obj, FieldManager); err != nil {
			return nil, failure(e.clients, r, err)
		}
	}
	return e.runAction(ctx, r, do, dry)
}

// adoptions reads every object of rendered and returns those the release
// would adopt, naming them in r.Adopts.
func adoptions(ctx context.Context, clients *kube.Clients, r *Release, rendered string) ([]adopted, error) {
	objs, err := manifest.DecodeManifests([]byte(rendered))
	if err != nil {
		return nil, failure(clients, r, fmt.Errorf("cannot read the rendered manifest: %w", err))
	}
	r.Adopts = nil
	var out []adopted
	for _, obj := range objs {
		m, err := clients.MapObject(ctx, obj, r.Namespace)
		if err != nil {
			return nil, failure(clients, r, err)
		}
		live, err := clients.Resource(m, obj.GetNamespace()).Get(ctx, obj.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, failure(clients, r, fmt.Errorf("cannot read %s: %w", kube.ObjectName(obj), clients.Explain(err)))
		}
		owner, ownerNS := live.GetAnnotations()[releaseNameAnnotation], live.GetAnnotations()[releaseNamespaceAnnot]
		switch {
		case owner == r.Name && ownerNS == r.Namespace:
			continue // the release's own
		case owner != "":
			return nil, failure(clients, r, fmt.Errorf("%s belongs to Helm release %s in namespace %s: takeOwnership adopts only objects no release owns; uninstall or change release %s, or remove the object from this chart",
				kube.ObjectName(live), owner, ownerNS, owner))
		}
		out = append(out, adopted{obj: live, mapping: m})
		r.Adopts = append(r.Adopts, kube.ObjectName(live))
	}
	return out, nil
}
