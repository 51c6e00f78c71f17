package prune

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/state"
	"github.com/khook/khook/spec"
)

// Group is one step's leftovers, in the order they are pruned.
type Group struct {
	Step       string
	InSpec     bool
	Pos        spec.Pos
	Candidates []Candidate
}

// NoRecordNote is what a plan says once when the spec keeps no state
// record: there is no inventory to prune from.
const NoRecordNote = "pruning needs a state record (state: {enabled: true}): without one, what leaves the spec stays in the cluster"

// produced says which inventory keys a step still produces; ok false
// means only its recorded orphans are leftovers (its inventory is current).
type produced func(st *spec.Step) (keys map[string]bool, ok bool)

// leftovers lists, per step, what the record says khook put in the
// cluster and the spec no longer produces: steps of the spec first (spec
// order), then steps that left it, each after the steps that needed it (the
// reverse of their recorded needs). run says whether a step of the spec is
// pruned in this run at all.
func leftovers(s *spec.Spec, rec *state.Record, run func(*spec.Step) bool, still produced) (groups []Group, notes []string) {
	if rec == nil {
		return nil, nil
	}
	selected := false
	for _, st := range s.Steps {
		selected = selected || st.Skip == spec.SkipNotSelected
		e, ok := rec.Steps[st.Name]
		if !ok || st.Excluded() || !run(st) {
			continue
		}
		if e.Untracked {
			notes = append(notes, fmt.Sprintf("step %q applies more objects than the state record tracks: what it no longer produces is not pruned", st.Name))
			continue
		}
		items := slices.Clone(e.Orphans)
		if keys, ok := still(st); ok {
			for _, o := range e.Inventory {
				if !keys[o.Key()] {
					items = append(items, o)
				}
			}
		}
		g := Group{Step: st.Name, InSpec: true, Pos: s.PosOf(st.Path)}
		g.add(items, s.PruneOf(st))
		if len(g.Candidates) > 0 {
			groups = append(groups, g)
		}
	}
	gone := map[string]state.StepRecord{}
	for name, e := range rec.Steps {
		if s.Step(name) == nil && len(e.Leftovers(false)) > 0 {
			gone[name] = e
		}
	}
	if len(gone) > 0 && selected {
		names := slices.Sorted(maps.Keys(gone))
		notes = append(notes, fmt.Sprintf("this run selects steps: what %s left behind is pruned by a run of the whole spec", quoteList(names)))
		return groups, notes
	}
	for _, name := range reverseNeeds(gone) {
		e := gone[name]
		p := e.Prune.Policy()
		p.Disabled = p.Disabled || s.PruneDisabled()
		g := Group{Step: name}
		g.add(e.Leftovers(false), p)
		groups = append(groups, g)
	}
	return groups, notes
}

// add appends items last first: custom resources before their CRDs,
// objects before their namespaces, as they were applied in reverse.
func (g *Group) add(items []model.Owned, p spec.Prune) {
	for i := len(items) - 1; i >= 0; i-- {
		g.Candidates = append(g.Candidates, Candidate{Step: g.Step, InSpec: g.InSpec, Item: items[i], Policy: p})
	}
}

// reverseNeeds orders steps that left the spec so that a step comes before
// every step it needed: the reverse of the order they were applied in.
func reverseNeeds(steps map[string]state.StepRecord) []string {
	var order []string
	seen := map[string]bool{}
	var visit func(string)
	visit = func(n string) {
		if seen[n] {
			return
		}
		seen[n] = true
		needs := slices.Clone(steps[n].Needs)
		sort.Strings(needs)
		for _, dep := range needs {
			if _, ok := steps[dep]; ok {
				visit(dep)
			}
		}
		order = append(order, n)
	}
	for _, n := range slices.Sorted(maps.Keys(steps)) {
		visit(n)
	}
	slices.Reverse(order)
	return order
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return "step " + strings.Join(q, ", ")
}

// keysOf are the inventory keys of manifest objects. An object written
// without a namespace matches both the step's namespace and none: which
// one it gets depends on its kind's scope, and a key that matches too much
// only keeps an object.
func keysOf(objs []*unstructured.Unstructured, ns string) map[string]bool {
	keys := map[string]bool{}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		it := model.Owned{Group: gvk.Group, Kind: gvk.Kind, Namespace: o.GetNamespace(), Name: o.GetName()}
		if it.Namespace == "" {
			keys[it.Key()] = true
			it.Namespace = ns
		}
		keys[it.Key()] = true
	}
	return keys
}
