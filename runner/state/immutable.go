package state

import (
	"fmt"
	"sort"
	"strings"

	"github.com/khook/khook/spec"
)

// ImmutableError refuses a run that changes an input declared
// immutable: true (the cluster name, a region) since the record's last run.
type ImmutableError struct {
	Ref     Ref
	Changes []ImmutableChange
}

// ImmutableChange is one immutable input whose value differs.
type ImmutableChange struct {
	Name, Recorded, Now string
}

func (e *ImmutableError) Error() string {
	parts := make([]string, len(e.Changes))
	for i, c := range e.Changes {
		parts[i] = fmt.Sprintf("%s was %q and is now %q", c.Name, c.Recorded, c.Now)
	}
	noun := "an immutable input"
	if len(e.Changes) > 1 {
		noun = "immutable inputs"
	}
	return fmt.Sprintf("refusing to run: this run changes %s recorded in %s: %s. An immutable input is fixed once a run has used it; run khook destroy first (it deletes the record), or pass the recorded value",
		noun, e.Ref.describe(), strings.Join(parts, "; "))
}

// immutableInputs are the values of the inputs s declares immutable.
func immutableInputs(s *spec.Spec) map[string]string {
	if s.Declared == nil {
		return nil
	}
	out := map[string]string{}
	for _, v := range s.Declared.Vars {
		if v.Immutable {
			out[v.Name] = v.Value
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// checkImmutable compares this run's immutable inputs with the previous
// record's. An input the previous record does not hold (a new declaration,
// the first run) is recorded, not refused.
func checkImmutable(ref Ref, prev *Record, now map[string]string) error {
	if prev == nil {
		return nil
	}
	var changes []ImmutableChange
	for name, v := range now {
		if old, ok := prev.Inputs[name]; ok && old != v {
			changes = append(changes, ImmutableChange{Name: name, Recorded: old, Now: v})
		}
	}
	if len(changes) == 0 {
		return nil
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Name < changes[j].Name })
	return &ImmutableError{Ref: ref, Changes: changes}
}
