package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/spec"
)

// An admission policy whose CEL does not compile is refused when the
// policies load (khook validate, plan, apply), every expression at once,
// each at the FILE:LINE of the expression with the compiler's word in one
// line, as the API server refuses such a policy when it is created.
func TestAdmissionPolicyCELCompiledAtLoad(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "vap.yaml")
	if err := os.WriteFile(file, []byte(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: bad}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
  variables:
  - name: d
    expression: object.data
  matchConditions:
  - name: m
    expression: "'x'"
  validations:
  - expression: variables.d.nosuchfn()
  - expression: "true"
    messageExpression: 1 + 1
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: bad}
spec: {policyName: bad, validationActions: [Deny]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	specFile := filepath.Join(dir, "khook.yaml")
	if err := os.WriteFile(specFile, []byte("apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: demo}\nsteps:\n- name: w\n  wait: {for: condition=Ready, on: node/x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := spec.Load(spec.LoadOptions{Files: []string{specFile}, Policies: []string{file}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(s)
	var probs spec.Problems
	if !errors.As(err, &probs) {
		t.Fatalf("New = %v, want problems", err)
	}
	want := []string{
		file + ":13:17: ValidatingAdmissionPolicy bad: spec.matchConditions.0.expression does not compile: must evaluate to bool",
		file + ":15:17: ValidatingAdmissionPolicy bad: spec.validations.0.expression does not compile: undeclared reference to 'nosuchfn'",
		file + ":17:24: ValidatingAdmissionPolicy bad: spec.validations.1.messageExpression does not compile: must evaluate to string",
	}
	if len(probs) != len(want) {
		t.Fatalf("%d problems, want %d:\n%s", len(probs), len(want), probs.Error())
	}
	for i, p := range probs {
		if !strings.HasPrefix(p.String(), want[i]) || strings.Contains(p.String(), "\n") {
			t.Errorf("problem %d = %q, want one line starting %q", i, p.String(), want[i])
		}
	}
}
