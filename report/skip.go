package report

import (
	"github.com/khook/khook/spec"
)

// excludedNote is how the progress views mark a step left out before the
// run.
func excludedNote(s spec.Skip) string {
	if s == spec.SkipNotSelected {
		return "not selected"
	}
	return "excluded by when:"
}

// skippedLabel is how the graphs label a step left out before the run.
func skippedLabel(s spec.Skip) string {
	if s == spec.SkipNotSelected {
		return "not selected"
	}
	return "skipped"
}
