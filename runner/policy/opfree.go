package policy

import (
	"github.com/google/cel-go/common"
	admissionv1 "k8s.io/api/admissionregistration/v1"
)

// readsOperation: the expression reads oldObject or request.operation,
// what tells an update from a create.
func readsOperation(expr string) bool {
	r := refs{}
	if a, errs := celParser.Parse(common.NewTextSource(expr)); len(errs.GetErrors()) == 0 && a != nil {
		(&refWalk{r: &r, vars: map[string][]string{}, bound: map[string][]string{}}).walk(a.Expr())
	}
	return r.oldObject || r.operation
}

// operationFree is the part of a policy that judges a create and an
// update of the same object alike: its validations that read neither
// oldObject nor request.operation, compiled as a policy of their own.
// An offline plan cannot tell whether a planned object exists; a deny
// by this part holds either way. Nil when the policy's variables or match
// conditions read them (every validation may then), or no validation is
// free of them.
func operationFree(ap *admissionPolicy) *admissionPolicy {
	p := ap.policy
	for _, v := range p.Spec.Variables {
		if readsOperation(v.Expression) {
			return nil
		}
	}
	for _, m := range p.Spec.MatchConditions {
		if readsOperation(m.Expression) {
			return nil
		}
	}
	var keep []admissionv1.Validation
	for _, v := range p.Spec.Validations {
		if !readsOperation(v.Expression) && !readsOperation(v.MessageExpression) {
			keep = append(keep, v)
		}
	}
	if len(keep) == 0 {
		return nil
	}
	free := p.DeepCopy()
	free.Spec.Validations, free.Spec.AuditAnnotations = keep, nil
	v := compile(free)
	if v.CompileError() != nil {
		return nil
	}
	out := *ap
	out.policy, out.validator, out.refs = free, v, policyRefs(free)
	return &out
}
