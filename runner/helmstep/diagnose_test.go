package helmstep

import (
	"strings"
	"testing"
	"time"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
)

// A failed install with wait names the stuck Deployment and its pod, and
// the failed release it left is a change.
func TestFailedInstallIsDiagnosedAndAChange(t *testing.T) {
	f := newFixture(t)
	st := f.step("stuck", spec.Helm{Chart: "./charts/demo", Wait: true,
		Values: map[string]any{"podAnnotations": map[string]any{"khook.test/crash-loop": "true"}}})
	out, err := f.try(st, 5*time.Second)
	if err == nil {
		t.Fatal("an install whose pods crash-loop succeeded")
	}
	d := out.Diagnosis
	if d == nil || len(d.Objects) == 0 || len(d.Pods) != 1 || !strings.Contains(d.Reason, "CrashLoopBackOff: OOMKilled (exit 137), 5 restarts") {
		t.Fatalf("diagnosis = %+v", d)
	}
	if d.RolledBack != "" {
		t.Errorf("rolledBack = %q on a step without atomic", d.RolledBack)
	}
	if len(out.Changes) != 1 || out.Changes[0].Action != model.DidInstall || !out.Changes[0].Failed {
		t.Errorf("changes = %+v, want the failed install", out.Changes)
	}
}

// An atomic install that failed says Helm uninstalled it and why; with the
// release gone, it changed nothing.
func TestAtomicInstallSaysItRolledBack(t *testing.T) {
	f := newFixture(t)
	st := f.step("undone", spec.Helm{Chart: "./charts/demo", Atomic: true,
		Values: map[string]any{"podAnnotations": map[string]any{"khook.test/crash-loop": "true"}}})
	out, err := f.try(st, 8*time.Second)
	if err == nil {
		t.Fatal("an install whose pods crash-loop succeeded")
	}
	d := out.Diagnosis
	if d == nil || !strings.HasPrefix(d.RolledBack, "atomic: Helm uninstalled release undone because its resources were not ready within ") ||
		!strings.Contains(d.Reason, "CrashLoopBackOff") {
		t.Fatalf("diagnosis = %+v", d)
	}
	if len(out.Changes) != 0 {
		t.Errorf("changes = %+v after an atomic uninstall", out.Changes)
	}
}
