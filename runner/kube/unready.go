package kube

import (
	"context"
	"fmt"
	"strings"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/model"
)

// Unready reads the objects refs name and returns, in refs' order, those
// kstatus does not compute Current: the verdict Helm's status wait takes on
// a release's objects, so a timed-out release can say what held it. Unlike
// Diagnose it reads every ref (one GET each, no pods), within lim.Total
// after ctx's deadline; an object it cannot read is Unknown, with why.
func (c *Clients) Unready(ctx context.Context, refs []ObjectRef, lim DiagnoseLimits) []model.DiagnosedObject {
	base, cancel := context.WithTimeout(context.WithoutCancel(ctx), lim.Total)
	defer cancel()
	var out []model.DiagnosedObject
	for _, ref := range refs {
		o, ready := c.readStatus(base, ref, lim)
		if !ready {
			out = append(out, o)
		}
	}
	return out
}

func (c *Clients) readStatus(ctx context.Context, ref ObjectRef, lim DiagnoseLimits) (model.DiagnosedObject, bool) {
	o := model.DiagnosedObject{Kind: ref.GVK.Kind, Namespace: ref.Namespace, Name: ref.Name}
	rctx, cancel := context.WithTimeout(ctx, lim.ReadTimeout)
	defer cancel()
	m, err := c.MappingFor(rctx, ref.GVK)
	if err == nil {
		var obj *unstructured.Unstructured
		if obj, err = c.Resource(m, ref.Namespace).Get(rctx, ref.Name, metav1.GetOptions{}); err == nil {
			return statusOf(obj)
		}
	}
	if isNotFoundish(err) {
		o.Status = status.NotFoundStatus.String()
		return o, false
	}
	o.Status, o.Message = status.UnknownStatus.String(), "cannot be read: "+c.Explain(err).Error()
	return o, false
}

// statusOf is kstatus's verdict on obj, and whether it is Current. A
// terminating object says what holds it rather than kstatus's "Resource
// scheduled for deletion".
func statusOf(obj *unstructured.Unstructured) (model.DiagnosedObject, bool) {
	o := model.DiagnosedObject{Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
	res, err := status.Compute(obj)
	if err != nil {
		o.Status, o.Message = status.UnknownStatus.String(), "status cannot be computed: "+err.Error()
		return o, false
	}
	o.Status, o.Message = res.Status.String(), res.Message
	if res.Status == status.TerminatingStatus {
		o.Message = ""
		if f := obj.GetFinalizers(); len(f) > 0 {
			o.Message = "held by finalizers " + strings.Join(f, ", ")
		}
	}
	return o, res.Status == status.CurrentStatus
}

// WaitingFor names objects kubectl-style on one line, each with its status
// and kstatus's message, at most max of them and then "and N more":
// "customresourcedefinition/widgets.example.com (Terminating: held by
// finalizers ...), deployment/shop/web (InProgress: Available: 0/1)".
func WaitingFor(objs []model.DiagnosedObject, max int) string {
	parts := make([]string, 0, min(len(objs), max)+1)
	for i, o := range objs {
		if i == max {
			parts = append(parts, fmt.Sprintf("and %d more", len(objs)-max))
			break
		}
		why := o.Status
		if o.Message != "" {
			why += ": " + strings.Join(strings.Fields(o.Message), " ")
		}
		parts = append(parts, fmt.Sprintf("%s/%s (%s)", strings.ToLower(o.Kind), qualifiedName(o.Namespace, o.Name), why))
	}
	return strings.Join(parts, ", ")
}
