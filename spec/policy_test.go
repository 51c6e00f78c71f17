package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func loadPolicySpec(t *testing.T, body string, policyFiles ...string) (*Spec, error) {
	t.Helper()
	dir := t.TempDir()
	f := filepath.Join(dir, "khook.yaml")
	src := "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: p}\n" + body + "steps:\n  - name: web\n    apply:\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata: {name: x}\n"
	if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return Load(LoadOptions{Files: []string{f}, Policies: policyFiles})
}

// Bad rules are refused at FILE:LINE:COL with CEL's error on one line.
func TestPolicyRulesCheckedAtLoad(t *testing.T) {
	_, err := loadPolicySpec(t, `policies:
  - name: broken
    deny: object.spec.replicas >
  - name: unknown-variable
    deny: objekt.spec.replicas > 3
  - name: unknown-field
    warn: step.nmae == "web"
  - name: not-bool
    deny: object.metadata.name + "x"
    message: "'x'"
  - name: both
    deny: "true"
    warn: "true"
  - name: bad-match
    deny: "true"
    match: {actions: [creat], steps: [nope]}
`)
	var probs Problems
	if !errors.As(err, &probs) {
		t.Fatalf("load: %v, want problems", err)
	}
	text := probs.Error()
	for _, want := range []string{
		":6:33: policies.0.deny: invalid expression: Syntax error",
		":8:11: policies.1.deny: invalid expression: undeclared reference to 'objekt'",
		":10:15: policies.2.warn: invalid expression: undefined field 'nmae'",
		"policies.3.deny: the expression evaluates to string, not a bool",
		"policies.4: set exactly one of deny and warn",
		`policies.5.match.actions.0: unknown action "creat"`,
		`policies.5.match.steps.0: no step or step type is named "nope"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("problems lack %q:\n%s", want, text)
		}
	}
	for _, p := range probs {
		if strings.Contains(p.Message, "\n") {
			t.Errorf("a problem spans lines: %q", p.Message)
		}
	}
}

func TestPolicyPlainMessages(t *testing.T) {
	for msg, plain := range map[string]bool{
		"PVCs are never deleted":          true,
		"don't use latest":                true,
		"forbidden":                       true,
		"image must not use :latest":      true,
		"'image ' + object.metadata.name": false,
		"object.metadata.name":            false,
		`"quoted"`:                        false,
		"string(object.spec.replicas)":    false,
	} {
		if got := plainMessage(msg); got != plain {
			t.Errorf("plainMessage(%q) = %v, want %v", msg, got, plain)
		}
	}
}

func TestPolicyEval(t *testing.T) {
	s, err := loadPolicySpec(t, `policies:
  - name: no-latest
    deny: object.spec.containers.exists(c, c.image.endsWith(":latest"))
    message: "'image ' + object.spec.containers[0].image"
  - name: no-delete
    deny: action == "delete"
    message: no deleting here
    match: {kinds: [ConfigMap]}
  - name: downgrade
    deny: compareVersions(object.v, oldObject.v) < 0
  - name: spin
    warn: "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, [1,2,3,4,5,6,7,8,9,10].all(g, a+b+c+d+e+f+g > 0)))))))"
`)
	if err != nil {
		t.Fatal(err)
	}
	pod := map[string]any{"kind": "Pod", "spec": map[string]any{"containers": []any{map[string]any{"image": "web:latest"}}}}
	bad, msg, err := s.Policies[0].Eval(&PolicyInput{Object: pod, Action: "create", Kind: "Pod"})
	if !bad || msg != "image web:latest" || err != nil {
		t.Errorf("no-latest on web:latest: %v %q %v", bad, msg, err)
	}
	// A field the object lacks: the rule does not apply.
	if bad, _, err := s.Policies[0].Eval(&PolicyInput{Object: map[string]any{"kind": "ConfigMap"}, Action: "create"}); bad || err != nil {
		t.Errorf("no-latest on a ConfigMap: %v %v", bad, err)
	}
	in := &PolicyInput{OldObject: map[string]any{"kind": "ConfigMap"}, Action: "delete", Kind: "ConfigMap"}
	if !s.Policies[1].Matches(in) {
		t.Error("no-delete does not match a ConfigMap")
	}
	if bad, msg, _ := s.Policies[1].Eval(in); !bad || msg != "no deleting here" {
		t.Errorf("no-delete: %v %q", bad, msg)
	}
	if bad, _, err := s.Policies[2].Eval(&PolicyInput{Object: map[string]any{"v": "app-1.2.0"}, OldObject: map[string]any{"v": "app-1.10.0"}}); !bad || err != nil {
		t.Errorf("downgrade 1.10.0 → 1.2.0: %v %v", bad, err)
	}
	if _, _, err := s.Policies[3].Eval(&PolicyInput{Action: "create"}); !errors.Is(err, ErrPolicyCost) {
		t.Errorf("a rule over its budget: %v, want ErrPolicyCost", err)
	}
}

// --policy files: khook rules join the spec's with their own positions;
// other documents are admission documents.
func TestPolicyFiles(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "org.yaml")
	os.WriteFile(f, []byte("policies:\n  - name: org\n    deny: objekt == 1\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: x}\n"), 0o644)
	_, err := loadPolicySpec(t, "", f)
	if err == nil || !strings.Contains(err.Error(), f+":3:11: policies.0.deny: invalid expression: undeclared reference to 'objekt'") {
		t.Errorf("load: %v", err)
	}
	os.WriteFile(f, []byte("policies:\n  - name: org\n    deny: object.x == 1\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: x}\n"), 0o644)
	s, err := loadPolicySpec(t, "policies:\n  - {name: own, warn: \"true\"}\n", f)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Policies) != 2 || s.Policies[1].Source != f || len(s.Admission) != 1 || len(s.PolicyFiles) != 1 {
		t.Errorf("policies %d (second from %q), admission %d, files %v", len(s.Policies), s.Policies[1].Source, len(s.Admission), s.PolicyFiles)
	}
	// The same file named twice (a fleet's policies and the policies
	// input) is one file, not two rules named org.
	s, err = loadPolicySpec(t, "", f, filepath.Join(dir, ".", "org.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Policies) != 1 || len(s.Admission) != 1 || len(s.PolicyFiles) != 1 {
		t.Errorf("a file named twice: policies %d, admission %d, files %v", len(s.Policies), len(s.Admission), s.PolicyFiles)
	}
}
