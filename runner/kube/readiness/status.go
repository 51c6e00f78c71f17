package readiness

import (
	"fmt"
	"strings"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/model"
)

// Status is kstatus's verdict on obj, and whether it is Current. A
// terminating object says what holds it rather than kstatus's "Resource
// scheduled for deletion".
func Status(obj *unstructured.Unstructured) (model.DiagnosedObject, bool) {
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
		parts = append(parts, fmt.Sprintf("%s/%s (%s)", strings.ToLower(o.Kind), QualifiedName(o.Namespace, o.Name), why))
	}
	return strings.Join(parts, ", ")
}

// QualifiedName is "namespace/name", or name alone for a cluster-scoped object.
func QualifiedName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}
