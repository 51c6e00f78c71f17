package policy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
)

const minimalSpec = `apiVersion: khook.io/v1
kind: Khook
metadata: {name: x}
steps:
  - {name: w, apply: {namespace: shop, manifests: [{file: m.yaml}]}}
`

// loadPolicies loads a spec whose --policy file is doc.
func loadPolicies(t *testing.T, doc string) (*spec.Spec, *Set, error) {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "khook.yaml"), []byte(minimalSpec), 0o644)
	os.WriteFile(filepath.Join(dir, "m.yaml"), []byte("{apiVersion: v1, kind: ConfigMap, metadata: {name: m}}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "p.yaml"), []byte(doc), 0o644)
	s, err := spec.Load(spec.LoadOptions{Files: []string{filepath.Join(dir, "khook.yaml")}, Policies: []string{filepath.Join(dir, "p.yaml")}})
	if err != nil {
		t.Fatal(err)
	}
	set, err := New(s)
	return s, set, err
}

func policyDoc(name, spc, binding string) string {
	return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: ` + name + `}
spec:
` + spc + `
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: ` + name + `-b}
spec:
  policyName: ` + name + `
` + binding + "\n"
}

const deployRules = `  matchConstraints:
    resourceRules:
      - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}`

// Each admission outcome is the API server's: its sentence, its
// validationActions, its failurePolicy; what an offline plan cannot know
// is a note naming the policy.
func TestAdmissionAsTheServer(t *testing.T) {
	noNS := strings.Replace(goodDeploy, "namespace: shop, ", "", 1)
	cases := []struct {
		name, doc string
		action    model.Action
		object    string
		effect    string // "" none
		msg       string // in the message or the note
		note      string
		annot     string
	}{
		{"deny sentence", policyDoc("two", deployRules+"\n  validations: [{expression: 'object.spec.replicas >= 3', message: too few}]", "  validationActions: [Deny]"),
			model.ActionCreate, goodDeploy, model.EffectDeny, "ValidatingAdmissionPolicy 'two' with binding 'two-b' denied request: too few", "", ""},
		{"warn", policyDoc("two", deployRules+"\n  validations: [{expression: 'object.spec.replicas >= 3', message: too few}]", "  validationActions: [Warn, Audit]"),
			model.ActionCreate, goodDeploy, model.EffectWarn, "Validation failed for ValidatingAdmissionPolicy 'two' with binding 'two-b': too few", "", ""},
		{"audit admits", policyDoc("two", deployRules+"\n  validations: [{expression: 'object.spec.replicas >= 3', message: too few}]", "  validationActions: [Audit]"),
			model.ActionCreate, goodDeploy, model.EffectAudit, "too few", "", ""},
		{"missing param, Ignore admits", policyDoc("p", "  failurePolicy: Ignore\n  paramKind: {apiVersion: v1, kind: ConfigMap}\n"+deployRules+"\n  validations: [{expression: 'false'}]",
			"  validationActions: [Deny]\n  paramRef: {name: nope, namespace: x, parameterNotFoundAction: Deny}"), model.ActionCreate, goodDeploy, "", "", "", ""},
		{"missing param, Fail denies", policyDoc("p", "  paramKind: {apiVersion: v1, kind: ConfigMap}\n"+deployRules+"\n  validations: [{expression: 'false'}]",
			"  validationActions: [Deny]\n  paramRef: {name: nope, namespace: x, parameterNotFoundAction: Deny}"), model.ActionCreate, goodDeploy, model.EffectDeny, "no params found", "", ""},
		{"eval error, Ignore admits", policyDoc("e", "  failurePolicy: Ignore\n"+deployRules+"\n  validations: [{expression: 'object.spec.nope == 1'}]", "  validationActions: [Deny]"),
			model.ActionCreate, goodDeploy, "", "", "", ""},
		{"namespace from the step", policyDoc("ns", deployRules+"\n  validations: [{expression: 'object.metadata.namespace == \"shop\"'}]", "  validationActions: [Deny]"),
			model.ActionPlanned, noNS, "", "", "", ""},
		{"metadata.name label", policyDoc("ns", deployRules+"\n  validations: [{expression: 'false'}]", "  validationActions: [Deny]\n  matchResources: {namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: other}}}"),
			model.ActionPlanned, goodDeploy, "", "", "", ""},
		{"unknown namespace labels", policyDoc("ns", deployRules+"\n  validations: [{expression: 'false'}]", "  validationActions: [Deny]\n  matchResources: {namespaceSelector: {matchLabels: {env: prod}}}"),
			model.ActionPlanned, goodDeploy, "", "", "not assessed offline: ns: reads the labels of namespace shop", ""},
		{"update only", policyDoc("up", strings.Replace(deployRules, "CREATE, UPDATE", "UPDATE", 1)+"\n  validations: [{expression: 'false'}]", "  validationActions: [Deny]"),
			model.ActionPlanned, goodDeploy, "", "", "not assessed offline: up: applies to updates only", ""},
		{"old object", policyDoc("old", deployRules+"\n  validations: [{expression: 'oldObject == null || true'}]", "  validationActions: [Deny]"),
			model.ActionPlanned, goodDeploy, "", "", "not assessed offline: old: reads the old object", ""},
		{"old object, a deny either way", policyDoc("old", deployRules+"\n  validations: [{expression: 'oldObject == null || true'}, {expression: 'object.spec.replicas > 5', message: too few}]", "  validationActions: [Deny]"),
			model.ActionPlanned, goodDeploy, model.EffectDeny, "too few", "", ""},
		{"old object, an admit is not known", policyDoc("old", deployRules+"\n  validations: [{expression: 'oldObject == null || false'}, {expression: 'object.spec.replicas < 5', message: too many}]", "  validationActions: [Deny]"),
			model.ActionPlanned, goodDeploy, "", "", "not assessed offline: old: reads the old object", ""},
		{"user", policyDoc("u", deployRules+"\n  validations: [{expression: 'request.userInfo.username != \"\"'}]", "  validationActions: [Deny]"),
			model.ActionCreate, goodDeploy, "", "", "not assessed offline: u: reads request.userInfo", ""},
		{"server defaults admit", policyDoc("d", deployRules+"\n  validations: [{expression: 'object.spec.revisionHistoryLimit < 20 && object.spec.template.spec.containers[0].imagePullPolicy == \"IfNotPresent\"'}]", "  validationActions: [Deny]"),
			model.ActionPlanned, goodDeploy, "", "", "", ""},
		{"server defaults deny", policyDoc("d", deployRules+"\n  validations: [{expression: 'object.spec.revisionHistoryLimit < 5', message: keep fewer}]", "  validationActions: [Deny]"),
			model.ActionPlanned, goodDeploy, model.EffectDeny, "keep fewer", "", ""},
		{"another kind's branch", policyDoc("k", deployRules+"\n  validations: [{expression: \"object.kind != 'Pod' || object.spec.containers.size() > 5\"}, {expression: 'object.spec.replicas >= 3', message: too few}]", "  validationActions: [Deny]"),
			model.ActionPlanned, goodDeploy, model.EffectDeny, "too few", "", ""},
		{"audit annotation", policyDoc("a", deployRules+"\n  auditAnnotations: [{key: replicas, valueExpression: 'string(object.spec.replicas)'}]", "  validationActions: [Deny]"),
			model.ActionCreate, goodDeploy, "", "", "", "a/replicas=2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, set, err := loadPolicies(t, tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			c := change(tc.action, obj(t, tc.object), nil)
			c.Namespace = "shop" // the step's, as runner/plan gives it
			res := set.Check(context.Background(), s.Steps[0], []Change{c})
			res.Violations = slicesWithout(res.Violations, model.EffectAudit, tc.effect)
			switch {
			case tc.effect == "" && len(res.Violations) > 0:
				t.Errorf("violations %v, want none", res.Violations)
			case tc.effect != "" && (len(res.Violations) != 1 || res.Violations[0].Effect != tc.effect || !strings.Contains(res.Violations[0].Message, tc.msg)):
				t.Errorf("violations %v, want one %s with %q", res.Violations, tc.effect, tc.msg)
			}
			notes := strings.Join(set.PlanNotes(), "\n")
			if (tc.note == "") != (notes == "") || !strings.Contains(notes, tc.note) {
				t.Errorf("notes %q, want %q", notes, tc.note)
			}
			var annots []string
			for _, a := range res.Annotations {
				annots = append(annots, a.Key+"="+a.Value)
			}
			if got := strings.Join(annots, ","); got != tc.annot {
				t.Errorf("audit annotations %q, want %q", got, tc.annot)
			}
		})
	}
}

// slicesWithout drops the audits a Warn+Audit binding also records,
// unless the case is about audits.
func slicesWithout(vs []model.Violation, effect, want string) []model.Violation {
	if want == effect {
		return vs
	}
	var out []model.Violation
	for _, v := range vs {
		if v.Effect != effect {
			out = append(out, v)
		}
	}
	return out
}

// A namespace the spec defines lends its labels to namespaceSelector.
func TestSpecNamespaceLabels(t *testing.T) {
	s, set, err := loadPolicies(t, policyDoc("ns", deployRules+"\n  validations: [{expression: 'false', message: prod}]", "  validationActions: [Deny]\n  matchResources: {namespaceSelector: {matchLabels: {env: prod}}}"))
	if err != nil {
		t.Fatal(err)
	}
	set.DefineNamespace("shop", map[string]string{"env": "prod"})
	res := set.Check(context.Background(), s.Steps[0], []Change{change(model.ActionPlanned, obj(t, goodDeploy), nil)})
	if len(res.Violations) != 1 || len(set.PlanNotes()) != 0 {
		t.Errorf("violations %v notes %v, want the deny and no note", res.Violations, set.PlanNotes())
	}
}

// A binding the API server refuses is refused at its FILE:LINE.
func TestServerRefusesBinding(t *testing.T) {
	_, _, err := loadPolicies(t, policyDoc("p", "  paramKind: {apiVersion: v1, kind: ConfigMap}\n"+deployRules+"\n  validations: [{expression: 'true'}]",
		"  validationActions: [Deny, Warn]\n  paramRef: {name: teams}"))
	var ps spec.Problems
	if !errors.As(err, &ps) {
		t.Fatalf("err %v, want problems", err)
	}
	got := ps.Error()
	for _, want := range []string{"p.yaml:17", "parameterNotFoundAction: Required value", "must not contain both Deny and Warn"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems %q, want %q", got, want)
		}
	}
}

// A live plan that could not read what a policy reads (its identity: a
// SelfSubjectReview erred; a namespace's labels: a GET erred, not "not
// found") does not let the write through: failurePolicy Fail (the
// default) denies, naming why; Ignore admits, as the server does for an
// evaluation error.
func TestCheckErrorFailsClosed(t *testing.T) {
	cases := []struct {
		name, spc, binding, want string
		setup                    func(*Set)
	}{
		{"identity", "\n  validations: [{expression: 'request.userInfo.username != \"\"'}]", "", "SelfSubjectReview", func(set *Set) {
			set.Authorizer = allowAll{}
			set.IdentityErr = errors.New("the API server did not answer a SelfSubjectReview for the plan's identity: forbidden")
		}},
		{"namespace", "\n  validations: [{expression: 'false'}]", "\n  matchResources: {namespaceSelector: {matchLabels: {env: prod}}}", "could not read namespace shop", func(*Set) {}},
	}
	for _, tc := range cases {
		for _, fp := range []string{"", "  failurePolicy: Ignore\n"} {
			s, set, err := loadPolicies(t, policyDoc("c", fp+deployRules+tc.spc, "  validationActions: [Deny]"+tc.binding))
			if err != nil {
				t.Fatal(err)
			}
			set.Namespace = func(context.Context, string) (map[string]any, error) { return nil, errors.New("connection refused") }
			tc.setup(set)
			res := set.Check(context.Background(), s.Steps[0], []Change{change(model.ActionCreate, obj(t, goodDeploy), nil)})
			switch {
			case fp == "" && (len(res.Violations) != 1 || res.Violations[0].Effect != model.EffectDeny || !strings.Contains(res.Violations[0].Message, tc.want)):
				t.Errorf("%s, failurePolicy Fail: violations %v, want one deny naming %q", tc.name, res.Violations, tc.want)
			case fp != "" && len(res.Violations) != 0:
				t.Errorf("%s, failurePolicy Ignore: violations %v, want none", tc.name, res.Violations)
			}
			if notes := set.PlanNotes(); len(notes) != 0 {
				t.Errorf("%s: notes %q, want none: the policy was judged", tc.name, notes)
			}
		}
	}
}

type allowAll struct{}

func (allowAll) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionAllow, "", nil
}
