package policy

import (
	"errors"
	"fmt"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/client-go/informers"

	"github.com/khook/khook/celenv"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/words"
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

// loadAdmission decodes and compiles the admission documents of the
// --policy files, every problem at once, each at its FILE:LINE (a CEL
// expression's at its own line): khook validate reports them, and plan
// and apply refuse to run with them.
func (set *Set) loadAdmission(docs []spec.AdmissionDoc) spec.Problems {
	var probs spec.Problems
	add := func(pos spec.Pos, format string, args ...any) {
		probs = append(probs, spec.Problem{Pos: pos, Message: fmt.Sprintf(format, args...)})
	}
	byName := map[string]*admissionPolicy{}
	var bindings []*admissionv1.ValidatingAdmissionPolicyBinding
	var bindingAt []spec.AdmissionDoc
	for _, d := range docs {
		at := d.PosOf("")
		u := &unstructured.Unstructured{Object: d.Object}
		gvk := u.GroupVersionKind()
		switch {
		case gvk.Group == admissionv1.GroupName && gvk.Kind == "ValidatingAdmissionPolicy":
			if gvk.Version != "v1" {
				add(d.PosOf("apiVersion"), "ValidatingAdmissionPolicy %s is %s: write admissionregistration.k8s.io/v1", u.GetName(), u.GetAPIVersion())
				continue
			}
			p := &admissionv1.ValidatingAdmissionPolicy{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(d.Object, p, true); err != nil {
				add(at, "ValidatingAdmissionPolicy %s: %v", u.GetName(), err)
				continue
			}
			for _, sp := range validatePolicy(p) {
				add(d.PosOf(sp.path), "ValidatingAdmissionPolicy %s: the API server refuses it: %s", p.Name, sp.msg)
			}
			defaultPolicy(p)
			v, bad := compile(p)
			for _, b := range bad {
				add(d.PosOf(b.path), "ValidatingAdmissionPolicy %s: %s does not compile: %s", p.Name, b.path, b.msg)
			}
			if err := v.CompileError(); err != nil && len(bad) == 0 {
				add(at, "ValidatingAdmissionPolicy %s does not compile: %v", p.Name, err)
			}
			ap := &admissionPolicy{policy: p, validator: v, file: d.File}
			byName[p.Name] = ap
			set.admission = append(set.admission, ap)
		case gvk.Group == admissionv1.GroupName && gvk.Kind == "ValidatingAdmissionPolicyBinding":
			b := &admissionv1.ValidatingAdmissionPolicyBinding{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(d.Object, b, true); err != nil {
				add(at, "ValidatingAdmissionPolicyBinding %s: %v", u.GetName(), err)
				continue
			}
			for _, sp := range validateBinding(b) {
				add(d.PosOf(sp.path), "ValidatingAdmissionPolicyBinding %s: the API server refuses it: %s", b.Name, sp.msg)
			}
			if b.Spec.MatchResources != nil {
				defaultMatch(b.Spec.MatchResources)
			}
			bindings = append(bindings, b)
			bindingAt = append(bindingAt, d)
		case gvk.Group == admissionv1.GroupName:
			add(at, "%s is not supported in a policy file: khook evaluates ValidatingAdmissionPolicy and its bindings", gvk.Kind)
		default:
			set.params = append(set.params, u)
		}
	}
	for i, b := range bindings {
		ap := byName[b.Spec.PolicyName]
		if ap == nil {
			add(bindingAt[i].PosOf("spec.policyName"), "ValidatingAdmissionPolicyBinding %s binds policy %q, which no --policy file holds", b.Name, b.Spec.PolicyName)
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

// defaultPolicy sets what the API server defaults when a policy is
// created (k8s.io/kubernetes' admissionregistration/v1 defaults), which
// the admission machinery relies on.
func defaultPolicy(p *admissionv1.ValidatingAdmissionPolicy) {
	if p.Spec.FailurePolicy == nil {
		fail := admissionv1.Fail
		p.Spec.FailurePolicy = &fail
	}
	if p.Spec.MatchConstraints == nil {
		p.Spec.MatchConstraints = &admissionv1.MatchResources{}
	}
	defaultMatch(p.Spec.MatchConstraints)
}

func defaultMatch(m *admissionv1.MatchResources) {
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &metav1.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &metav1.LabelSelector{}
	}
	if m.MatchPolicy == nil {
		eq := admissionv1.Equivalent
		m.MatchPolicy = &eq
	}
	for _, rules := range [][]admissionv1.NamedRuleWithOperations{m.ResourceRules, m.ExcludeResourceRules} {
		for i := range rules {
			if rules[i].Scope == nil {
				all := admissionv1.AllScopes
				rules[i].Scope = &all
			}
		}
	}
}

// badExpr is an expression of a policy that does not compile: its field
// path in the policy and the compiler's word, one line.
type badExpr struct{ path, msg string }

// compile is the API server's own compilation of a policy
// (validating.compilePolicy, unexported): the same composited environment
// with variables, match conditions, validations and message expressions.
// It returns each expression that does not compile, as the API server
// refuses such a policy when it is created; the validator alone would
// only fail each request it is asked about.
func compile(p *admissionv1.ValidatingAdmissionPolicy) (validating.Validator, []badExpr) {
	hasParam := p.Spec.ParamKind != nil
	optionalVars := cel.OptionalVariableDeclarations{HasParams: hasParam, HasAuthorizer: true}
	expressionVars := cel.OptionalVariableDeclarations{HasParams: hasParam, HasAuthorizer: false}
	c, err := cel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		return validating.NewValidator(nil, nil, nil, nil, p.Spec.FailurePolicy, err), nil
	}
	var bad []badExpr
	check := func(path string, res cel.CompilationResult) {
		if res.Error != nil {
			bad = append(bad, badExpr{path, compileMessage(res.Error)})
		}
	}
	for i, v := range p.Spec.Variables {
		check(fmt.Sprintf("spec.variables.%d.expression", i), c.CompileAndStoreVariable(&validating.Variable{Name: v.Name, Expression: v.Expression}, optionalVars, environment.StoredExpressions))
	}
	var matcher matchconditions.Matcher
	if len(p.Spec.MatchConditions) > 0 {
		acc := make([]cel.ExpressionAccessor, len(p.Spec.MatchConditions))
		for i := range p.Spec.MatchConditions {
			acc[i] = (*matchconditions.MatchCondition)(&p.Spec.MatchConditions[i])
			check(fmt.Sprintf("spec.matchConditions.%d.expression", i), c.CompileCELExpression(acc[i], optionalVars, environment.StoredExpressions))
		}
		matcher = matchconditions.NewMatcher(c.CompileCondition(acc, optionalVars, environment.StoredExpressions), p.Spec.FailurePolicy, "policy", "validate", p.Name)
	}
	validations := make([]cel.ExpressionAccessor, len(p.Spec.Validations))
	messages := make([]cel.ExpressionAccessor, len(p.Spec.Validations))
	for i, v := range p.Spec.Validations {
		validations[i] = &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason}
		check(fmt.Sprintf("spec.validations.%d.expression", i), c.CompileCELExpression(validations[i], optionalVars, environment.StoredExpressions))
		if v.MessageExpression != "" {
			messages[i] = &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}
			check(fmt.Sprintf("spec.validations.%d.messageExpression", i), c.CompileCELExpression(messages[i], expressionVars, environment.StoredExpressions))
		}
	}
	audits := make([]cel.ExpressionAccessor, len(p.Spec.AuditAnnotations))
	for i, a := range p.Spec.AuditAnnotations {
		audits[i] = &validating.AuditAnnotationCondition{Key: a.Key, ValueExpression: a.ValueExpression}
		check(fmt.Sprintf("spec.auditAnnotations.%d.valueExpression", i), c.CompileCELExpression(audits[i], optionalVars, environment.StoredExpressions))
	}
	return validating.NewValidator(
		c.CompileCondition(validations, optionalVars, environment.StoredExpressions),
		matcher,
		c.CompileCondition(audits, optionalVars, environment.StoredExpressions),
		c.CompileCondition(messages, expressionVars, environment.StoredExpressions),
		p.Spec.FailurePolicy,
		nil,
	), bad
}

// compileMessage is a compile error in one line: each CEL issue with its
// column ("undeclared reference to 'nosuchfn' ... (column 12)"), or the
// error's own text ("must evaluate to bool but got string").
func compileMessage(e *apiservercel.Error) string {
	var ce *apiservercel.CompilationError
	if errors.As(e.Cause, &ce) && ce.Issues != nil {
		if msg := celenv.IssueText(ce.Issues); msg != "" {
			return msg
		}
	}
	return words.OneLine(e.Detail)
}
