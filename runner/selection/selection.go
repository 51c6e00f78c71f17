// Package selection picks the steps of a partial run (--target,
// --target-only, --selector, --exclude) and marks the others
// spec.SkipNotSelected, so the engine, the planner, the state record and
// every renderer treat them as left out before the run. Selectors are
// Kubernetes label selectors (k8s.io/apimachinery/pkg/labels), which spec
// may not import: selection lives here, where plan, apply, destroy, drift
// and graph all reach it.
//
// May import: model, spec and apimachinery's label selectors; no renderer.
package selection

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
)

// Direction is which way a target's closure runs.
type Direction int

const (
	// Needs: a target brings everything it needs, transitively (plan,
	// apply, drift, graph).
	Needs Direction = iota
	// Dependents: a target brings every step that needs it, transitively,
	// torn down first (destroy, as terraform destroy -target).
	Dependents
)

// Mark marks the steps req leaves out as spec.SkipNotSelected and returns
// req with the selected steps, or nil when req asks for nothing. Its error
// names every problem at once: an unknown step (with did-you-mean), a
// selector that does not parse or matches no step, a selection that leaves
// nothing to run.
func Mark(s *spec.Spec, req *model.Selection, dir Direction) (*model.Selection, error) {
	if !req.Requested() {
		return nil, nil
	}
	var errs []error
	names := s.StepNames()
	for _, f := range []struct {
		flag  string
		names []string
	}{{"--target", req.Targets}, {"--exclude", req.Exclude}} {
		flag := f.flag
		for _, n := range f.names {
			if s.Step(n) == nil {
				errs = append(errs, unknownStep(flag, n, names))
			}
		}
	}
	if req.TargetOnly && len(req.Targets) == 0 && req.Selector == "" {
		errs = append(errs, errors.New("--target-only needs --target or --selector: it runs the steps they name without what those need"))
	}
	seeds := map[string]bool{}
	for _, n := range req.Targets {
		seeds[n] = true
	}
	if req.Selector != "" {
		matched, err := match(s, req.Selector)
		if err != nil {
			errs = append(errs, err)
		}
		for _, n := range matched {
			seeds[n] = true
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	selected := seeds
	if len(req.Targets) == 0 && req.Selector == "" { // --exclude alone
		selected = map[string]bool{}
		for _, n := range names {
			selected[n] = true
		}
	} else if !req.TargetOnly {
		selected = closure(s, seeds, dir)
	}
	dropped := map[string]bool{}
	for _, n := range req.Exclude {
		dropped[n] = true
	}
	if dir == Dependents {
		// What a standing step needs stays standing: excluding a step
		// from a destroy excludes what it needs too.
		dropped = closure(s, dropped, Needs)
	}
	out := &model.Selection{Targets: req.Targets, TargetOnly: req.TargetOnly, Selector: req.Selector, Exclude: req.Exclude,
		Steps: []string{}, Total: len(s.Steps)}
	for _, st := range s.Steps {
		if selected[st.Name] && !dropped[st.Name] {
			out.Steps = append(out.Steps, st.Name)
			continue
		}
		st.Skip = spec.SkipNotSelected
	}
	if len(out.Steps) == 0 {
		return nil, fmt.Errorf("the selection %s leaves no step to run", req.Flags())
	}
	out.Partial = len(out.Steps) < out.Total
	return out, nil
}

// NeedsOutside lists, per selected step, the steps it needs (Needs) or
// that need it (Dependents) which the selection left out: what
// --target-only takes as already done (apply) or already gone (destroy).
func NeedsOutside(s *spec.Spec, dir Direction) map[string][]string {
	out := map[string][]string{}
	for _, st := range s.Steps {
		if st.Skip == spec.SkipNotSelected {
			continue
		}
		for _, n := range neighbours(s, st.Name, dir) {
			if dep := s.Step(n); dep != nil && dep.Skip == spec.SkipNotSelected {
				out[st.Name] = append(out[st.Name], n)
			}
		}
	}
	return out
}

// match lists the steps whose labels the selector matches; a selector that
// matches none names the labels the steps carry, with did-you-mean.
func match(s *spec.Spec, selector string) ([]string, error) {
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, fmt.Errorf("--selector %q is not a label selector (tier=infra,team!=data, env in (a,b), !key): %v", selector, err)
	}
	var out []string
	known := map[string]bool{}
	for _, st := range s.Steps {
		if sel.Matches(labels.Set(st.Labels)) {
			out = append(out, st.Name)
		}
		for k, v := range st.Labels {
			known[k+"="+v] = true
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	if len(known) == 0 {
		return nil, fmt.Errorf("--selector %q matches no step: no step has labels (add labels: {tier: infra} to the steps to select)", selector)
	}
	pairs := make([]string, 0, len(known))
	for p := range known {
		pairs = append(pairs, p)
	}
	sort.Strings(pairs)
	hint := ""
	for _, term := range strings.Split(selector, ",") {
		if s := spec.Suggest(strings.ReplaceAll(strings.TrimSpace(term), "==", "="), pairs); s != "" && s != strings.TrimSpace(term) {
			hint = fmt.Sprintf(" (did you mean %q?)", s)
			break
		}
	}
	return nil, fmt.Errorf("--selector %q matches no step%s; the steps' labels are %s", selector, hint, strings.Join(pairs, ", "))
}

func unknownStep(flag, name string, names []string) error {
	hint := ""
	if s := spec.Suggest(name, names); s != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", s)
	}
	if strings.Contains(name, ",") { // a step name cannot hold a comma
		hint = fmt.Sprintf(" (a step name holds no comma: repeat %s for each step, %s %s)", flag, flag, strings.ReplaceAll(name, ",", " "+flag+" "))
	}
	return fmt.Errorf("%s %s: no step of the spec has that name%s", flag, name, hint)
}

// closure is seeds with every step reachable from them in dir.
func closure(s *spec.Spec, seeds map[string]bool, dir Direction) map[string]bool {
	out := map[string]bool{}
	var visit func(string)
	visit = func(n string) {
		if out[n] {
			return
		}
		out[n] = true
		for _, m := range neighbours(s, n, dir) {
			visit(m)
		}
	}
	for n := range seeds {
		visit(n)
	}
	return out
}

// neighbours are the steps name needs (Needs) or that need it (Dependents).
func neighbours(s *spec.Spec, name string, dir Direction) []string {
	if dir == Needs {
		if st := s.Step(name); st != nil {
			return st.Needs
		}
		return nil
	}
	var out []string
	for _, st := range s.Steps {
		if slices.Contains(st.Needs, name) {
			out = append(out, st.Name)
		}
	}
	return out
}
