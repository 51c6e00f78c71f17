package report

import (
	"fmt"
	"strings"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
)

// Annotation levels, as GitHub names them.
const (
	AnnotationError   = "error"
	AnnotationWarning = "warning"
)

// Annotation is a message pinned to a line of the spec as written.
type Annotation struct {
	Level   string
	Pos     spec.Pos
	Title   string
	Message string
}

// ProblemAnnotations pins every validation problem to its field.
func ProblemAnnotations(ps spec.Problems) []Annotation {
	sorted := append(spec.Problems(nil), ps...)
	sorted.Sort()
	out := make([]Annotation, 0, len(sorted))
	for _, p := range sorted {
		msg := p.Message
		if p.Hint != "" {
			msg += " (" + p.Hint + ")"
		}
		title := "khook: invalid spec"
		if p.Path != "" {
			title += " at " + p.Path
		}
		out = append(out, Annotation{Level: AnnotationError, Pos: p.Pos, Title: title, Message: msg})
	}
	return out
}

// ResultsAnnotations pins every failed step's error to the step.
func ResultsAnnotations(r *model.Results) []Annotation {
	var out []Annotation
	for _, s := range r.Steps {
		if s.Status != model.StatusFailed {
			continue
		}
		msg := s.Error
		if tail := s.LogTailNotInError(); len(tail) > 0 {
			msg += "\n\nlast pod log lines:\n" + strings.Join(tail, "\n")
		}
		title := fmt.Sprintf("khook %s: step %s failed", r.Command, s.Name)
		if d := s.Diagnosis; d != nil && d.Reason != "" {
			title += ": " + d.Reason
		}
		msg += s.Diagnosis.Text("\n\n")
		out = append(out, Annotation{Level: AnnotationError, Pos: s.Pos, Title: title, Message: msg})
	}
	return append(out, WarningAnnotations(model.ResultsWarnings(r))...)
}

// WarningAnnotations pins each warning to its step (a ::warning
// annotation), titled by whose it is, for apply's results and the plan
// alike.
func WarningAnnotations(steps []model.StepWarnings) []Annotation {
	var out []Annotation
	for _, s := range steps {
		title := "khook: the API server warned about step " + s.Name
		if s.From == model.WarnerKhook {
			title = "khook warned about step " + s.Name
		}
		for _, w := range s.Warnings {
			out = append(out, Annotation{Level: AnnotationWarning, Pos: s.Pos, Title: title, Message: w.String()})
		}
	}
	return out
}

// PlanAnnotations warns about steps the plan could not assess and, in
// drift mode, marks every step that drifted.
func PlanAnnotations(p *model.Plan, drift bool) []Annotation {
	var out []Annotation
	for _, s := range p.Steps {
		switch {
		case s.Action == model.ActionUnknown:
			out = append(out, Annotation{Level: AnnotationWarning, Pos: s.Pos,
				Title: "khook plan: step " + s.Name + " cannot be assessed yet", Message: s.Reason})
		case s.Action == model.ActionFail:
			out = append(out, Annotation{Level: AnnotationError, Pos: s.Pos,
				Title: "khook plan: step " + s.Name + " would fail on apply", Message: s.Reason})
		case drift && s.Drifted():
			msg := s.Summary
			if s.Reason != "" {
				msg = s.Reason
			}
			title := fmt.Sprintf("khook drift: step %s would %s", s.Name, s.Action)
			if !model.IsChange(s.Action) {
				title = fmt.Sprintf("khook drift: step %s's chart %s was re-published", s.Name, s.ChartMoved.Version)
			}
			out = append(out, Annotation{Level: AnnotationError, Pos: s.Pos, Title: title, Message: msg})
		}
	}
	for _, s := range p.Steps {
		for _, o := range s.Objects {
			if o.Action == model.ActionDelete && o.With != "" {
				out = append(out, Annotation{Level: AnnotationWarning, Pos: s.Pos,
					Title: "khook plan: step " + s.Name + " deletes " + o.Deleted() + " and " + o.With, Message: o.Reason})
			}
		}
	}
	return append(out, WarningAnnotations(model.PlanWarnings(p))...)
}
