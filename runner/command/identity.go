package command

import (
	"context"
	"fmt"
	"sync"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/kubernetes"

	"github.com/khook/khook/runner/policy"
)

// planIdentity gives admission policies the plan's identity: who the plan
// runs as (a SelfSubjectReview) for request.userInfo, and what it may do
// (SelfSubjectAccessReviews, one per question within the run) for
// authorizer. The apply that follows may run as someone else
// (docs/policies.md). A SelfSubjectReview that errs is kept on the set:
// a policy reading the identity then fails as its failurePolicy says (a
// check that errs refuses, unless the policy says Ignore).
func planIdentity(ctx context.Context, c kubernetes.Interface, set *policy.Set) {
	set.Authorizer = &accessReviews{c: c, seen: map[string]answer{}}
	r, err := c.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		set.IdentityErr = fmt.Errorf("the API server did not answer a SelfSubjectReview for the plan's identity: %w", err)
		return
	}
	u := r.Status.UserInfo
	pu := &policy.User{Name: u.Username, UID: u.UID, Groups: u.Groups}
	if len(u.Extra) > 0 {
		pu.Extra = map[string][]string{}
		for k, v := range u.Extra {
			pu.Extra[k] = v
		}
	}
	set.UserInfo = pu
}

type answer struct {
	d      authorizer.Decision
	reason string
}

// accessReviews answers the admission authorizer with the plan identity's
// SelfSubjectAccessReviews, each question asked once per run.
type accessReviews struct {
	c    kubernetes.Interface
	mu   sync.Mutex
	seen map[string]answer // by the question, verb and resource
}

func (a *accessReviews) Authorize(ctx context.Context, at authorizer.Attributes) (authorizer.Decision, string, error) {
	var q authzv1.SelfSubjectAccessReviewSpec
	if at.IsResourceRequest() {
		q.ResourceAttributes = &authzv1.ResourceAttributes{Namespace: at.GetNamespace(), Verb: at.GetVerb(), Group: at.GetAPIGroup(),
			Version: at.GetAPIVersion(), Resource: at.GetResource(), Subresource: at.GetSubresource(), Name: at.GetName()}
	} else {
		q.NonResourceAttributes = &authzv1.NonResourceAttributes{Path: at.GetPath(), Verb: at.GetVerb()}
	}
	key := fmt.Sprintf("%+v|%+v", q.ResourceAttributes, q.NonResourceAttributes)
	a.mu.Lock()
	defer a.mu.Unlock()
	if ans, ok := a.seen[key]; ok {
		return ans.d, ans.reason, nil
	}
	r, err := a.c.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authzv1.SelfSubjectAccessReview{Spec: q}, metav1.CreateOptions{})
	if err != nil {
		return authorizer.DecisionNoOpinion, "", fmt.Errorf("cannot ask the API server whether the plan's identity may %s %s: %w", at.GetVerb(), at.GetResource(), err)
	}
	ans := answer{d: authorizer.DecisionNoOpinion, reason: r.Status.Reason}
	switch {
	case r.Status.Allowed:
		ans.d = authorizer.DecisionAllow
	case r.Status.Denied:
		ans.d = authorizer.DecisionDeny
	}
	a.seen[key] = ans
	return ans.d, ans.reason, nil
}
