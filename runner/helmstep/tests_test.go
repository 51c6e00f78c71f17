package helmstep

import (
	"errors"
	"strings"
	"testing"

	"github.com/khook/khook/spec"
	"github.com/khook/khook/test/chartsrc"
	"github.com/khook/khook/test/cluster"
)

// test: true runs the chart's test hooks after the install and not on the
// converged re-run; always: true runs them there too.
func TestChartTestsPass(t *testing.T) {
	f := newFixture(t)
	st := f.step("tst", spec.Helm{Chart: chartsrc.ChartDir("tested"), Test: &spec.HelmTest{}})
	out := f.run(st, stepTimeout)
	mustContain(t, "detail", out.Detail, "installed release tst revision 1", "test tst-test-ok passed")
	out = f.run(st, stepTimeout)
	if out.Writes != 0 || strings.Contains(out.Detail, "test") {
		t.Errorf("converged re-run = %q with %d writes, want no tests and no writes", out.Detail, out.Writes)
	}
	st.Helm.Test.Always = true
	out = f.run(st, stepTimeout)
	mustContain(t, "detail", out.Detail, "unchanged at revision 1", "test tst-test-ok passed")
}

// A failing test fails the step with its pod's log tail, through the
// redactor, and a diagnosis of the pod.
func TestChartTestFails(t *testing.T) {
	f := newFixture(t)
	secret := cluster.PodLogLines[1][len("khook test pod: "):] // "doing the work": stands for a secret a test printed
	f.redactor.Add(secret)
	st := f.step("tf", spec.Helm{Chart: chartsrc.ChartDir("tested"), Values: map[string]any{"failTest": true}, Test: &spec.HelmTest{}})
	out, err := f.try(st, stepTimeout)
	if err == nil {
		t.Fatalf("the step passed: %s", out.Detail)
	}
	mustContain(t, "error", err.Error(), "release tf: test tf-test-fail failed; log tail:", cluster.PodLogLines[2], "helm test tf -n "+f.ns)
	mustNotContain(t, "error", err.Error(), secret)
	var tf *TestFailure
	if !errors.As(err, &tf) && out.Diagnosis == nil {
		t.Error("no diagnosis of the failed test pod")
	}
	if out.Diagnosis == nil || len(out.Diagnosis.Pods) != 1 || out.Diagnosis.Pods[0].Name != "tf-test-fail" {
		t.Errorf("diagnosis = %+v, want the failed test pod", out.Diagnosis)
	}

	// A converged re-run runs the test that failed again.
	_, err = f.try(st, stepTimeout)
	if err == nil || !strings.Contains(err.Error(), "test tf-test-fail failed") {
		t.Errorf("the re-run after a failed test: %v", err)
	}

	// A filter that skips the failing test passes.
	st.Helm.Test = &spec.HelmTest{Filter: []string{"!tf-test-fail"}, Always: true}
	out = f.run(st, stepTimeout)
	mustContain(t, "detail", out.Detail, "test tf-test-ok passed")
}
