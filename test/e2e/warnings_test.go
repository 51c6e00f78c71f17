package e2e

import (
	"strings"
	"testing"

	"github.com/khook/khook/model"
)

// A warning the API server sends (a deprecated node label) is attributed
// to its step and object in the plan's terminal output, apply's terminal
// output and -o json, never a raw log line; --warnings-as-errors turns it
// into a failure of the plan's step and of apply's.
func TestAPIWarningsAreAttributedAndCanFail(t *testing.T) {
	ns := namespace(t)
	spec := testdata("strict", "warn.yaml")
	const deprecated = "beta.kubernetes.io/os is deprecated since v1.14"
	object := "deployment.apps/web in namespace " + ns
	attributed := "warning: " + object + ": "

	plan := khook(t, invocation{Args: []string{"plan", "--diff", "-f", spec, "--set", "NS=" + ns}})
	if plan.Code != 0 || !strings.Contains(plan.Stdout, attributed) || !strings.Contains(plan.Stdout, deprecated) || strings.Contains(plan.Stderr, "Warning:") {
		t.Errorf("plan --diff: exit %d\nstdout:\n%s\nstderr:\n%s\nwant %q under the step, no raw log line", plan.Code, plan.Stdout, plan.Stderr, attributed)
	}
	strict := khook(t, invocation{Args: []string{"plan", "--diff", "--warnings-as-errors", "-f", spec, "--set", "NS=" + ns}})
	if strict.Code != 1 || !strings.Contains(strict.Stdout, "fail: the API server warned (warnings-as-errors is set): "+object) {
		t.Errorf("plan --warnings-as-errors: exit %d\nstdout:\n%s\nstderr:\n%s\nwant the step planned as fail", strict.Code, strict.Stdout, strict.Stderr)
	}

	apply := applySpec(t, spec, "NS="+ns)
	expectSteps(t, apply, []want{{Name: "web", Status: "ok", Attempts: 1}})
	if apply.Results != nil && len(apply.Results.Steps) == 1 {
		ws := apply.Results.Steps[0].Warnings
		if len(ws) == 0 || ws[0].Object != object || !strings.Contains(ws[0].Message, deprecated) || ws[0].From != model.WarnerAPIServer {
			t.Errorf("apply -o json: warnings %+v, want the deprecated label on %s", ws, object)
		}
	}
	if strings.Contains(apply.Stderr, "Warning:") {
		t.Errorf("apply printed a raw warning line:\n%s", apply.Stderr)
	}

	// A write the API server warns about fails the step (in a namespace of
	// its own: the Deployment above is converged and gets no write).
	ns = namespace(t)
	failed := khook(t, invocation{Args: []string{"apply", "--warnings-as-errors", "-f", spec, "--set", "NS=" + ns}})
	if failed.Code != 1 || !strings.Contains(failed.Stdout+failed.Stderr, "warnings-as-errors is set") {
		t.Errorf("apply --warnings-as-errors: exit %d\nstdout:\n%s\nstderr:\n%s\nwant the step failed", failed.Code, failed.Stdout, failed.Stderr)
	}

}
