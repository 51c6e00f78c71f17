package e2e

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/model"
)

// policyArgs is a command on testdata/policies/app.yaml in ns with image.
func policyArgs(cmd, ns, image string, extra ...string) []string {
	return append([]string{cmd, "-f", testdata("policies", "app.yaml"), "--set", "NS=" + ns, "--set", "IMAGE=" + image}, extra...)
}

// A deny rule fails the plan, offline and live: exit 1 under
// --detailed-exitcode, the rule and its message under the object, and
// the policy file named.
func TestPolicyDenyFailsThePlan(t *testing.T) {
	ns := namespace(t)
	rules := testdata("policies", "rules.yaml")
	for _, offline := range []bool{true, false} {
		args := policyArgs("plan", ns, "nginx:latest", "--policy", rules)
		if offline {
			args = append(args, "--offline")
		} else {
			args = append(args, "--detailed-exitcode")
		}
		out := khook(t, invocation{Args: args})
		text := out.Stdout + out.Stderr
		for _, want := range []string{"no-latest-images", "image nginx:latest is not pinned", "Deployment " + ns + "/web", "Policies in force: " + rules} {
			if !strings.Contains(text, want) {
				t.Errorf("offline=%v: the plan does not say %q\n%s", offline, want, text)
			}
		}
		if out.Code != 1 {
			t.Errorf("offline=%v: plan exits %d, want 1\n%s", offline, out.Code, text)
		}
	}
	// JSON: the violation under its step, the step fail.
	out := khook(t, invocation{Args: policyArgs("plan", ns, "nginx:latest", "--policy", rules, "-o", "json")})
	var p model.Plan
	if err := json.Unmarshal([]byte(out.Stdout), &p); err != nil {
		t.Fatalf("plan -o json: %v\n%s", err, out.Stdout+out.Stderr)
	}
	var web *model.PlanStep
	for i := range p.Steps {
		if p.Steps[i].Name == "web" {
			web = &p.Steps[i]
		}
	}
	if web == nil || web.Action != model.ActionFail || len(web.Policy) == 0 || web.Policy[0].Effect != model.EffectDeny || web.Policy[0].Policy != "no-latest-images" {
		t.Errorf("plan -o json: step web is %+v, want fail with the no-latest-images deny", web)
	}
	// A pinned image passes.
	out = khook(t, invocation{Args: policyArgs("plan", ns, "nginx:1.27", "--policy", rules, "--detailed-exitcode", "--set", "REPLICAS=2")})
	if out.Code != 2 {
		t.Errorf("a pinned image: plan exits %d, want 2 (changes)\n%s", out.Code, out.Stdout+out.Stderr)
	}
}

// Apply checks again before it writes: a deny refuses the whole run, so
// nothing is written, not even the allowed step before it.
func TestPolicyDenyRefusesApply(t *testing.T) {
	ns := namespace(t)
	rules := testdata("policies", "rules.yaml")
	out := khook(t, invocation{Args: policyArgs("apply", ns, "nginx:latest", "--policy", rules)})
	text := out.Stdout + out.Stderr
	if out.Code != 1 || !strings.Contains(text, "no-latest-images") || !strings.Contains(text, "nothing written") {
		t.Errorf("apply: exit %d, want 1 naming the rule and nothing written\n%s", out.Code, text)
	}
	if _, err := kc.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), "settings", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("apply refused, yet ConfigMap settings exists (err %v)", err)
	}
	if _, err := kc.Client.AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("apply refused, yet Deployment web exists (err %v)", err)
	}
	// Pinned, it applies; the warn stays a warning.
	out = khook(t, invocation{Args: policyArgs("apply", ns, "nginx:1.27", "--policy", rules)})
	if out.Code != 0 {
		t.Fatalf("apply of a pinned image: exit %d\n%s", out.Code, out.Stdout+out.Stderr)
	}
}

// A warn is a warning: the plan succeeds and says it.
func TestPolicyWarnKeepsThePlanGreen(t *testing.T) {
	ns := namespace(t)
	rules := testdata("policies", "rules.yaml")
	for _, offline := range []bool{true, false} {
		args := policyArgs("plan", ns, "nginx:1.27", "--policy", rules)
		if offline {
			args = append(args, "--offline")
		}
		out := khook(t, invocation{Args: args})
		text := out.Stdout + out.Stderr
		if out.Code != 0 || !strings.Contains(text, "policy warn few-replicas") || !strings.Contains(text, "a single replica has no redundancy") {
			t.Errorf("offline=%v: exit %d, want 0 with the few-replicas warning\n%s", offline, out.Code, text)
		}
	}
}

// A change-aware rule: deleting what is labelled protected is denied,
// offline (the manifest names it) and live (oldObject is the live object).
func TestPolicyChangeAwareDelete(t *testing.T) {
	ns := namespace(t)
	_, err := kc.Client.CoreV1().ConfigMaps(ns).Create(context.Background(), configMap(ns, "settings", map[string]string{"protected": "true"}), metav1.CreateOptions{})
	must(t, err)
	for _, offline := range []bool{true, false} {
		args := []string{"plan", "-f", testdata("policies", "delete.yaml"), "--set", "NS=" + ns}
		if offline {
			args = append(args, "--offline")
		}
		out := khook(t, invocation{Args: args})
		text := out.Stdout + out.Stderr
		if out.Code != 1 || !strings.Contains(text, "keep-protected") || !strings.Contains(text, "ConfigMap settings is protected") {
			t.Errorf("offline=%v: exit %d, want 1 naming keep-protected\n%s", offline, out.Code, text)
		}
	}
	out := khook(t, invocation{Args: []string{"apply", "-f", testdata("policies", "delete.yaml"), "--set", "NS=" + ns}})
	if out.Code != 1 {
		t.Errorf("apply: exit %d, want 1\n%s", out.Code, out.Stdout+out.Stderr)
	}
	if _, err := kc.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), "settings", metav1.GetOptions{}); err != nil {
		t.Errorf("apply refused, yet the protected ConfigMap is gone: %v", err)
	}
}

// A ValidatingAdmissionPolicy given with --policy, never installed in the
// cluster, denies offline and live with its messageExpression, through
// its binding, params, variables and matchConditions.
func TestPolicyAdmissionPolicyFromFile(t *testing.T) {
	ns := namespace(t)
	vap := testdata("policies", "vap.yaml")
	for _, offline := range []bool{true, false} {
		args := policyArgs("plan", ns, "nginx:1.27", "--policy", vap, "--set", "REPLICAS=5")
		if offline {
			args = append(args, "--offline")
		}
		out := khook(t, invocation{Args: args})
		text := out.Stdout + out.Stderr
		if out.Code != 1 || !strings.Contains(text, "max-replicas") || !strings.Contains(text, "replicas 5 exceed the limit of 3") || !strings.Contains(text, vap) {
			t.Errorf("offline=%v: exit %d, want 1 with the policy's message and file\n%s", offline, out.Code, text)
		}
		args = policyArgs("plan", ns, "nginx:1.27", "--policy", vap, "--set", "REPLICAS=3")
		if offline {
			args = append(args, "--offline")
		}
		if out := khook(t, invocation{Args: args}); out.Code == 1 {
			t.Errorf("offline=%v: 3 replicas are within the limit, yet exit 1\n%s", offline, out.Stdout+out.Stderr)
		}
	}
	if _, err := kc.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(context.Background(), "max-replicas", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the policy is in the cluster (err %v): the test proves nothing", err)
	}
}

// Bad rules are refused by validate at FILE:LINE, the CEL error on one line.
func TestPolicyBadRulesRefused(t *testing.T) {
	bad := testdata("policies", "bad.yaml")
	out := khook(t, invocation{Args: []string{"validate", "-f", bad}})
	if out.Code != 2 {
		t.Errorf("validate: exit %d, want 2\n%s", out.Code, out.Stderr)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`bad\.yaml:7:\d+: policies\.0\.deny: invalid expression: .*`),
		regexp.MustCompile(`bad\.yaml:9:\d+: policies\.1\.deny: invalid expression: undeclared reference to 'objekt'.*`),
		regexp.MustCompile(`bad\.yaml:11:\d+: policies\.2\.warn: invalid expression: undefined field 'nmae'.*`),
	} {
		if !want.MatchString(out.Stderr) {
			t.Errorf("validate does not print %s\n%s", want, out.Stderr)
		}
	}
}

// An admission policy of a --policy file whose CEL does not compile is
// refused by validate, plan --offline and a live plan, exit 2, each
// expression at its FILE:LINE with the compiler's word on one line.
func TestPolicyBadAdmissionPolicyRefused(t *testing.T) {
	ns := namespace(t)
	bad := testdata("policies", "badvap.yaml")
	for _, args := range [][]string{
		policyArgs("validate", ns, "nginx:1.27", "--policy", bad),
		policyArgs("plan", ns, "nginx:1.27", "--policy", bad, "--offline"),
		policyArgs("plan", ns, "nginx:1.27", "--policy", bad),
	} {
		out := khook(t, invocation{Args: args})
		if out.Code != 2 {
			t.Errorf("%s: exit %d, want 2\n%s%s", strings.Join(args, " "), out.Code, out.Stdout, out.Stderr)
		}
		for _, want := range []*regexp.Regexp{
			regexp.MustCompile(`badvap\.yaml:11:\d+: ValidatingAdmissionPolicy bad-replicas: the API server refuses it: spec\.validations\[0\]\.expression: Invalid value: .*compilation failed: .*undeclared reference to 'objekt'.*\n`),
			regexp.MustCompile(`badvap\.yaml:13:\d+: ValidatingAdmissionPolicy bad-replicas: the API server refuses it: spec\.validations\[1\]\.messageExpression: Invalid value: .*must evaluate to string.*\n`),
		} {
			if !want.MatchString(out.Stderr) {
				t.Errorf("%s does not print %s\n%s", strings.Join(args, " "), want, out.Stderr)
			}
		}
	}
}

func configMap(ns, name string, labels map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}, Data: map[string]string{"color": "blue"}}
}
