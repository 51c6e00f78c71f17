package policy

import (
	"fmt"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/client-go/informers"

	"github.com/khook/khook/spec"
)

// admissionPolicy is a ValidatingAdmissionPolicy of a --policy file with
// its bindings, compiled by the API server's own admission CEL.
type admissionPolicy struct {
	policy    *admissionv1.ValidatingAdmissionPolicy
	bindings  []*admissionv1.ValidatingAdmissionPolicyBinding
	validator validating.Validator
	file      string
	refs      refs // what its expressions read
	// params and paramScope are the dispatcher's view of its params.
	params     informers.GenericInformer
	paramScope meta.RESTScope
	// opFree is its part that judges a create and an update alike
	// (operationFree), for a policy that reads oldObject or the operation.
	opFree *admissionPolicy
}

// loadAdmission decodes the admission documents of the --policy files,
// validates each as the API server validates a create (validate.go) and
// compiles its CEL, every problem at once, each at its FILE:LINE (a
// field's own line): khook validate reports them, and plan and apply
// refuse to run with them.
func (set *Set) loadAdmission(docs []spec.AdmissionDoc) spec.Problems {
	var probs spec.Problems
	byName := map[string]*admissionPolicy{}
	var bindings []*admissionv1.ValidatingAdmissionPolicyBinding
	var bindingAt []spec.AdmissionDoc
	for _, d := range docs {
		u := &unstructured.Unstructured{Object: d.Object}
		gvk := u.GroupVersionKind()
		switch {
		case gvk.Group == admissionv1.GroupName && gvk.Kind == "ValidatingAdmissionPolicy":
			ap, bad := loadPolicy(d, u)
			probs = append(probs, bad...)
			if ap != nil {
				byName[ap.policy.Name] = ap
				set.admission = append(set.admission, ap)
				set.Notes = append(set.Notes, staticSuffixNotes("ValidatingAdmissionPolicy", ap.policy.Name)...)
			}
		case gvk.Group == admissionv1.GroupName && gvk.Kind == "ValidatingAdmissionPolicyBinding":
			b := &admissionv1.ValidatingAdmissionPolicyBinding{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(d.Object, b, true); err != nil {
				probs = append(probs, spec.Problem{Pos: d.PosOf(""), Message: fmt.Sprintf("ValidatingAdmissionPolicyBinding %s: %v", u.GetName(), err)})
				continue
			}
			probs = append(probs, refusalProblems(d, "ValidatingAdmissionPolicyBinding "+b.Name, bindingRefusals(b))...)
			set.Notes = append(set.Notes, staticSuffixNotes("ValidatingAdmissionPolicyBinding", b.Name)...)
			bindings = append(bindings, b)
			bindingAt = append(bindingAt, d)
		case gvk.Group == admissionv1.GroupName:
			probs = append(probs, spec.Problem{Pos: d.PosOf(""), Message: gvk.Kind + " is not supported in a policy file: khook evaluates ValidatingAdmissionPolicy and its bindings"})
		default:
			set.params = append(set.params, u)
		}
	}
	for i, b := range bindings {
		ap := byName[b.Spec.PolicyName]
		if ap == nil {
			probs = append(probs, spec.Problem{Pos: bindingAt[i].PosOf("spec.policyName"), Message: fmt.Sprintf("ValidatingAdmissionPolicyBinding %s binds policy %q, which no --policy file holds", b.Name, b.Spec.PolicyName)})
			continue
		}
		ap.bindings = append(ap.bindings, b)
	}
	if len(probs) > 0 {
		probs.Sort()
		return probs
	}
	for _, ap := range set.admission {
		if len(ap.bindings) == 0 {
			set.Notes = append(set.Notes, fmt.Sprintf("ValidatingAdmissionPolicy %s (%s) has no binding in the policy files, so it checks nothing (as in a cluster)", ap.policy.Name, ap.file))
		}
	}
	for _, ap := range set.admission {
		ap.refs = policyRefs(ap.policy)
		ap.params, ap.paramScope = paramSource(ap.policy.Spec.ParamKind, set.params)
		if ap.refs.oldObject || ap.refs.operation {
			ap.opFree = operationFree(ap)
		}
	}
	return nil
}

// loadPolicy decodes a policy document, validates it as the API server
// validates a create and compiles it. A policy the server refuses is
// returned uncompiled (its bindings still find it) with the refusals.
func loadPolicy(d spec.AdmissionDoc, u *unstructured.Unstructured) (*admissionPolicy, spec.Problems) {
	if v := u.GroupVersionKind().Version; v != "v1" {
		return nil, spec.Problems{{Pos: d.PosOf("apiVersion"), Message: fmt.Sprintf("ValidatingAdmissionPolicy %s is %s: write admissionregistration.k8s.io/v1", u.GetName(), u.GetAPIVersion())}}
	}
	p := &admissionv1.ValidatingAdmissionPolicy{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(d.Object, p, true); err != nil {
		return nil, spec.Problems{{Pos: d.PosOf(""), Message: fmt.Sprintf("ValidatingAdmissionPolicy %s: %v", u.GetName(), err)}}
	}
	ap := &admissionPolicy{policy: p, file: d.File}
	if refused := policyRefusals(p); len(refused) > 0 {
		return ap, refusalProblems(d, "ValidatingAdmissionPolicy "+p.Name, refused)
	}
	ap.validator = compile(p)
	if err := ap.validator.CompileError(); err != nil {
		return ap, spec.Problems{{Pos: d.PosOf(""), Message: fmt.Sprintf("ValidatingAdmissionPolicy %s does not compile: %v", p.Name, err)}}
	}
	return ap, nil
}

// compile is the API server's own compilation of a policy
// (validating.compilePolicy, unexported): the same composited environment
// with variables, match conditions, validations and message expressions,
// as stored expressions (the admission plugin's). An expression that
// does not compile was refused by the server's validation already
// (policyRefusals, which compiles each as a new expression, the stricter).
func compile(p *admissionv1.ValidatingAdmissionPolicy) validating.Validator {
	hasParam := p.Spec.ParamKind != nil
	optionalVars := cel.OptionalVariableDeclarations{HasParams: hasParam, HasAuthorizer: true}
	expressionVars := cel.OptionalVariableDeclarations{HasParams: hasParam, HasAuthorizer: false}
	c, err := cel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		return validating.NewValidator(nil, nil, nil, nil, p.Spec.FailurePolicy, err)
	}
	for _, v := range p.Spec.Variables {
		c.CompileAndStoreVariable(&validating.Variable{Name: v.Name, Expression: v.Expression}, optionalVars, environment.StoredExpressions)
	}
	var matcher matchconditions.Matcher
	if len(p.Spec.MatchConditions) > 0 {
		acc := make([]cel.ExpressionAccessor, len(p.Spec.MatchConditions))
		for i := range p.Spec.MatchConditions {
			acc[i] = (*matchconditions.MatchCondition)(&p.Spec.MatchConditions[i])
		}
		matcher = matchconditions.NewMatcher(c.CompileCondition(acc, optionalVars, environment.StoredExpressions), p.Spec.FailurePolicy, "policy", "validate", p.Name)
	}
	validations := make([]cel.ExpressionAccessor, len(p.Spec.Validations))
	messages := make([]cel.ExpressionAccessor, len(p.Spec.Validations))
	for i, v := range p.Spec.Validations {
		validations[i] = &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason}
		if v.MessageExpression != "" {
			messages[i] = &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}
		}
	}
	audits := make([]cel.ExpressionAccessor, len(p.Spec.AuditAnnotations))
	for i, a := range p.Spec.AuditAnnotations {
		audits[i] = &validating.AuditAnnotationCondition{Key: a.Key, ValueExpression: a.ValueExpression}
	}
	return validating.NewValidator(
		c.CompileCondition(validations, optionalVars, environment.StoredExpressions),
		matcher,
		c.CompileCondition(audits, optionalVars, environment.StoredExpressions),
		c.CompileCondition(messages, expressionVars, environment.StoredExpressions),
		p.Spec.FailurePolicy,
		nil,
	)
}
