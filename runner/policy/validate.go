package policy

import (
	"regexp"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/admissionregistration"
	serverv1 "k8s.io/kubernetes/pkg/apis/admissionregistration/v1"
	"k8s.io/kubernetes/pkg/apis/admissionregistration/validation"

	"github.com/khook/khook/spec"
	"github.com/khook/khook/words"
)

// What the API server refuses when a policy or binding is created is
// decided by its own code, not a copy of its rules: the registry's
// strategy (k8s.io/kubernetes' pkg/registry/admissionregistration) runs
// the admissionregistration validation over the internal types, every
// expression compiled as a new one (the strict cost and environment of
// create). khook does the same on the object the server validates: the
// v1 object defaulted (serverv1's defaulters), converted by the generated
// conversion. Not run: the authorization of a paramKind or paramRef (the
// server asks its authorizer, for the creating user), and the reserved
// name suffix, which depends on a feature gate of the cluster
// (staticSuffixNotes).

// policyRefusals defaults p as the API server does before it validates a
// create (failurePolicy Fail, matchPolicy Equivalent, empty selectors,
// rule scope "*"; admission reads them too) and returns its validation.
func policyRefusals(p *admissionv1.ValidatingAdmissionPolicy) field.ErrorList {
	serverv1.SetObjectDefaults_ValidatingAdmissionPolicy(p)
	var in admissionregistration.ValidatingAdmissionPolicy
	if err := serverv1.Convert_v1_ValidatingAdmissionPolicy_To_admissionregistration_ValidatingAdmissionPolicy(p, &in, nil); err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return validation.ValidateValidatingAdmissionPolicy(&in)
}

// bindingRefusals defaults b as the server does and returns its
// validation of creating b.
func bindingRefusals(b *admissionv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	serverv1.SetObjectDefaults_ValidatingAdmissionPolicyBinding(b)
	var in admissionregistration.ValidatingAdmissionPolicyBinding
	if err := serverv1.Convert_v1_ValidatingAdmissionPolicyBinding_To_admissionregistration_ValidatingAdmissionPolicyBinding(b, &in, nil); err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return validation.ValidateValidatingAdmissionPolicyBinding(&in)
}

// staticSuffixNotes: a name the server reserves for its own manifests is
// refused by a server with ManifestBasedAdmissionControlConfig on (the
// default from Kubernetes 1.37) and only warned about by an older one;
// khook cannot know the cluster's gate, so it is a note in the server's
// warning words.
func staticSuffixNotes(kind, name string) []string {
	var out []string
	for _, w := range validation.WarningsForStaticSuffix(name) {
		out = append(out, kind+" "+name+": "+w+" (an API server with ManifestBasedAdmissionControlConfig on, the default from Kubernetes 1.37, refuses it; an older one warns)")
	}
	return out
}

// refusalProblems words each refusal as a problem at its field's line.
func refusalProblems(d spec.AdmissionDoc, what string, errs field.ErrorList) spec.Problems {
	var out spec.Problems
	for _, fe := range errs {
		out = append(out, spec.Problem{Pos: fieldPos(d, fe.Field), Message: what + ": the API server refuses it: " + serverWords(fe)})
	}
	return out
}

var pathIndex = regexp.MustCompile(`\[([^\]]*)\]`)

// fieldPos is the position of a field path as the server writes it
// (spec.validations[0].expression) in d: the field's own, else that of
// the nearest field above it the document writes (a required field is
// absent: its parent's line), else the document's.
func fieldPos(d spec.AdmissionDoc, path string) spec.Pos {
	p := pathIndex.ReplaceAllString(path, ".$1")
	for p != "" {
		if pos, ok := d.Positions[p]; ok {
			return pos
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return d.PosOf("")
}

// serverWords is a refusal in the server's words, on one line: CEL's
// excerpt lines (" | expr", " | ...^") are left out, the column is in
// the message and the line is the problem's.
func serverWords(fe *field.Error) string {
	var keep []string
	for _, l := range strings.Split(fe.Error(), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "|") {
			keep = append(keep, l)
		}
	}
	return words.OneLine(strings.Join(keep, " "))
}
