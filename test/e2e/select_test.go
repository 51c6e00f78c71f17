package e2e

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/runner/state"
)

// selected runs khook on testdata/select.yaml in ns with args.
func selected(t *testing.T, ns string, dir string, args ...string) outcome {
	t.Helper()
	args = append(args, "-f", testdata("select.yaml"), "--set", "NS="+ns)
	return khook(t, invocation{Args: args, Dir: dir})
}

// record reads the spec's state record in ns.
func record(t *testing.T, ns string) *state.Record {
	t.Helper()
	rec, err := state.NewStore(kc.Client, state.Ref{Namespace: ns, Name: "khook-state-e2e-select"}).Load(context.Background())
	must(t, err)
	return rec
}

// configMaps lists which of names exist in ns.
func configMaps(t *testing.T, ns string, names ...string) []string {
	t.Helper()
	var out []string
	for _, n := range names {
		_, err := kc.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), n, metav1.GetOptions{})
		switch {
		case err == nil:
			out = append(out, n)
		case !apierrors.IsNotFound(err):
			t.Fatal(err)
		}
	}
	return out
}

const notSelected = "excluded: not selected"

func partialOf(t *testing.T, out outcome, steps ...string) {
	t.Helper()
	sel := out.Results.Selection
	if sel == nil || !sel.Partial || sel.Total != 4 || !slices.Equal(sel.Steps, steps) {
		t.Errorf("selection %+v, want partial, %v of 4", sel, steps)
	}
}

// The acceptance of step selection with the built binary: errors naming
// nothing, --target-only refused without a record, --target with its
// needs, --target-only on a recorded need, --exclude, --selector, the
// state record's untouched entries and partial marker, destroy's reversed
// closure, and a saved plan's selection applied by apply --plan.
func TestStepSelection(t *testing.T) {
	ns, dir := namespace(t), t.TempDir()
	all := []string{"base", "web", "extra", "smoke"}

	// A selection naming nothing: exit 2, did-you-mean, no record made.
	out := selected(t, ns, dir, "apply", "--target", "webb", "--exclude", "smok")
	if out.Code != 2 || !strings.Contains(out.Stderr, `--target webb: no step of the spec has that name (did you mean "web"?)`) ||
		!strings.Contains(out.Stderr, `--exclude smok: no step of the spec has that name (did you mean "smoke"?)`) {
		t.Fatalf("unknown names: exit %d\nstderr:\n%s", out.Code, out.Stderr)
	}
	out = selected(t, ns, dir, "plan", "--selector", "tier=app")
	if out.Code != 2 || !strings.Contains(out.Stderr, `--selector "tier=app" matches no step (did you mean "tier=apps"?)`) {
		t.Fatalf("selector matching nothing: exit %d\nstderr:\n%s", out.Code, out.Stderr)
	}
	if rec := record(t, ns); rec != nil {
		t.Fatalf("a refused selection wrote the record: %+v", rec)
	}

	// --target-only with a need that never ran: refused, naming it.
	out = selected(t, ns, dir, "apply", "--target", "web", "--target-only", "-o", "json")
	if out.Code == 0 || out.Results == nil || !strings.Contains(out.Results.Error, "step web needs base, which has no successful run in the state record") {
		t.Fatalf("--target-only without a record of base: exit %d, results %+v\nstderr:\n%s", out.Code, out.Results, out.Stderr)
	}
	if got := configMaps(t, ns, all...); len(got) != 0 {
		t.Fatalf("a refused --target-only applied %v", got)
	}

	// --target web brings base; extra and smoke are not selected.
	out = selected(t, ns, dir, "apply", "--target", "web", "-o", "json")
	expectSteps(t, out, []want{{Name: "base", Status: ok, Attempts: 1}, {Name: "web", Status: ok, Attempts: 1},
		{Name: "extra", Status: skipped, Skip: notSelected}, {Name: "smoke", Status: skipped, Skip: notSelected}})
	partialOf(t, out, "base", "web")
	if got := configMaps(t, ns, all...); !slices.Equal(got, []string{"base", "web"}) {
		t.Errorf("--target web applied %v", got)
	}
	rec := record(t, ns)
	if !rec.Partial || len(rec.Steps) != 2 || rec.Steps["web"].Status != state.StepOK {
		t.Errorf("record after --target web: partial %v, steps %+v", rec.Partial, rec.Steps)
	}
	text := selected(t, ns, dir, "apply", "--target", "web")
	if !strings.Contains(text.Stdout+text.Stderr, "apply e2e-select (partial run: 2 of 4 steps): ok") {
		t.Errorf("the summary does not say the run was partial:\n%s%s", text.Stdout, text.Stderr)
	}

	// --target-only smoke: web succeeded, so only smoke runs.
	out = selected(t, ns, dir, "apply", "--target", "smoke", "--target-only", "-o", "json")
	expectSteps(t, out, []want{{Name: "base", Status: skipped, Skip: notSelected}, {Name: "web", Status: skipped, Skip: notSelected},
		{Name: "extra", Status: skipped, Skip: notSelected}, {Name: "smoke", Status: ok, Attempts: 1}})
	partialOf(t, out, "smoke")
	webBefore := record(t, ns).Steps["web"]

	// --selector tier=apps brings web's need base; --exclude leaves web
	// out, and its record entry stays as it was.
	out = selected(t, ns, dir, "apply", "--selector", "tier=apps", "--exclude", "web", "-o", "json")
	partialOf(t, out, "base", "extra")
	if got := configMaps(t, ns, all...); !slices.Equal(got, all) {
		t.Errorf("after the selector, the namespace holds %v", got)
	}
	rec = record(t, ns)
	if !reflect.DeepEqual(rec.Steps["web"], webBefore) || rec.Steps["extra"].Status != state.StepOK || !rec.Partial {
		t.Errorf("record after --exclude web: web %+v (was %+v), extra %+v, partial %v", rec.Steps["web"], webBefore, rec.Steps["extra"], rec.Partial)
	}

	// destroy --target web tears down smoke (which needs it) first; base
	// and extra stand, and so does the record, without web and smoke.
	out = selected(t, ns, dir, "destroy", "--target", "web", "-o", "json")
	if out.Code != 0 {
		t.Fatalf("destroy --target web: exit %d\nstderr:\n%s", out.Code, out.Stderr)
	}
	partialOf(t, out, "web", "smoke")
	if got := configMaps(t, ns, all...); !slices.Equal(got, []string{"base", "extra"}) {
		t.Errorf("after destroy --target web, the namespace holds %v", got)
	}
	rec = record(t, ns)
	if rec == nil || len(rec.Steps) != 2 || rec.Steps["base"].Status != state.StepOK || rec.Steps["extra"].Status != state.StepOK {
		t.Errorf("record after destroy --target web: %+v", rec)
	}

	// A saved plan records its selection; apply --plan runs exactly it.
	out = selected(t, ns, dir, "plan", "--target", "smoke", "--out", "smoke.plan")
	if out.Code != 0 {
		t.Fatalf("plan --target smoke --out: exit %d\nstderr:\n%s", out.Code, out.Stderr)
	}
	out = selected(t, ns, dir, "apply", "--plan", "smoke.plan", "--target", "extra")
	if out.Code != 2 || !strings.Contains(out.Stderr, "--plan applies the saved plan's own step selection") {
		t.Errorf("apply --plan with a selection of its own: exit %d\nstderr:\n%s", out.Code, out.Stderr)
	}
	out = selected(t, ns, dir, "apply", "--plan", "smoke.plan", "-o", "json")
	expectSteps(t, out, []want{{Name: "base", Status: skipped, Skip: "unchanged since it succeeded"}, {Name: "web", Status: ok, Attempts: 1},
		{Name: "extra", Status: skipped, Skip: notSelected}, {Name: "smoke", Status: ok, Attempts: 1}})
	if sel := out.Results.Selection; sel == nil || !slices.Equal(sel.Targets, []string{"smoke"}) {
		t.Errorf("apply --plan ran selection %+v, want the plan's --target smoke", sel)
	}
	if got := configMaps(t, ns, all...); !slices.Equal(got, all) {
		t.Errorf("after apply --plan, the namespace holds %v", got)
	}
}
