package model

import (
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
