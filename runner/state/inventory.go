package state

import (
	"slices"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
)

// maxInventory bounds one step's inventory: the record is one Secret (1 MiB)
// rewritten after every step. A step that applies more is not tracked, and
// the plan says its leftovers are not pruned.
const maxInventory = 2000

// PruneRecord is the prune: in force for a step when it last ran, so a step
// that left the spec is pruned as it asked.
type PruneRecord struct {
	Off        bool `json:"off,omitempty"`
	CRDs       bool `json:"crds,omitempty"`
	Namespaces bool `json:"namespaces,omitempty"`
	Data       bool `json:"data,omitempty"`
}

// Policy is the record as the spec's type.
func (p *PruneRecord) Policy() spec.Prune {
	if p == nil {
		return spec.Prune{}
	}
	return spec.Prune{Disabled: p.Off, CRDs: p.CRDs, Namespaces: p.Namespaces, Data: p.Data}
}

func pruneRecord(p spec.Prune) *PruneRecord {
	if p == (spec.Prune{}) {
		return nil
	}
	return &PruneRecord{Off: p.Disabled, CRDs: p.CRDs, Namespaces: p.Namespaces, Data: p.Data}
}

// Release is the release a step puts in the cluster (the spec's defaults
// name a helm step's after the step, in namespace default); ok is false for
// a step that installs none.
func Release(st *spec.Step) (model.Owned, bool) {
	b := st.Block()
	if b == nil {
		return model.Owned{}, false
	}
	name, ns, ok := b.HelmRelease()
	return model.Owned{Kind: model.KindRelease, Namespace: ns, Name: name}, ok
}

// inventoryOf is what the step's result says it put in the cluster; ok is
// false when the result took no inventory (the previous one stands).
func inventoryOf(st *spec.Step, res model.StepResult) ([]model.Owned, bool) {
	ran := res.Status == model.StatusOK || (res.Status == model.StatusSkipped && res.Attempts > 0)
	if st == nil || !ran {
		return nil, false
	}
	if rel, ok := Release(st); ok { // skipIf: installed holds only with the release there
		return []model.Owned{rel}, true
	}
	switch {
	case res.Inventory != nil:
		return res.Inventory.Items, true
	}
	return nil, false
}

// Leftovers are what the record says a step put in the cluster that it
// no longer produces: the orphans of its earlier runs, and for a step that
// left the spec its whole inventory.
func (e StepRecord) Leftovers(inSpec bool) []model.Owned {
	if inSpec {
		return e.Orphans
	}
	return append(append([]model.Owned(nil), e.Inventory...), e.Orphans...)
}

// track records a run's inventory in e: what the step no longer produces
// becomes an orphan, to be pruned after the remaining steps.
func track(e *StepRecord, prev StepRecord, now []model.Owned) {
	keep := map[string]bool{}
	for _, o := range now {
		keep[o.Key()] = true
	}
	// Adopted stays as khook first found the object: a later apply sees
	// its own fields there.
	was := map[string]model.Owned{}
	for _, o := range append(append([]model.Owned(nil), prev.Orphans...), prev.Inventory...) {
		was[o.Key()] = o
	}
	now = slices.Clone(now)
	for i, o := range now {
		if p, ok := was[o.Key()]; ok && p.UID == o.UID {
			now[i].Adopted = p.Adopted
		}
	}
	e.Orphans = nil
	seen := map[string]bool{}
	for _, o := range append(append([]model.Owned(nil), prev.Inventory...), prev.Orphans...) {
		if !keep[o.Key()] && !seen[o.Key()] {
			seen[o.Key()] = true
			e.Orphans = append(e.Orphans, o)
		}
	}
	e.Inventory = now
	e.Untracked = false
	if len(e.Inventory)+len(e.Orphans) > maxInventory {
		e.Inventory, e.Orphans, e.Untracked = nil, nil, true
	}
}

// Forget drops pruned (or kept for good) objects from a step's entry; a
// step that left the spec and has nothing left drops out of the record.
func (s *Session) Forget(step string, gone []model.Owned, inSpec bool) {
	if s == nil || len(gone) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.record.Steps[step]
	if !ok {
		return
	}
	drop := map[string]bool{}
	for _, o := range gone {
		drop[o.Key()] = true
	}
	e.Orphans = without(e.Orphans, drop)
	if !inSpec {
		e.Inventory = without(e.Inventory, drop)
	}
	if !inSpec && len(e.Inventory) == 0 && len(e.Orphans) == 0 {
		delete(s.record.Steps, step)
	} else {
		s.record.Steps[step] = e
	}
	s.record.UpdatedAt = s.now().UTC()
	s.saveLocked()
}

func without(list []model.Owned, drop map[string]bool) []model.Owned {
	var out []model.Owned
	for _, o := range list {
		if !drop[o.Key()] {
			out = append(out, o)
		}
	}
	return out
}
