package e2e

import (
	"testing"

	"github.com/khook/khook/report"
)

const (
	ok      = report.StatusOK
	failed  = report.StatusFailed
	skipped = report.StatusSkipped
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
