package policy

import (
	"fmt"
	"slices"

	admissionv1 "k8s.io/api/admissionregistration/v1"
)

// The API server's validation of admissionregistration objects lives in
// k8s.io/kubernetes (pkg/apis/admissionregistration/validation), over its
// internal types. khook imports that module for defaulting (defaults.go)
// but does not run this validation yet; it checks the server's rules that
// change a verdict, each with the field the server names (docs/policies.md
// lists them).

// serverProblem is one field the API server would refuse, with its path
// for the document's FILE:LINE.
type serverProblem struct{ path, msg string }

func validatePolicy(p *admissionv1.ValidatingAdmissionPolicy) []serverProblem {
	var out []serverProblem
	if p.Spec.FailurePolicy != nil && *p.Spec.FailurePolicy != admissionv1.Fail && *p.Spec.FailurePolicy != admissionv1.Ignore {
		out = append(out, serverProblem{"spec.failurePolicy", fmt.Sprintf("spec.failurePolicy: Unsupported value: %q: supported values: \"Fail\", \"Ignore\"", *p.Spec.FailurePolicy)})
	}
	if len(p.Spec.Validations) == 0 && len(p.Spec.AuditAnnotations) == 0 {
		out = append(out, serverProblem{"spec", "spec.validations: Required value: validations or auditAnnotations must contain at least one item"})
	}
	if p.Spec.MatchConstraints == nil || len(p.Spec.MatchConstraints.ResourceRules) == 0 {
		out = append(out, serverProblem{"spec", "spec.matchConstraints.resourceRules: Required value"})
	}
	if pk := p.Spec.ParamKind; pk != nil && (pk.Kind == "" || pk.APIVersion == "") {
		out = append(out, serverProblem{"spec.paramKind", "spec.paramKind: Required value: apiVersion and kind"})
	}
	for i, v := range p.Spec.Validations {
		if v.Expression == "" {
			out = append(out, serverProblem{fmt.Sprintf("spec.validations.%d", i), fmt.Sprintf("spec.validations[%d].expression: Required value", i)})
		}
	}
	return out
}

func validateBinding(b *admissionv1.ValidatingAdmissionPolicyBinding) []serverProblem {
	var out []serverProblem
	if b.Spec.PolicyName == "" {
		out = append(out, serverProblem{"spec", "spec.policyName: Required value"})
	}
	acts := b.Spec.ValidationActions
	if len(acts) == 0 {
		out = append(out, serverProblem{"spec", "spec.validationActions: Required value: at least one validation action is required"})
	}
	seen := map[admissionv1.ValidationAction]bool{}
	for i, a := range acts {
		if a != admissionv1.Deny && a != admissionv1.Warn && a != admissionv1.Audit {
			out = append(out, serverProblem{"spec.validationActions", fmt.Sprintf("spec.validationActions[%d]: Unsupported value: %q: supported values: \"Audit\", \"Deny\", \"Warn\"", i, a)})
		}
		if seen[a] {
			out = append(out, serverProblem{"spec.validationActions", fmt.Sprintf("spec.validationActions[%d]: Duplicate value: %q", i, a)})
		}
		seen[a] = true
	}
	if slices.Contains(acts, admissionv1.Deny) && slices.Contains(acts, admissionv1.Warn) {
		out = append(out, serverProblem{"spec.validationActions", "spec.validationActions: Invalid value: [\"Deny\",\"Warn\"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"})
	}
	if r := b.Spec.ParamRef; r != nil {
		switch {
		case r.Name != "" && r.Selector != nil:
			out = append(out, serverProblem{"spec.paramRef", "spec.paramRef.name: Forbidden: name and selector are mutually exclusive"})
		case r.Name == "" && r.Selector == nil:
			out = append(out, serverProblem{"spec.paramRef", "spec.paramRef.name: Required value: one of name or selector must be specified"})
		}
		if r.ParameterNotFoundAction == nil {
			out = append(out, serverProblem{"spec.paramRef", "spec.paramRef.parameterNotFoundAction: Required value"})
		} else if a := *r.ParameterNotFoundAction; a != admissionv1.AllowAction && a != admissionv1.DenyAction {
			out = append(out, serverProblem{"spec.paramRef.parameterNotFoundAction", fmt.Sprintf("spec.paramRef.parameterNotFoundAction: Unsupported value: %q: supported values: \"Allow\", \"Deny\"", a)})
		}
	}
	return out
}
