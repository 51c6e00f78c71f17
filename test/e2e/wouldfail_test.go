package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/model"
)

// wouldFail is one row of the gate's table: a step of one type that apply
// would fail for one cause.
type wouldFail struct {
	step, cause string
	spec        string
	name        string // the step planned fail; step (the type) where empty
	sets        []string
	setup       func(t *testing.T, ns string) (kubeconfig string)
	want        string // in the step's planned reason
}

// A plan that predicts failure fails: plan --detailed-exitcode exits 1 for
// a would-fail step of every type and cause (#36), and its JSON plans that
// step `fail` saying why (an exit 1 for an error would not do).
func TestPlanThatPredictsFailureExitsOne(t *testing.T) {
	denied := testdata("wouldfail", "denied.yaml")
	rows := []wouldFail{
		{step: "helm", cause: "strict validation", spec: testdata("strict", "typo-chart.yaml"), name: "web", want: "resourcess"},
		{step: "helm", cause: "missing namespace", spec: testdata("wouldfail", "istio-base.yaml"), name: "base", want: "-istio not found: the chart writes objects (ServiceAccount "},
		{step: "helm", cause: "Chart.lock digest", spec: testdata("wouldfail", "lock.yaml"), name: "locked", want: "Chart.lock"},
		{step: "helm", cause: "ownership conflict", spec: testdata("wouldfail", "owner.yaml"), name: "shared", sets: []string{"RELEASE=two"},
			setup: func(t *testing.T, ns string) string {
				mustApply(t, testdata("wouldfail", "owner.yaml"), "NS="+ns, "RELEASE=one")
				return ""
			}, want: "shared"},
		{step: "apply", cause: "strict validation", spec: testdata("strict", "typo.yaml"), name: "web", want: "resourcess"},
		{step: "apply", cause: "immutable field", spec: testdata("wouldfail", "immutable.yaml"), name: "web", sets: []string{"APP=b"},
			setup: func(t *testing.T, ns string) string {
				mustApply(t, testdata("wouldfail", "immutable.yaml"), "NS="+ns, "APP=a")
				return ""
			}, want: "immutable"},
		{step: "apply", cause: "admission", spec: denied, sets: []string{"STEP=apply"}, setup: denyLabelled, want: deniedMessage},
		{step: "patch", cause: "admission", spec: denied, sets: []string{"STEP=patch"}, setup: denyLabelled, want: deniedMessage},
		{step: "delete", cause: "admission", spec: denied, sets: []string{"STEP=delete"}, setup: denyLabelled, want: deniedMessage},
		{step: "rollout", cause: "admission", spec: denied, sets: []string{"STEP=rollout"}, setup: denyLabelled, want: deniedMessage},
		{step: "job", cause: "admission", spec: denied, sets: []string{"STEP=job"}, setup: denyJobs, want: deniedMessage},
		{step: "apply", cause: "RBAC", spec: denied, sets: []string{"STEP=apply"}, setup: nobody, want: "forbidden"},
		{step: "wait", cause: "RBAC", spec: denied, sets: []string{"STEP=wait"}, setup: seededNobody, want: "forbidden"},
	}
	for _, row := range rows {
		t.Run(row.step+"/"+row.cause, func(t *testing.T) {
			ns := namespace(t, "-istio", "-absent")
			kubeconfig := ""
			if row.setup != nil {
				kubeconfig = row.setup(t, ns)
			}
			args := []string{"plan", "--detailed-exitcode", "-o", "json", "-f", row.spec, "--set", "NS=" + ns}
			for _, s := range row.sets {
				args = append(args, "--set", s)
			}
			out := khook(t, invocation{Args: args, Kubeconfig: kubeconfig})
			name := row.name
			if name == "" {
				name = row.step
			}
			var p model.Plan
			if err := json.Unmarshal([]byte(out.Stdout), &p); err != nil {
				t.Fatalf("plan --detailed-exitcode -o json: exit %d and no plan (%v), want 1 with step %s planned fail\nstdout:\n%s\nstderr:\n%s", out.Code, err, name, out.Stdout, out.Stderr)
			}
			ps := step(p, name)
			if out.Code != 1 || ps.Action != model.ActionFail || !strings.Contains(ps.Reason, row.want) {
				t.Errorf("plan --detailed-exitcode -o json: exit %d, step %s planned %q: %s\nwant exit 1 and fail saying %q\nstderr:\n%s", out.Code, name, ps.Action, ps.Reason, row.want, out.Stderr)
			}
		})
	}
}

// The istio-base-style chart: the plan says fail with the namespace and
// the object, marks the saved plan, apply --plan refuses it, and plain
// apply fails with the same sentence, writing nothing there.
func TestChartIntoAMissingNamespaceFailsThePlan(t *testing.T) {
	ns := namespace(t, "-istio")
	spec := testdata("wouldfail", "istio-base.yaml")
	saved := filepath.Join(t.TempDir(), "plan.json")
	sentence := "namespace " + ns + "-istio not found: the chart writes objects"

	plan := khook(t, invocation{Args: []string{"plan", "--out", saved, "-f", spec, "--set", "NS=" + ns}})
	if plan.Code != 1 || !strings.Contains(plan.Stdout, "fail  base (helm)") || !strings.Contains(plan.Stdout, sentence) ||
		!strings.Contains(plan.Stdout, "ServiceAccount "+ns+"-istio/istio-reader-service-account") || !strings.Contains(plan.Stdout, "Plan: 1 would fail.") {
		t.Errorf("plan: exit %d, want 1 and the step planned fail saying %q\n%s%s", plan.Code, sentence, plan.Stdout, plan.Stderr)
	}
	if !strings.Contains(plan.Stderr, "marked as failed") {
		t.Errorf("plan --out does not say the saved plan is marked:\n%s", plan.Stderr)
	}
	show := khook(t, invocation{Args: []string{"show", saved}})
	if show.Code != 0 || !strings.Contains(show.Stdout, "would fail:") {
		t.Errorf("show: exit %d\n%s%s", show.Code, show.Stdout, show.Stderr)
	}
	refused := khook(t, invocation{Args: []string{"apply", "--plan", saved, "-f", spec, "--set", "NS=" + ns}})
	if refused.Code != 1 || !strings.Contains(refused.Stderr, "apply --plan refuses the saved plan: it is marked as failed") {
		t.Errorf("apply --plan: exit %d\n%s%s", refused.Code, refused.Stdout, refused.Stderr)
	}

	apply := applySpec(t, spec, "NS="+ns)
	expectSteps(t, apply, []want{{Name: "base", Status: failed, Attempts: 1, Error: sentence}})
}

const deniedMessage = "khook e2e: admission denies this object"

// mustApply applies a spec and fails the test unless it succeeds.
func mustApply(t *testing.T, spec string, sets ...string) {
	t.Helper()
	if out := applySpec(t, spec, sets...); out.Code != 0 {
		t.Fatalf("setup apply of %s: exit %d\n%s", spec, out.Code, out.Stderr)
	}
}

// seed creates what the steps of denied.yaml act on, labelled for the
// admission policy.
func seed(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{"khook.test/deny": "true"}
	_, err := kc.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "seeded", Labels: labels}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{})
	must(t, err)
	mustApply(t, writeSpec(t, fmt.Sprintf(`apiVersion: khook.io/v1
kind: Khook
metadata: {name: wouldfail-seed}
steps:
  - name: seed
    apply:
      namespace: %s
      manifests:
        - inline: |
            apiVersion: apps/v1
            kind: Deployment
            metadata: {name: seeded, labels: {khook.test/deny: "true"}}
            spec:
              selector: {matchLabels: {app: seeded}}
              template:
                metadata: {labels: {app: seeded}}
                spec: {containers: [{name: web, image: pause}]}
`, ns)))
}

func writeSpec(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "khook.yaml")
	must(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

// denyLabelled seeds, then has an admission policy deny every write to the
// namespace's objects labelled khook.test/deny.
func denyLabelled(t *testing.T, ns string) string {
	seed(t, ns)
	admit(t, ns, `{apiGroups: ["*"], apiVersions: ["*"], resources: ["*"], operations: [CREATE, UPDATE, DELETE]}`, `objectSelector: {matchLabels: {khook.test/deny: "true"}}`)
	return ""
}

// denyJobs has an admission policy deny every Job in the namespace.
func denyJobs(t *testing.T, ns string) string {
	admit(t, ns, `{apiGroups: [batch], apiVersions: ["*"], resources: [jobs], operations: [CREATE, UPDATE]}`, "")
	return ""
}

// admit binds a ValidatingAdmissionPolicy that denies what rule matches
// in ns (the API server's own admission: no webhook server to run), and
// awaits its taking effect.
func admit(t *testing.T, ns, rule, objectSelector string) {
	t.Helper()
	ctx := context.Background()
	name := "khook-e2e-deny-" + ns
	var policy admissionv1.ValidatingAdmissionPolicy
	must(t, yaml.Unmarshal([]byte(fmt.Sprintf(`metadata: {name: %s}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [%s]
  validations:
    - {expression: "false", message: %q}
`, name, rule, deniedMessage)), &policy))
	var binding admissionv1.ValidatingAdmissionPolicyBinding
	must(t, yaml.Unmarshal([]byte(fmt.Sprintf(`metadata: {name: %s}
spec:
  policyName: %s
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: %s}}
    %s
`, name, name, ns, objectSelector)), &binding))
	api := kc.Client.AdmissionregistrationV1()
	_, err := api.ValidatingAdmissionPolicies().Create(ctx, &policy, metav1.CreateOptions{})
	must(t, err)
	t.Cleanup(func() {
		_ = api.ValidatingAdmissionPolicies().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	_, err = api.ValidatingAdmissionPolicyBindings().Create(ctx, &binding, metav1.CreateOptions{})
	must(t, err)
	t.Cleanup(func() {
		_ = api.ValidatingAdmissionPolicyBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	// The policy takes effect once the API server's admission has read it:
	// await a dry run it denies.
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	probe := func(ctx context.Context) error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe", Labels: map[string]string{"khook.test/deny": "true"}}}
		_, err := kc.Client.CoreV1().ConfigMaps(ns).Create(ctx, cm, dry)
		return err
	}
	if objectSelector == "" { // the Job policy
		probe = func(ctx context.Context) error {
			job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}}}}
			_, err := kc.Client.BatchV1().Jobs(ns).Create(ctx, job, dry)
			return err
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := probe(ctx)
		return err != nil && strings.Contains(err.Error(), deniedMessage), nil
	})
	must(t, err)
}

// nobody is a kubeconfig of the harness's cluster as a user with no
// permissions (impersonated): every read and dry run is forbidden.
func nobody(t *testing.T, ns string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kc.Kubeconfig)
	must(t, err)
	for _, ai := range cfg.AuthInfos {
		ai.Impersonate = "khook-e2e-nobody"
	}
	path := filepath.Join(t.TempDir(), "nobody.kubeconfig")
	must(t, clientcmd.WriteToFile(*cfg, path))
	return path
}

func seededNobody(t *testing.T, ns string) string {
	seed(t, ns)
	return nobody(t, ns)
}

// A job step that would create its namespace is a change in the plan, as
// in apply's results (the Namespace is created though the job's own "run"
// is no change): plan --detailed-exitcode exits 2, and the plan lists it.
func TestPlanCountsTheNamespaceAJobCreates(t *testing.T) {
	ns := namespace(t)
	file := writeSpec(t, `apiVersion: khook.io/v1
kind: Khook
metadata: {name: job-namespace}
steps:
  - name: seed
    job:
      image: busybox
      namespace: `+ns+`-made
      createNamespace: true
`)
	out := khook(t, invocation{Args: []string{"plan", "-f", file, "--detailed-exitcode", "-o", "json"}})
	var p model.Plan
	if err := json.Unmarshal([]byte(out.Stdout), &p); err != nil {
		t.Fatalf("exit %d, stdout is not a plan: %v\n%s\nstderr:\n%s", out.Code, err, out.Stdout, out.Stderr)
	}
	if out.Code != 2 || !p.Changes {
		t.Errorf("plan --detailed-exitcode: exit %d, changes %v; want 2 and true (the job creates namespace %s-made)\n%s", out.Code, p.Changes, ns, out.Stdout)
	}
}
