package plan

// Diff notes (model.PlanStep.DiffNote).
const (
	NoteNoChanges = "no changes"
)

// unavailable is the note of a diff that could not be computed; the plan
// still succeeds.
func unavailable(reason string) string { return "unavailable (" + reason + ")" }
