package e2e

import (
	"context"
	"strings"
	"testing"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/khook/khook/model"
)

const (
	ok      = model.StatusOK
	failed  = model.StatusFailed
	skipped = model.StatusSkipped
)

func TestJobStep(t *testing.T) {
	ns := namespace(t, "-late")
	spec := testdata("steps", "job.yaml")
	out := applySpec(t, spec, "NS="+ns)
	if out.Code != 1 {
		t.Errorf("exit code %d; want 1 (steps failed)", out.Code)
	}
	expectSteps(t, out, []want{
		{Name: "delay", Status: ok, Attempts: 1},
		{Name: "delay-ready", Status: ok, Attempts: 1},
		{Name: "ok", Status: ok, Attempts: 1},
		{Name: "broken", Status: failed, Attempts: 1, Error: "job/broken in " + ns + " failed: BackoffLimitExceeded"},
		{Name: "after-broken", Status: skipped, Skip: "needs broken, which failed"},
		{Name: "stuck", Status: failed, Attempts: 1, Error: "timed out after 2s"},
		{Name: "flaky", Status: ok, MinAttempts: 2},
		{Name: "make-late-namespace", Status: ok, Attempts: 1},
		{Name: "once", Status: ok, Attempts: 1},
		{Name: "excluded", Status: skipped, Skip: `excluded: when vars.get("ENABLE_EXTRA", "false") == "true" is false`},
		{Name: "after-excluded", Status: ok, Attempts: 1},
	})
	broken := out.Results.Steps[3]
	if len(broken.LogTail) == 0 || broken.LogTail[len(broken.LogTail)-1] != "khook test pod: simulated failure: exit code 1" {
		t.Errorf("broken's log tail = %q; want the pod's last lines", broken.LogTail)
	}

	again := applySpec(t, spec, "NS="+ns)
	if s := again.Results.Steps[8]; s.Name != "once" || s.Status != skipped || s.SkipReason != "job/once in "+ns+" already completed successfully (skipIf: succeeded)" {
		t.Errorf("second run of once: %s %s %q; want skipped by skipIf: succeeded", s.Name, s.Status, s.SkipReason)
	}
}

// header is what every step spec starts with: the pod that turns ready late.
var header = []want{
	{Name: "delay", Status: ok, Attempts: 1},
	{Name: "delay-ready", Status: ok, Attempts: 1},
}

var excludedPair = []want{
	{Name: "excluded", Status: skipped, Skip: `excluded: when vars.get("ENABLE_EXTRA", "false") == "true" is false`},
	{Name: "after-excluded", Status: ok, Attempts: 1},
}

func steps(parts ...[]want) []want {
	var all []want
	for _, p := range parts {
		all = append(all, p...)
	}
	return all
}

func TestApplyStep(t *testing.T) {
	ns := namespace(t)
	t.Cleanup(func() { deleteCRD(t, "widgets."+ns+".e2e.khook.io") })
	spec := testdata("steps", "apply.yaml")
	out := applySpec(t, spec, "NS="+ns)
	expectSteps(t, out, steps(header, []want{
		{Name: "ok", Status: ok, Attempts: 1},
		{Name: "invalid", Status: failed, Attempts: 1, Error: "Bad_Name"},
		{Name: "after-invalid", Status: skipped, Skip: "needs invalid, which failed"},
		{Name: "stuck", Status: failed, Attempts: 1, Error: "timed out after 2s"},
		{Name: "flaky", Status: ok, MinAttempts: 2},
		{Name: "make-crd", Status: ok, Attempts: 1},
		{Name: "once", Status: ok, Attempts: 1},
	}, excludedPair))
	again := applySpec(t, spec, "NS="+ns)
	expectStep(t, again, want{Name: "once", Status: skipped, Skip: "exist"})
}

func TestDeleteStep(t *testing.T) {
	ns := namespace(t)
	t.Cleanup(func() { dropFinalizers(t, ns, "held") })
	spec := testdata("steps", "delete.yaml")
	out := applySpec(t, spec, "NS="+ns)
	expectSteps(t, out, steps(header, []want{
		{Name: "seed", Status: ok, Attempts: 1},
		{Name: "ok", Status: ok, Attempts: 1},
		{Name: "absent", Status: failed, Attempts: 1, Error: "never-there"},
		{Name: "after-absent", Status: skipped, Skip: "needs absent, which failed"},
		{Name: "stuck", Status: failed, Attempts: 1, Error: "timed out after 2s"},
		{Name: "flaky", Status: ok, MinAttempts: 2},
		{Name: "make-late", Status: ok, Attempts: 1},
		{Name: "no-release", Status: ok, Attempts: 1},
	}, excludedPair))
}

func TestPatchStep(t *testing.T) {
	ns := namespace(t)
	spec := testdata("steps", "patch.yaml")
	out := applySpec(t, spec, "NS="+ns)
	expectSteps(t, out, steps(header, []want{
		{Name: "seed", Status: ok, Attempts: 1},
		{Name: "ok", Status: ok, Attempts: 1},
		{Name: "missing", Status: failed, Attempts: 1, Error: "configmap/nope"},
		{Name: "after-missing", Status: skipped, Skip: "needs missing, which failed"},
		{Name: "flaky", Status: ok, MinAttempts: 2},
		{Name: "make-late", Status: ok, Attempts: 1},
	}, excludedPair))
}

func TestWaitStep(t *testing.T) {
	ns := namespace(t)
	spec := testdata("steps", "wait.yaml")
	out := applySpec(t, spec, "NS="+ns)
	expectSteps(t, out, steps(header, []want{
		{Name: "seed", Status: ok, Attempts: 1},
		{Name: "ok", Status: ok, Attempts: 1},
		{Name: "unknown-kind", Status: failed, Attempts: 1, Error: "gizmo"},
		{Name: "after-unknown-kind", Status: skipped, Skip: "needs unknown-kind, which failed"},
		{Name: "stuck", Status: failed, Attempts: 1, Error: "timed out after 2s"},
		{Name: "flaky", Status: ok, MinAttempts: 2},
		{Name: "make-late", Status: ok, Attempts: 1},
	}, excludedPair))
	if e := out.Results.Steps[6].Error; !strings.Contains(e, "pod/sleepy") {
		t.Errorf("the wait time-out does not name the object: %s", e)
	}
}

func TestRolloutStep(t *testing.T) {
	ns := namespace(t)
	spec := testdata("steps", "rollout.yaml")
	out := applySpec(t, spec, "NS="+ns)
	expectSteps(t, out, steps(header, []want{
		{Name: "seed", Status: ok, Attempts: 1},
		{Name: "ok", Status: ok, Attempts: 1},
		{Name: "restart", Status: ok, Attempts: 1},
		{Name: "missing", Status: failed, Attempts: 1, Error: "nope"},
		{Name: "after-missing", Status: skipped, Skip: "needs missing, which failed"},
		{Name: "stuck", Status: failed, Attempts: 1, Error: "timed out after 2s"},
		{Name: "flaky", Status: ok, MinAttempts: 2},
	}, excludedPair))
}

// expectStep checks one step of a run, found by name.
func expectStep(t *testing.T, out outcome, w want) {
	t.Helper()
	for _, s := range out.Results.Steps {
		if s.Name != w.Name {
			continue
		}
		if s.Status != w.Status || !strings.Contains(s.SkipReason, w.Skip) || !strings.Contains(s.Error, w.Error) {
			t.Errorf("step %s: %s (skip %q, error %q); want %s (skip ~%q, error ~%q)", s.Name, s.Status, s.SkipReason, s.Error, w.Status, w.Skip, w.Error)
		}
		return
	}
	t.Errorf("no step %s in the results", w.Name)
}

func deleteCRD(t *testing.T, name string) {
	ext, err := apiextensionsclient.NewForConfig(kc.RESTConfig)
	if err != nil {
		t.Log(err)
		return
	}
	_ = ext.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), name, metav1.DeleteOptions{})
}

// dropFinalizers lets a held ConfigMap go, so its namespace can be deleted.
func dropFinalizers(t *testing.T, ns, name string) {
	_, err := kc.Client.CoreV1().ConfigMaps(ns).Patch(context.Background(), name, types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	if err != nil {
		t.Logf("cannot release configmap/%s in %s: %v", name, ns, err)
	}
}

func TestHelmStep(t *testing.T) {
	ns := namespace(t)
	spec := testdata("steps", "helm.yaml")
	out := applySpec(t, spec, "NS="+ns)
	expectSteps(t, out, steps(header, []want{
		{Name: "ok", Status: ok, Attempts: 1},
		{Name: "missing-chart", Status: failed, Attempts: 1, Error: "charts/nope"},
		{Name: "after-missing-chart", Status: skipped, Skip: "needs missing-chart, which failed"},
		{Name: "stuck", Status: failed, Attempts: 1, Error: "timed out after 2s"},
		{Name: "flaky", Status: ok, MinAttempts: 2},
		{Name: "once", Status: ok, Attempts: 1},
		{Name: "uninstall", Status: ok, Attempts: 1},
	}, excludedPair))
	again := applySpec(t, spec, "NS="+ns)
	expectStep(t, again, want{Name: "once", Status: skipped, Skip: "installed"})
}
