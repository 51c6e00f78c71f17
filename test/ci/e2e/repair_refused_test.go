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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/internal/ci/gha"
	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/command"
	"github.com/khook/khook/test/ci/citest"
)

// regionDenied is what the admission policy of
// TestApplyRunsADriftedStepWhosePlanFails says.
const regionDenied = "khook e2e: region eu-west-1 is closed"

// Drift that the server now refuses to repair (#39, point 2): with a state
// record, an out-of-band edit and then an admission policy that denies the
// spec's value -> plan says fail (exit 1) -> apply runs that step (the
// record would have resumed it) and fails with the plan's sentence, never
// "skipped", and resumes the undrifted step -> once the policy goes, apply
// repairs the drift in place.
func TestApplyRunsADriftedStepWhosePlanFails(t *testing.T) {
	ns := kube.Namespace(t)
	srv := githubtest.New()
	defer srv.Close()
	g := newRunner(t, srv.URL, "repair.yaml", map[string]string{"command": "apply", "comment": "never", "vars": "NS=" + ns})
	// run runs the action's command; into is what its JSON file holds
	// (plan-json-path for plan, results-json-path for apply).
	run := func(command, file string, into any) (citest.Result, map[string]string, string) {
		t.Helper()
		g.ResetFiles()
		g.Set("INPUT_COMMAND=" + command)
		res := citest.Run(t, g.Workspace, g.Environ)
		outs, _ := gha.ParseKeyValues(g.Read(t, "output"))
		if outs[file] == "" {
			t.Fatalf("%s: no %s output: %v\n%s", command, file, outs, res.Stdout)
		}
		data, err := os.ReadFile(filepath.Join(g.Workspace, outs[file]))
		must(t, err)
		must(t, json.Unmarshal(data, into))
		return res, outs, g.Read(t, "summary")
	}
	apply := func() (citest.Result, map[string]string, model.Results, string) {
		t.Helper()
		var results model.Results
		res, outs, summary := run("apply", "results-json-path", &results)
		return res, outs, results, summary
	}
	if res, _, _, _ := apply(); res.Code != 0 {
		t.Fatalf("apply exit %d\n%s", res.Code, res.Stdout)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cm, err := kube.Client.CoreV1().ConfigMaps(ns).Patch(ctx, "settings", types.MergePatchType, []byte(`{"data":{"region":"us-east-1"}}`), metav1.PatchOptions{})
	must(t, err)
	uid := cm.UID
	denyRegion(t, ns)

	var plan model.Plan
	res, _, summary := run("plan", "plan-json-path", &plan)
	if res.Code != 1 {
		t.Fatalf("plan of the refused repair: exit %d, want 1\n%s", res.Code, res.Stdout)
	}
	planned := map[string]model.Action{}
	for _, st := range plan.Steps {
		planned[st.Name] = st.Action
	}
	if planned["settings"] != model.ActionFail || planned["web"] != model.ActionUnchanged {
		t.Fatalf("plan: %v, want settings fail and web unchanged\n%s", planned, res.Stdout)
	}
	if !strings.Contains(res.Stdout, regionDenied) || !strings.Contains(summary, regionDenied) {
		t.Errorf("the plan does not say the policy's sentence:\n%s\nsummary:\n%s", res.Stdout, summary)
	}

	res, outs, results, summary := apply()
	if res.Code != 1 || outs["changes"] == "true" {
		t.Fatalf("apply of the refused repair: exit %d outputs %v, want 1 and no change\n%s", res.Code, outs, res.Stdout)
	}
	byName := map[string]model.StepResult{}
	for _, st := range results.Steps {
		byName[st.Name] = st
	}
	settings, web := byName["settings"], byName["web"]
	if settings.Status != model.StatusFailed || settings.Skip != "" || !strings.Contains(settings.Error, regionDenied) ||
		!strings.Contains(settings.Detail, command.RefusedRerunNote) {
		t.Errorf("settings: %s skip %q error %q detail %q, want it run, failed with the policy's sentence and saying why it ran",
			settings.Status, settings.Skip, settings.Error, settings.Detail)
	}
	if web.Skip == "" {
		t.Errorf("web: %s, want it resumed by the state record (undrifted, planned unchanged)", web.Status)
	}
	for sink, text := range map[string]string{"terminal": res.Stdout, "summary": summary} {
		if !strings.Contains(text, regionDenied) {
			t.Errorf("the %s does not say why settings failed:\n%s", sink, text)
		}
		for _, line := range strings.Split(text, "\n") {
			if strings.Contains(line, "settings") && strings.Contains(line, "unchanged since it succeeded") {
				t.Errorf("the %s calls the refused step resumed: %q", sink, line)
			}
		}
	}
	cm, err = kube.Client.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	must(t, err)
	if cm.UID != uid || cm.Data["region"] != "us-east-1" {
		t.Errorf("the refused apply changed the ConfigMap: uid %s (was %s) data %v", cm.UID, uid, cm.Data)
	}

	// The policy gone, the same apply repairs the drift in place.
	undeny(t, ns)
	res, outs, results, _ = apply()
	if res.Code != 0 || outs["changes"] != "true" {
		t.Fatalf("repairing apply: exit %d outputs %v\n%s", res.Code, outs, res.Stdout)
	}
	for _, st := range results.Steps {
		// Its last run failed: the record no longer resumes it, drift or not.
		if st.Name == "settings" && (st.Status != model.StatusOK || st.Skip != "") {
			t.Errorf("settings: %s skip %q detail %q, want it run", st.Status, st.Skip, st.Detail)
		}
	}
	cm, err = kube.Client.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	must(t, err)
	if cm.UID != uid || cm.Data["region"] != "eu-west-1" {
		t.Errorf("the repair: uid %s (was %s) data %v, want the same ConfigMap back at eu-west-1", cm.UID, uid, cm.Data)
	}
}

// denyRegion binds a ValidatingAdmissionPolicy that denies the ConfigMap
// settings in ns at region eu-west-1, and awaits its taking effect.
func denyRegion(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	name := "khook-e2e-region-" + ns
	var policy admissionv1.ValidatingAdmissionPolicy
	must(t, yaml.Unmarshal([]byte(fmt.Sprintf(`metadata: {name: %s}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: ["*"], resources: [configmaps], operations: [CREATE, UPDATE]}]
  validations:
    - expression: "object.metadata.name != 'settings' || !has(object.data) || !('region' in object.data) || object.data.region != 'eu-west-1'"
      message: %q
`, name, regionDenied)), &policy))
	var binding admissionv1.ValidatingAdmissionPolicyBinding
	must(t, yaml.Unmarshal([]byte(fmt.Sprintf(`metadata: {name: %s}
spec:
  policyName: %s
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: %s}}
`, name, name, ns)), &binding))
	api := kube.Client.AdmissionregistrationV1()
	_, err := api.ValidatingAdmissionPolicies().Create(ctx, &policy, metav1.CreateOptions{})
	must(t, err)
	t.Cleanup(func() { undeny(t, ns) })
	_, err = api.ValidatingAdmissionPolicyBindings().Create(ctx, &binding, metav1.CreateOptions{})
	must(t, err)
	awaitAdmission(t, ns, true)
}

// undeny removes denyRegion's policy and awaits the server's admitting
// the spec's value again.
func undeny(t *testing.T, ns string) {
	t.Helper()
	name := "khook-e2e-region-" + ns
	api := kube.Client.AdmissionregistrationV1()
	_ = api.ValidatingAdmissionPolicyBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
	_ = api.ValidatingAdmissionPolicies().Delete(context.Background(), name, metav1.DeleteOptions{})
	awaitAdmission(t, ns, false)
}

// awaitAdmission awaits a dry-run update of settings to the spec's value
// being denied (or admitted): the API server reads policies
// asynchronously.
func awaitAdmission(t *testing.T, ns string, denied bool) {
	t.Helper()
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"region": "eu-west-1"}}
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := kube.Client.CoreV1().ConfigMaps(ns).Update(ctx, probe, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		isDenied := err != nil && strings.Contains(err.Error(), regionDenied)
		return isDenied == denied, nil
	})
	must(t, err)
}
