package helmstep

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/action"
	rel "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/chartsource"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/wait"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/words"
)

// TestsToRun are the names of the release's test hooks the step's test:
// runs, in the order of their names (Helm runs them by weight); nil when
// the step runs none.
func TestsToRun(r *rel.Release, h *spec.Helm) []string {
	if h.Test == nil || r == nil {
		return nil
	}
	var names []string
	for _, hk := range r.Hooks {
		if slices.Contains(hk.Events, rel.HookTest) && testSelected(hk.Name, h.Test.Filter) {
			names = append(names, hk.Name)
		}
	}
	slices.Sort(names)
	return names
}

// TestsDue are the tests the step runs on a converged release: all of them
// with always: true, else those that have not passed on its current
// revision (never run, or failed last time).
func TestsDue(last *rel.Release, h *spec.Helm) []string {
	names := TestsToRun(last, h)
	if h.Test == nil || h.Test.Always {
		return names
	}
	var due []string
	for _, hk := range last.Hooks {
		if slices.Contains(names, hk.Name) && hk.LastRun.Phase != rel.HookPhaseSucceeded {
			due = append(due, hk.Name)
		}
	}
	return due
}

// TestsNote is what a plan adds to a step's reason for the tests it runs.
func TestsNote(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return "; then runs " + words.Plural(len(names), "test", "tests") + " " + strings.Join(names, ", ")
}

// testSelected applies test.filter: names to run, !names to skip.
func testSelected(name string, filter []string) bool {
	include := false
	for _, f := range filter {
		if strings.HasPrefix(f, "!") {
			if f[1:] == name {
				return false
			}
			continue
		}
		include = true
	}
	return !include || slices.Contains(filter, name)
}

// test runs the step's tests after an install or upgrade (changed), or on
// a converged release those TestsDue, and adds what ran to out.
func (e *Executor) test(ctx context.Context, r *Release, out *runner.Outcome, changed bool) error {
	if r.step.Helm.Test == nil || (!changed && len(TestsDue(r.Last, r.step.Helm)) == 0) {
		return nil
	}
	did, err := runTests(ctx, e.clients, r)
	out.Writes = int(r.sess.writes.Load())
	if err != nil {
		var tf *TestFailure
		if errors.As(err, &tf) {
			out.Diagnosis = tf.Diagnosis
		}
		return err
	}
	out.Detail += "; " + did
	return nil
}

// TestFailure is a failed chart test: the error names the test and carries
// its pod's log tail; Diagnosis is the pod as the run reports failed pods.
type TestFailure struct {
	err       error
	Diagnosis *model.Diagnosis
}

func (f *TestFailure) Error() string { return f.err.Error() }
func (f *TestFailure) Unwrap() error { return f.err }

// runTests runs the release's selected test hooks (helm test) and returns
// what ran. A failed test is a *TestFailure.
func runTests(ctx context.Context, clients *kube.Clients, r *Release) (string, error) {
	t := r.step.Helm.Test
	rt := action.NewReleaseTesting(r.sess.cfg)
	rt.Namespace = r.Namespace
	rt.Timeout = t.Timeout.D()
	if rt.Timeout == 0 {
		rt.Timeout = helmTimeout(ctx, false)
	}
	for _, f := range t.Filter {
		if strings.HasPrefix(f, "!") {
			rt.Filters[action.ExcludeNameFilter] = append(rt.Filters[action.ExcludeNameFilter], f[1:])
		} else {
			rt.Filters[action.IncludeNameFilter] = append(rt.Filters[action.IncludeNameFilter], f)
		}
	}
	since := time.Now()
	reli, shutdown, err := rt.Run(r.Name)
	if err == nil {
		err = shutdown() // the hooks' delete policies
		if err != nil {
			return "", fmt.Errorf("release %s: the tests passed but their pods could not be cleaned up: %w", r.Name, err)
		}
		var names []string
		if res, cerr := chartsource.AsRelease(reli); cerr == nil {
			names = TestsToRun(res, r.step.Helm)
		}
		if len(names) == 0 {
			return "no tests", nil
		}
		return fmt.Sprintf("%s %s passed", words.Plural(len(names), "test", "tests"), strings.Join(names, ", ")), nil
	}
	res, cerr := chartsource.AsRelease(reli)
	if reli == nil || cerr != nil {
		return "", fmt.Errorf("release %s: the tests could not run: %w", r.Name, chartsource.OneLine(err))
	}
	var failed []string
	var refs []wait.ObjectRef
	for _, hk := range res.Hooks {
		if !slices.Contains(hk.Events, rel.HookTest) || (hk.LastRun.Phase != rel.HookPhaseFailed && hk.LastRun.Phase != rel.HookPhaseUnknown) {
			continue
		}
		failed = append(failed, hk.Name)
		refs = append(refs, wait.ObjectRef{GVK: hookGVK(hk), Namespace: hookNamespace(hk, r.Namespace), Name: hk.Name})
	}
	if len(failed) == 0 {
		return "", fmt.Errorf("release %s: the tests failed: %w", r.Name, chartsource.OneLine(err))
	}
	d := wait.Diagnose(ctx, clients, since, refs, wait.DefaultDiagnoseLimits)
	msg := fmt.Sprintf("release %s: test %s failed", r.Name, strings.Join(failed, ", "))
	if tail := logTail(d); tail != "" {
		msg += "; log tail: " + tail
	} else if d != nil && d.Reason != "" {
		msg += ": " + d.Reason
	}
	return "", &TestFailure{err: fmt.Errorf("%s (run it again with helm test %s -n %s --logs)", msg, r.Name, r.Namespace), Diagnosis: d}
}

// logTail is the failed containers' last log lines, joined on one line.
func logTail(d *model.Diagnosis) string {
	if d == nil {
		return ""
	}
	var lines []string
	for _, p := range d.Pods {
		for _, c := range p.Containers {
			lines = append(lines, c.Logs...)
		}
	}
	return strings.Join(lines, " | ")
}

func hookGVK(hk *rel.Hook) schema.GroupVersionKind {
	var m struct {
		APIVersion string `json:"apiVersion"`
	}
	_ = yaml.Unmarshal([]byte(hk.Manifest), &m)
	gv, _ := schema.ParseGroupVersion(m.APIVersion)
	if m.APIVersion == "" {
		gv = schema.GroupVersion{Version: "v1"}
	}
	return gv.WithKind(hk.Kind)
}

func hookNamespace(hk *rel.Hook, def string) string {
	var m struct {
		Metadata struct {
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if yaml.Unmarshal([]byte(hk.Manifest), &m) == nil && m.Metadata.Namespace != "" {
		return m.Metadata.Namespace
	}
	return def
}
