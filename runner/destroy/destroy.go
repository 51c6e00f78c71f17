// Package destroy undoes what apply installed: it walks the DAG in reverse
// (a step is torn down only after every step that needs it), uninstalls helm
// releases, deletes what apply steps applied (last manifest first) and the
// Jobs of job steps, and leaves delete, patch, wait and rollout steps alone.
// Namespaces made by createNamespace stay. Everything tolerates absence, so
// destroy is idempotent.
//
// Teardown reuses the engine and the delete executor: each step becomes a
// delete: step of the same name whose needs are its dependents.
//
// May import: runner, model, spec; no renderer.
package destroy

import (
	"context"
	"fmt"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/spec"
)

// Teardown is a spec's reversed DAG.
type Teardown struct {
	// Steps are delete: steps, one per spec step, in spec order; each needs
	// the steps that needed the original. Steps destroy leaves alone keep
	// their original action and are in Leave.
	Steps []*spec.Step
	// Leave maps a step destroy does not undo to the reason it is reported skipped.
	Leave map[string]string
	// Types maps a step to its original type, for the results.
	Types map[string]string
}

// Plan builds the teardown of s. It never touches the cluster.
func Plan(s *spec.Spec) *Teardown {
	t := &Teardown{Leave: map[string]string{}, Types: map[string]string{}}
	dependents := map[string][]string{}
	for _, st := range s.Steps {
		for _, n := range st.Needs {
			dependents[n] = append(dependents[n], st.Name)
		}
	}
	for _, st := range s.Steps {
		t.Types[st.Name] = st.Type()
		td := &spec.Step{
			Name: st.Name, Needs: dependents[st.Name], When: st.When,
			Timeout: st.Timeout, Retries: st.Retries, RetryDelay: st.RetryDelay,
			// A failed teardown blocks only what it depends on: other
			// branches are still torn down.
			OnError: spec.OnErrorContinue,
			Index:   st.Index, Path: st.Path, Skip: st.Skip,
		}
		if d := undo(st); d != nil {
			td.Delete = d
		} else {
			copyAction(td, st)
			t.Leave[st.Name] = fmt.Sprintf("destroy leaves %s steps alone", st.Type())
			if st.Helm != nil && st.Helm.OnlyCRDs() {
				t.Leave[st.Name] = "crds: only installs no release: destroy leaves its CRDs, as Helm's uninstall leaves a chart's crds/ (delete them with a delete step that says deleteCRDs: true)"
			}
		}
		t.Steps = append(t.Steps, td)
	}
	return t
}

// undo is the delete that reverses a step, nil for types destroy leaves.
func undo(st *spec.Step) *spec.Delete {
	if b := st.Block(); b != nil {
		return b.Undo(st.Name)
	}
	return nil
}

func copyAction(dst, src *spec.Step) {
	dst.Delete, dst.Patch, dst.Wait, dst.Rollout, dst.Other = src.Delete, src.Patch, src.Wait, src.Rollout, src.Other
}

// Options configure Run.
type Options struct {
	// Delete executes the teardown steps (runner/steps' delete executor with
	// the helm uninstaller).
	Delete runner.Executor
	// Engine hooks and settings, as for apply.
	Emit        func(model.Event)
	OnFinish    func(model.StepResult)
	Parallelism int
	Configure   func(*runner.Engine) // last word on the engine (redactor, clock)
}

// Run tears s down and returns every step's result in spec order, typed as
// the original steps.
func Run(ctx context.Context, s *spec.Spec, opts Options) []model.StepResult {
	t := Plan(s)
	eng := &runner.Engine{Steps: t.Steps, Exec: opts.Delete, PosOf: s.PosOf, Parallelism: opts.Parallelism}
	if opts.Emit != nil {
		eng.Emit = func(ev model.Event) {
			if ev.Result != nil {
				r := *ev.Result
				r.Type = t.Types[r.Name]
				ev.Result = &r
			}
			opts.Emit(ev)
		}
	}
	eng.Resume = func(st *spec.Step) (string, bool) {
		reason, leave := t.Leave[st.Name]
		return reason, leave
	}
	eng.OnFinish = func(r model.StepResult) {
		r.Type = t.Types[r.Name]
		if opts.OnFinish != nil {
			opts.OnFinish(r)
		}
	}
	if opts.Configure != nil {
		opts.Configure(eng)
	}
	results := eng.Run(ctx)
	for i := range results {
		results[i].Type = t.Types[results[i].Name]
	}
	return results
}
