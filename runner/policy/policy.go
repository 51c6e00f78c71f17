// Package policy checks a plan's changes against policies: the spec's own
// rules and those of --policy files (spec.Policy, CEL over each change),
// and Kubernetes ValidatingAdmissionPolicies given as files, evaluated with
// the API server's own admission CEL (k8s.io/apiserver) without being
// installed in the cluster. The plan calls it where it collects a step's
// planned objects (runner/plan), offline and live; apply checks again
// before it writes (runner/command).
//
// May import: model, spec, redact, sops; no renderer, no executor, no
// other runner package (layout_test.go).
package policy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/words"
)

// Set is the policies in force for one spec, compiled once.
type Set struct {
	rules     []*spec.Policy
	admission []*admissionPolicy
	params    []*unstructured.Unstructured
	// Files are the --policy files in force.
	Files []string
	// Notes say what of the admission policies cannot be honoured here.
	Notes []string
	// Namespace, when set, reads a namespace from the cluster (live
	// plans), which the set does once per namespace and run: an admission
	// policy's namespaceObject and namespaceSelector. Nil offline.
	Namespace func(ctx context.Context, name string) (map[string]any, error)
	// UserInfo and Authorizer are the plan's identity and its permissions
	// (live plans: a SelfSubjectReview, SelfSubjectAccessReviews) for
	// request.userInfo and authorizer. Nil offline: such a policy is not
	// assessed.
	UserInfo   *User
	Authorizer authorizer.UnconditionalAuthorizer
	// IdentityErr is why a live plan has no UserInfo (its SelfSubjectReview
	// erred): a policy reading it fails by its failurePolicy.
	IdentityErr error

	// ns and matcher are the run's namespaces and its one admission
	// matcher over them, shared by the steps planning in parallel.
	ns      nsLister
	matcher generic.PolicyMatcher

	mu    sync.Mutex
	noted map[string]bool
	notes []string // "not assessed" notes of the checks so far
}

// New compiles the policies of s: its rules (compiled at load) and the
// admission policies of its --policy files. Nil when s has none. An
// admission policy that does not decode or compile is an error of
// spec.Problems, each at its FILE:LINE (khook validate reports them).
func New(s *spec.Spec) (*Set, error) {
	if len(s.Policies) == 0 && len(s.Admission) == 0 {
		return nil, nil
	}
	set := &Set{rules: s.Policies, Files: s.PolicyFiles}
	set.matcher = generic.NewPolicyMatcher(matching.NewMatcher(&set.ns, nil))
	if probs := set.loadAdmission(s.Admission); len(probs) > 0 {
		return nil, probs
	}
	return set, nil
}

// Change is one object a step's plan would touch.
type Change struct {
	Action                model.Action
	Kind, Namespace, Name string
	// Desired is the object as the plan would write it (nil for a delete),
	// Live as read (nil for a create).
	Desired, Live *unstructured.Unstructured
}

// checked are the actions a policy sees: the changes, a kept object, and
// an object an offline plan has not assessed.
var checked = []model.Action{model.ActionCreate, model.ActionConfigure, model.ActionReplace, model.ActionDelete, model.ActionKeep, model.ActionPlanned}

// Result is what the policies make of a step's changes: the violations
// (deny, warn, audit) and the admission policies' audit annotations.
type Result struct {
	Violations  []model.Violation
	Annotations []model.AuditAnnotation
}

// Check evaluates every rule against every change of a step. A khook rule
// that errs (over its cost limit, a type error) is a deny naming the rule:
// a safety check that errs refuses; an admission policy's error follows
// its failurePolicy, as the API server's. What a plan cannot judge by an
// admission policy is a note (PlanNotes), not a verdict.
func (set *Set) Check(ctx context.Context, st *spec.Step, changes []Change) Result {
	var res Result
	if set == nil {
		return res
	}
	var out []model.Violation
	step := spec.PolicyStep{Name: st.Name, Type: st.Type()}
	for _, c := range changes {
		if !slices.Contains(checked, c.Action) || c.Kind == model.KindRelease {
			continue
		}
		in := &spec.PolicyInput{Action: string(c.Action), Step: step, Kind: c.Kind, Namespace: c.Namespace}
		if c.Action != model.ActionDelete && c.Desired != nil {
			in.Object = c.Desired.Object
		}
		if c.Live != nil {
			in.OldObject = c.Live.Object
		}
		if in.Object == nil && in.OldObject == nil {
			continue
		}
		object := objectName(c)
		for _, r := range set.rules {
			if !r.Matches(in) {
				continue
			}
			bad, msg, err := r.Eval(in)
			switch {
			case errors.Is(err, spec.ErrPolicyCost):
				out = append(out, model.Violation{Policy: r.Name, Effect: model.EffectDeny, Object: object, Source: r.Source,
					Message: fmt.Sprintf("the rule exceeds its CEL cost limit, so the change cannot be checked (simplify the rule)")})
			case err != nil:
				out = append(out, model.Violation{Policy: r.Name, Effect: model.EffectDeny, Object: object, Source: r.Source,
					Message: fmt.Sprintf("the rule fails on this object, so the change cannot be checked: %v", err)})
			case bad:
				out = append(out, model.Violation{Policy: r.Name, Effect: r.Effect(), Object: object, Message: words.OneLine(msg), Source: r.Source})
			}
		}
		v := set.admit(ctx, c, object)
		out = append(out, v.violations...)
		res.Annotations = append(res.Annotations, v.annotations...)
	}
	res.Violations = out
	return res
}

func objectName(c Change) string {
	if c.Namespace == "" {
		return c.Kind + " " + c.Name
	}
	return c.Kind + " " + c.Namespace + "/" + c.Name
}
