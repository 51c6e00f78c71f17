package wait

import (
	"context"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/readiness"
)

// Unready reads the objects refs name and returns, in refs' order, those
// kstatus does not compute Current: the verdict Helm's status wait takes on
// a release's objects, so a timed-out release can say what held it. Unlike
// Diagnose it reads every ref (one GET each, no pods), within lim.Total
// after ctx's deadline; an object it cannot read is Unknown, with why.
func Unready(ctx context.Context, c *kube.Clients, refs []ObjectRef, lim DiagnoseLimits) []model.DiagnosedObject {
	base, cancel := context.WithTimeout(context.WithoutCancel(ctx), lim.Total)
	defer cancel()
	var out []model.DiagnosedObject
	for _, ref := range refs {
		o, ready := readStatus(base, c, ref, lim)
		if !ready {
			out = append(out, o)
		}
	}
	return out
}

func readStatus(ctx context.Context, c *kube.Clients, ref ObjectRef, lim DiagnoseLimits) (model.DiagnosedObject, bool) {
	o := model.DiagnosedObject{Kind: ref.GVK.Kind, Namespace: ref.Namespace, Name: ref.Name}
	rctx, cancel := context.WithTimeout(ctx, lim.ReadTimeout)
	defer cancel()
	m, err := c.MappingFor(rctx, ref.GVK)
	if err == nil {
		var obj *unstructured.Unstructured
		if obj, err = c.Resource(m, ref.Namespace).Get(rctx, ref.Name, metav1.GetOptions{}); err == nil {
			return readiness.Status(obj)
		}
	}
	if kube.IsNotFoundish(err) {
		o.Status = status.NotFoundStatus.String()
		return o, false
	}
	o.Status, o.Message = status.UnknownStatus.String(), "cannot be read: "+c.Explain(err).Error()
	return o, false
}
