package e2e

import (
	"os"
	"strings"
	"testing"

	"github.com/khook/khook/test/e2e/apiproxy"
)

// What apply's drift check costs a converged run with a state record
// (docs/dsl.md, "The state record: resume and drift repair"): the steps
// still resume and nothing is written but the record and its lock; the
// requests are logged, and with KHOOK_E2E_BEFORE_BIN (a khook without the
// check) those of the same run before it.
func TestConvergedApplyWithStateChecksDriftAndWritesOnlyTheRecord(t *testing.T) {
	ns := namespace(t)
	spec := testdata("state", "converged.yaml")
	mustApply(t, spec, "NS="+ns)
	proxy := apiproxy.Start(t, kc.RESTConfig)
	args := []string{"apply", "-f", spec, "--set", "NS=" + ns, "-o", "json"}
	measure := func(bin string, extra ...string) apiproxy.Counts {
		t.Helper()
		saved := khookBin
		khookBin = bin
		defer func() { khookBin = saved }()
		proxy.Requests()
		proxy.Writes()
		out := khook(t, invocation{Args: append(args, extra...), Kubeconfig: proxy.Kubeconfig})
		if out.Code != 0 {
			t.Fatalf("%s %v: exit %d\n%s", bin, extra, out.Code, out.Stderr)
		}
		if len(extra) == 0 {
			expectSteps(t, out, []want{{Name: "settings", Status: skipped, Skip: "state record"}, {Name: "web", Status: skipped, Skip: "state record"}})
			writes, _ := proxy.Writes()
			for _, w := range writes {
				if !strings.Contains(w, "/secrets/khook-state-") && !strings.Contains(w, "/leases") {
					t.Errorf("a converged apply wrote %s; want only the state record and its lock", w)
				}
			}
		}
		return proxy.Requests()
	}
	now := measure(khookBin)
	reconcile := measure(khookBin, "--reconcile")
	t.Logf("converged apply with a state record: %d requests (%d GET, %d LIST, %d dry runs, %d writes); --reconcile: %d",
		now.Total(), now.Verbs["GET"], now.Verbs["LIST"], now.DryRuns, now.Writes(), reconcile.Total())
	if before := os.Getenv("KHOOK_E2E_BEFORE_BIN"); before != "" {
		b := measure(before)
		t.Logf("the same run without the drift check (%s): %d requests (%d GET, %d LIST, %d writes)", before, b.Total(), b.Verbs["GET"], b.Verbs["LIST"], b.Writes())
	}
}
