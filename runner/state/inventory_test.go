package state

import (
	"testing"

	"github.com/khook/khook/model"
)

func cm(name string) model.Owned {
	return model.Owned{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: name, UID: "uid-" + name}
}

// What a step no longer produces becomes an orphan until pruned; a new
// apiVersion of the same object is the same object.
func TestTrackOrphans(t *testing.T) {
	prev := StepRecord{Inventory: []model.Owned{cm("a"), cm("b")}, Orphans: []model.Owned{cm("old"), cm("a")}}
	moved := cm("a")
	moved.Version = "v2"
	var e StepRecord
	track(&e, prev, []model.Owned{moved})
	if len(e.Inventory) != 1 || e.Inventory[0] != moved {
		t.Errorf("inventory = %+v", e.Inventory)
	}
	if len(e.Orphans) != 2 || e.Orphans[0].Name != "b" || e.Orphans[1].Name != "old" {
		t.Errorf("orphans = %+v, want b, old", e.Orphans)
	}
	if got := (StepRecord{Inventory: []model.Owned{cm("x")}, Orphans: []model.Owned{cm("y")}}).Leftovers(false); len(got) != 2 {
		t.Errorf("a step that left the spec leaves everything: %+v", got)
	}
}

// The record stays bounded: a step that applies more than it keeps is
// untracked, never half tracked.
func TestTrackBounded(t *testing.T) {
	items := make([]model.Owned, maxInventory+1)
	for i := range items {
		items[i] = cm(string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676)))
	}
	var e StepRecord
	track(&e, StepRecord{}, items)
	if !e.Untracked || e.Inventory != nil || e.Orphans != nil {
		t.Errorf("untracked %v, %d items kept", e.Untracked, len(e.Inventory))
	}
}

// Adopted is how khook first found the object: kept while the UID is the
// same, dropped for a new object of the same name.
func TestTrackAdopted(t *testing.T) {
	found := cm("a")
	found.Adopted = true
	var e StepRecord
	track(&e, StepRecord{Inventory: []model.Owned{found}}, []model.Owned{cm("a")})
	if !e.Inventory[0].Adopted {
		t.Error("an adopted object became khook's on the next apply")
	}
	fresh := cm("a")
	fresh.UID = "another"
	track(&e, StepRecord{Inventory: []model.Owned{found}}, []model.Owned{fresh})
	if e.Inventory[0].Adopted {
		t.Error("an object khook re-created is still marked adopted")
	}
}
