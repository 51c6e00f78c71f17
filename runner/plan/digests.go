package plan

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/kube/objdiff"
	"github.com/khook/khook/spec"
)

// digested adds to o the digests of the object the prediction sends
// (desired) and of the live object it was made against, each as the change
// decision compares it (objdiff.Normalize): a status update or the server's
// bookkeeping between plan and apply is no surprise, an edit is. No-op
// without a hasher.
func (pr *probe) digested(o model.ObjectPlan, desired, live *unstructured.Unstructured) model.ObjectPlan {
	if pr.Digest == nil {
		return o
	}
	if desired != nil {
		o.Desired = pr.Digest.Object(objdiff.Normalize(desired, pr.changeOptions()).Object)
	}
	if live != nil {
		o.Live = pr.Digest.Object(objdiff.Normalize(live, pr.changeOptions()).Object)
	}
	return o
}

// changeOptions are the step's ignore rules for the change decision (the
// spec validated them; a helm or apply step's only).
func (pr *probe) changeOptions() objdiff.Options {
	opts, _ := objdiff.IgnoreOptions(pr.step.Ignored)
	return opts
}

// releaseDigest is what a helm step is predicted against: the last
// revision and the chart and values apply would install (nil: not known,
// no digest).
func (pr *probe) releaseDigest(r *runner.PlannedRelease) {
	if pr.Digest == nil || r == nil {
		return
	}
	d := &model.ReleaseDigest{Revision: r.Revision, Archive: r.ChartDigest, Version: r.ChartVersion}
	if r.Chart != nil {
		d.Chart = pr.Digest.JSON("chart", r.Chart)
	}
	if r.Values != nil {
		d.Values = pr.Digest.JSON("values", r.Values)
	}
	pr.out.Release = d
}

// planDigests fills the plan-wide digests: the spec (with the local
// manifests it names, so an edited file changes it even when its step
// cannot be assessed yet), each declared input, and the cluster's
// kube-system UID.
func (l *Live) planDigests(ctx context.Context, s *spec.Spec, p *model.Plan) error {
	h := l.Digest
	d := &model.PlanDigests{Keyed: h.Keyed(), KeyCheck: h.KeyCheck()}
	var manifests []any
	for _, st := range s.Steps {
		if m := st.Manifests(); m.Sources != nil {
			manifests = append(manifests, objectsOf(localObjects(s.BaseDir, m.Sources)))
		} else {
			manifests = append(manifests, nil)
		}
	}
	d.Spec = h.JSON("spec", struct {
		Spec      *spec.Spec
		Manifests []any
	}{s, manifests})
	if d.Spec == "" {
		return fmt.Errorf("cannot digest the spec %s: it does not encode as JSON", s.Metadata.Name)
	}
	if s.Declared != nil {
		for _, v := range s.Declared.Vars {
			d.Inputs = append(d.Inputs, model.InputDigest{Name: v.Name, Secret: v.Secret, Digest: h.Input(v.Name, v.Value, v.Secret)})
		}
	}
	ns, err := l.Clients.Typed.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
	if err == nil {
		d.ClusterUID = string(ns.UID)
	} else if ctx.Err() != nil {
		return err
	} // unreadable (RBAC): the server URL alone names the cluster
	p.Digests = d
	return nil
}

func objectsOf(objs []*unstructured.Unstructured) []map[string]any {
	out := make([]map[string]any, len(objs))
	for i, o := range objs {
		out[i] = o.Object
	}
	return out
}
