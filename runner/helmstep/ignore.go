package helmstep

import (
	"bytes"
	"context"
	"fmt"

	"helm.sh/helm/v4/pkg/postrenderer"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/runner/chartsource"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/objdiff"
)

// leaveIgnored is the post-renderer of an upgrade under ignore rules. Helm
// v4 upgrades with server-side apply, forced (ForceConflicts): every field
// of the rendered object is taken by Helm's manager, whoever owns it.
// Setting the live value into the rendered object would make Helm co-own
// a field another controller writes (a later apply by that controller
// would conflict); stripping it from what Helm applies leaves it to its
// owner: Helm no longer owns a field someone else changed (an update or a
// forced apply took it), so leaving it out neither reverts nor removes it
// (objdiff.Options.LeaveIgnored). Objects that do not exist yet are rendered whole: a
// create sets every field. The release records the manifest as applied.
type leaveIgnored struct {
	ctx       context.Context
	clients   *kube.Clients
	opts      objdiff.Options
	namespace string // the release namespace
}

func (p leaveIgnored) Run(rendered *bytes.Buffer) (*bytes.Buffer, error) {
	objs, err := chartsource.DecodeManifest(rendered.String())
	if err != nil {
		return nil, fmt.Errorf("cannot read the rendered manifest to leave ignored fields alone: %w", err)
	}
	var out bytes.Buffer
	for _, obj := range objs {
		m, err := p.clients.MapObject(p.ctx, obj, p.namespace)
		if err == nil {
			live, _, lerr := p.clients.Live(p.ctx, m, obj.GetNamespace(), obj.GetName())
			switch {
			case lerr == nil:
				obj = p.opts.LeaveIgnored(live, obj, true)
			case !apierrors.IsNotFound(lerr):
				return nil, fmt.Errorf("cannot read %s to leave its ignored fields alone: %w", kube.ObjectName(obj), lerr)
			}
		}
		// An unmapped kind (a CRD of this chart) cannot exist yet: as rendered.
		b, err := yaml.Marshal(obj.Object)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	return &out, nil
}

// chainPostRenderers runs each non-nil renderer in order; nil when none is.
func chainPostRenderers(rs ...postrenderer.PostRenderer) postrenderer.PostRenderer {
	var set chain
	for _, r := range rs {
		if r != nil {
			set = append(set, r)
		}
	}
	switch len(set) {
	case 0:
		return nil
	case 1:
		return set[0]
	}
	return set
}

type chain []postrenderer.PostRenderer

func (c chain) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	for _, r := range c {
		out, err := r.Run(in)
		if err != nil {
			return nil, err
		}
		in = out
	}
	return in, nil
}
