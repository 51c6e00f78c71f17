package spec

// Skip is why a step does not run ("" when it runs): the one vocabulary of
// skip reasons from the spec (when:, selection) through the engine (skipIf,
// the state record, failed needs) to the results and every renderer, which
// decide from it rather than from the reason's text.
type Skip string

const (
	// SkipWhen: its when: evaluated to false at load time.
	SkipWhen Skip = "when"
	// SkipNotSelected: step selection left it out of this run.
	SkipNotSelected Skip = "not-selected"
	// SkipIf: its skipIf held at run time (the step succeeded without
	// acting).
	SkipIf Skip = "skipIf"
	// SkipResumed: the state record shows it succeeded with the same inputs.
	SkipResumed Skip = "resumed"
	// SkipBlocked: a step it needs failed, did not run or does not exist.
	SkipBlocked Skip = "blocked"
	// SkipStopped: the run stopped before it (a failure, a cancellation or a
	// cycle in needs).
	SkipStopped Skip = "stopped"
)

// Excluded reports whether the step is left out before the run (when:
// false, not selected): plan shows it excluded and apply never starts it.
func (s Skip) Excluded() bool { return s == SkipWhen || s == SkipNotSelected }

// Excluded reports whether the step is left out of this run (Skip.Excluded).
func (s *Step) Excluded() bool { return s.Skip.Excluded() }

// ExcludedBecause says why the step is left out of this run, for people
// ("when vars.ENV == "prod" is false", "not selected"); "" when it runs.
func (s *Step) ExcludedBecause() string {
	switch s.Skip {
	case SkipWhen:
		return "when " + s.When + " is false"
	case SkipNotSelected:
		return "not selected"
	}
	return ""
}
