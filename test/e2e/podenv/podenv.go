// Package podenv lets a khook spec steer the test cluster's simulated pods
// through container environment variables. The harness's kwok stages read
// pod annotations (khook.test/fail, ...), which a job: step cannot set; a
// MutatingAdmissionPolicy (GA in Kubernetes 1.36) copies these variables of
// a pod's first container that has them into those annotations at creation.
package podenv

import (
	"context"
	"fmt"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// Environment variables and the harness annotation each one sets.
const (
	Fail       = "KHOOK_TEST_FAIL"        // "true": the pod fails (exit code 1)
	NeverReady = "KHOOK_TEST_NEVER_READY" // "true": the pod never becomes ready (a job never completes)
	ReadyAfter = "KHOOK_TEST_READY_AFTER" // a Go duration: the pod becomes ready after it
)

var switches = map[string]string{
	Fail:       "khook.test/fail",
	NeverReady: "khook.test/never-ready",
	ReadyAfter: "khook.test/ready-after",
}

// Install creates the policies (idempotently) and returns once the API
// server applies them, checked with server-side dry-run pod creations in
// namespace ns.
func Install(ctx context.Context, client kubernetes.Interface, ns string) error {
	api := client.AdmissionregistrationV1()
	for env, annotation := range switches {
		name := "khook-test-" + annotation[len("khook.test/"):]
		hasEnv := fmt.Sprintf(`c, has(c.env) && c.env.exists(e, e.name == %q && has(e.value))`, env)
		policy := &admissionv1.MutatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: admissionv1.MutatingAdmissionPolicySpec{
				MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionv1.RuleWithOperations{
						Operations: []admissionv1.OperationType{admissionv1.Create},
						Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
					},
				}}},
				MatchConditions: []admissionv1.MatchCondition{{Name: "has-env", Expression: "object.spec.containers.exists(" + hasEnv + ")"}},
				Mutations: []admissionv1.Mutation{{
					PatchType: admissionv1.PatchTypeApplyConfiguration,
					ApplyConfiguration: &admissionv1.ApplyConfiguration{Expression: fmt.Sprintf(
						`Object{metadata: Object.metadata{annotations: {%q: object.spec.containers.filter(%s)[0].env.filter(e, e.name == %q)[0].value}}}`,
						annotation, hasEnv, env)},
				}},
				FailurePolicy:      ptr.To(admissionv1.Fail),
				ReinvocationPolicy: admissionv1.NeverReinvocationPolicy,
			},
		}
		if _, err := api.MutatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("podenv: cannot create MutatingAdmissionPolicy %s: %w", name, err)
		}
		binding := &admissionv1.MutatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       admissionv1.MutatingAdmissionPolicyBindingSpec{PolicyName: name},
		}
		if _, err := api.MutatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("podenv: cannot create MutatingAdmissionPolicyBinding %s: %w", name, err)
		}
	}
	return awaitActive(ctx, client, ns)
}

// awaitActive dry-runs a pod with every switch until the API server's
// policy informers have caught up and it comes back annotated.
func awaitActive(ctx context.Context, client kubernetes.Interface, ns string) error {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "podenv-probe-"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "probe", Env: []corev1.EnvVar{
			{Name: Fail, Value: "true"}, {Name: NeverReady, Value: "true"}, {Name: ReadyAfter, Value: "1s"},
		}}}},
	}
	var last string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		for _, a := range switches {
			if _, ok := got.Annotations[a]; !ok {
				last = fmt.Sprintf("the probe pod has annotations %v", got.Annotations)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("podenv: the pod policies did not take effect: %s (%w)", last, err)
	}
	return nil
}
