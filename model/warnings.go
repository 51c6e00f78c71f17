package model

import (
	"github.com/khook/khook/spec"
)

// StepWarnings are one step's warnings of one warner (the API server's or
// khook's) and where the step is.
type StepWarnings struct {
	Name     string
	Pos      spec.Pos
	From     Warner
	Warnings []Warning
}

// ResultsWarnings are the warnings of a run's steps: per step, the API
// server's, then khook's.
func ResultsWarnings(r *Results) []StepWarnings {
	var out []StepWarnings
	for _, s := range r.Steps {
		out = append(out, byWarner(s.Name, s.Pos, s.Warnings)...)
	}
	return out
}

// PlanWarnings are the warnings of a plan's steps: per step, the API
// server's, then khook's.
func PlanWarnings(p *Plan) []StepWarnings {
	var out []StepWarnings
	for _, s := range p.Steps {
		out = append(out, byWarner(s.Name, s.Pos, s.Warnings)...)
	}
	return out
}

// byWarner splits a step's warnings by whose they are.
func byWarner(name string, pos spec.Pos, ws []Warning) []StepWarnings {
	var server, own []Warning
	for _, w := range ws {
		if w.ByAPIServer() {
			server = append(server, w)
		} else {
			own = append(own, w)
		}
	}
	var out []StepWarnings
	if len(server) > 0 {
		out = append(out, StepWarnings{name, pos, WarnerAPIServer, server})
	}
	if len(own) > 0 {
		out = append(out, StepWarnings{name, pos, WarnerKhook, own})
	}
	return out
}

// APIServerWarnings are those of ws the API server sent: the ones
// --warnings-as-errors fails on.
func APIServerWarnings(ws []Warning) []Warning {
	var out []Warning
	for _, w := range ws {
		if w.ByAPIServer() {
			out = append(out, w)
		}
	}
	return out
}

// ByAPIServer is whether the API server sent w. A warning of no warner (in
// a plan file saved before warnings said whose) is the server's, as every
// warning then was meant to be, so --warnings-as-errors still fails on it.
func (w Warning) ByAPIServer() bool { return w.From != WarnerKhook }
