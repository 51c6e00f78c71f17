package command

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/policy"
	"github.com/khook/khook/spec"
)

// livePolicies compiles the spec's policies for a live plan, reading
// namespaces from the cluster for admission policies. Nil: none.
func livePolicies(ctx context.Context, clients *kube.Clients, s *spec.Spec) (*policy.Set, error) {
	set, err := policy.New(s)
	if err != nil || set == nil {
		if err != nil {
			err = &Failure{Reason: model.ReasonValidation, Err: err}
		}
		return nil, err
	}
	// The set reads each namespace once per plan.
	set.Namespace = func(ctx context.Context, name string) (map[string]any, error) {
		ns, err := clients.Typed.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return runtime.DefaultUnstructuredConverter.ToUnstructured(ns)
	}
	if len(s.Admission) > 0 {
		planIdentity(ctx, clients.Typed, set)
		set.DefineSpecNamespaces(s, nil)
	}
	return set, nil
}

// hasPolicies reports whether apply must check the policies before it
// writes.
func hasPolicies(s *spec.Spec) bool { return len(s.Policies) > 0 || len(s.Admission) > 0 }

// PolicyError is apply refusing to write because the plan it made just
// before breaks a deny policy: nothing was written.
type PolicyError struct{ Denials []model.Violation }

func (e *PolicyError) Error() string {
	lines := make([]string, len(e.Denials))
	for i, v := range e.Denials {
		lines[i] = v.String()
	}
	word := "policy violations"
	if len(e.Denials) == 1 {
		word = "policy violation"
	}
	return fmt.Sprintf("apply refused, nothing written: %d %s: %s", len(e.Denials), word, strings.Join(lines, "; "))
}

// checkPolicies is apply's check before it writes: the spec planned
// against the cluster as the plan would (the same executors' dry runs),
// any deny refusing the whole run, so a saved or stale plan cannot slip
// past a policy. The plan it made is returned for apply --plan's check.
func (a *ApplyCommand) checkPolicies(ctx context.Context, s *spec.Spec, b *Backend) error {
	if b.Clients == nil {
		return fmt.Errorf("apply refused: the spec has policies and this backend cannot plan against the cluster to check them")
	}
	now, err := a.Config.livePlan(ctx, b.Clients, s, false)
	if err != nil {
		return fmt.Errorf("apply refused: cannot plan to check the policies: %w", err)
	}
	return refuseDenied(now)
}

func refuseDenied(p *model.Plan) error {
	if d := p.Denials(); len(d) > 0 {
		return &PolicyError{Denials: d}
	}
	return nil
}
