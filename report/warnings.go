package report

import (
	"bytes"
	"fmt"

	"github.com/khook/khook/spec"
)

// StepWarnings are one step's API server warnings and where the step is.
type StepWarnings struct {
	Name     string
	Pos      spec.Pos
	Warnings []Warning
}

// ResultsWarnings are the warnings of a run's steps.
func ResultsWarnings(r *Results) []StepWarnings {
	var out []StepWarnings
	for _, s := range r.Steps {
		if len(s.Warnings) > 0 {
			out = append(out, StepWarnings{s.Name, s.Pos, s.Warnings})
		}
	}
	return out
}

// PlanWarnings are the warnings of a plan's steps.
func PlanWarnings(p *Plan) []StepWarnings {
	var out []StepWarnings
	for _, s := range p.Steps {
		if len(s.Warnings) > 0 {
			out = append(out, StepWarnings{s.Name, s.Pos, s.Warnings})
		}
	}
	return out
}

// writeWarnings prints "warning: Deployment shop/web: <message>" lines.
func writeWarnings(b *bytes.Buffer, indent string, ws []Warning) {
	for _, w := range ws {
		fmt.Fprintf(b, "%swarning: %s\n", indent, w.String())
	}
}

// writeStepWarnings prints every step's warnings after a run's table.
func writeStepWarnings(b *bytes.Buffer, r *Results) {
	for _, s := range ResultsWarnings(r) {
		fmt.Fprintf(b, "\nstep %s: the API server warned:\n", s.Name)
		writeWarnings(b, "    ", s.Warnings)
	}
}
