package state

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/spec"
)

// secretInputPrefix marks a recorded immutable input that is a secret: the
// record holds its hash, never the value.
const secretInputPrefix = "secret-sha256:"

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
		parts[i] = fmt.Sprintf("%s was %s and is now %s", c.Name, shownInput(c.Recorded), shownInput(c.Now))
	}
	noun := "an immutable input"
	if len(e.Changes) > 1 {
		noun = "immutable inputs"
	}
	return fmt.Sprintf("refusing to run: this run changes %s recorded in %s: %s. An immutable input is fixed once a run has used it; run khook destroy first (it deletes the record), or pass the recorded value",
		noun, e.Ref.describe(), strings.Join(parts, "; "))
}

// shownInput quotes a recorded input for a message; a secret one is masked.
func shownInput(v string) string {
	if strings.HasPrefix(v, secretInputPrefix) {
		return "a secret value (" + redact.Mask + ")"
	}
	return fmt.Sprintf("%q", v)
}

// immutableInputs are the values of the inputs s declares immutable, as the
// record keeps them: a value the redactor knows as a secret is replaced by
// its hash, so the record never holds it.
func immutableInputs(s *spec.Spec, rd *redact.Redactor) map[string]string {
	if s.Declared == nil {
		return nil
	}
	out := map[string]string{}
	for _, v := range s.Declared.Vars {
		if !v.Immutable {
			continue
		}
		out[v.Name] = v.Value
		if v.Value != "" && rd.String(v.Value) != v.Value {
			sum := sha256.Sum256([]byte(v.Value))
			out[v.Name] = secretInputPrefix + hex.EncodeToString(sum[:])
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

// FailureReason files the refusal with the spec's other input problems.
func (e *ImmutableError) FailureReason() string { return model.ReasonValidation }
