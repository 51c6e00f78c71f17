package helmstep

import (
	"bytes"
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/runner/chartsource"
	"github.com/khook/khook/runner/kube"
)

// replaceImmutable is the post-renderer of a real install or upgrade under
// onImmutable: recreate (the step's, or an object's own annotation
// khook.io/on-immutable): each rendered object the API server would refuse
// for an immutable field (a server-side apply dry run, as Drift's) is
// replaced: deleted with foreground propagation and awaited gone before
// Helm applies the release, which then creates it. Plan predicts the same
// objects as replace (Drift with DriftInput.OnImmutable). Objects without
// the policy cost nothing; with it, a read and a dry run each.
type replaceImmutable struct {
	ctx         context.Context
	clients     *kube.Clients
	onImmutable string
	release     string
	namespace   string // the release namespace
}

func (p replaceImmutable) Run(rendered *bytes.Buffer) (*bytes.Buffer, error) {
	objs, err := chartsource.DecodeManifest(rendered.String())
	if err != nil {
		return nil, fmt.Errorf("cannot read the rendered manifest to replace objects whose immutable fields change: %w", err)
	}
	for _, obj := range objs {
		if !kube.Recreates(obj, p.onImmutable) {
			continue
		}
		m, err := p.clients.MapObject(p.ctx, obj, p.namespace)
		if err != nil {
			continue // a kind this chart brings: nothing of it exists yet
		}
		ri := p.clients.Resource(m, obj.GetNamespace())
		live, err := ri.Get(p.ctx, obj.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", kube.ObjectName(obj), p.clients.Explain(err))
		}
		desired := obj.DeepCopy()
		addHelmMetadata(desired, p.release, p.namespace)
		if _, err := dryRunApply(p.ctx, ri, desired); kube.ImmutableField(err) == "" {
			continue
		}
		if err := p.clients.Replace(p.ctx, m, live); err != nil {
			return nil, err
		}
	}
	return rendered, nil
}
