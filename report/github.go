package report

import (
	"fmt"
	"strings"

	"github.com/khook/khook/spec"
)

// Annotation levels, as GitHub names them.
const (
	AnnotationError   = "error"
	AnnotationWarning = "warning"
)

// MaxAnnotationsPerLevel is how many annotations of one level GitHub shows
// for a workflow step; khook folds the rest into the last one.
const MaxAnnotationsPerLevel = 10

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
func ResultsAnnotations(r *Results) []Annotation {
	var out []Annotation
	for _, s := range r.Steps {
		if s.Status != StatusFailed {
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
	return append(out, WarningAnnotations(ResultsWarnings(r))...)
}

// WarningAnnotations pins each API server warning to its step (a
// ::warning annotation), for apply's results and the plan alike.
func WarningAnnotations(steps []StepWarnings) []Annotation {
	var out []Annotation
	for _, s := range steps {
		for _, w := range s.Warnings {
			out = append(out, Annotation{Level: AnnotationWarning, Pos: s.Pos,
				Title: "khook: the API server warned about step " + s.Name, Message: w.String()})
		}
	}
	return out
}

// PlanAnnotations warns about steps the plan could not assess and, in
// drift mode, marks every step that drifted.
func PlanAnnotations(p *Plan, drift bool) []Annotation {
	var out []Annotation
	for _, s := range p.Steps {
		switch {
		case s.Action == ActionUnknown:
			out = append(out, Annotation{Level: AnnotationWarning, Pos: s.Pos,
				Title: "khook plan: step " + s.Name + " cannot be assessed yet", Message: s.Reason})
		case s.Action == ActionFail:
			out = append(out, Annotation{Level: AnnotationError, Pos: s.Pos,
				Title: "khook plan: step " + s.Name + " would fail on apply", Message: s.Reason})
		case drift && IsChange(s.Action):
			msg := s.Summary
			if s.Reason != "" {
				msg = s.Reason
			}
			out = append(out, Annotation{Level: AnnotationError, Pos: s.Pos,
				Title: fmt.Sprintf("khook drift: step %s would %s", s.Name, s.Action), Message: msg})
		}
	}
	for _, s := range p.Steps {
		for _, o := range s.Objects {
			if o.Action == ActionDelete && o.With != "" {
				out = append(out, Annotation{Level: AnnotationWarning, Pos: s.Pos,
					Title: "khook plan: step " + s.Name + " deletes CRD " + o.Name + " and " + o.With, Message: o.Reason})
			}
		}
	}
	return append(out, WarningAnnotations(PlanWarnings(p))...)
}

// LimitAnnotations keeps at most max annotations per level: past that, the
// last kept one says how many more there are and where.
func LimitAnnotations(as []Annotation, max int) []Annotation {
	if max < 1 {
		max = MaxAnnotationsPerLevel
	}
	byLevel := map[string][]Annotation{}
	var levels []string
	for _, a := range as {
		if _, ok := byLevel[a.Level]; !ok {
			levels = append(levels, a.Level)
		}
		byLevel[a.Level] = append(byLevel[a.Level], a)
	}
	var out []Annotation
	for _, lvl := range levels {
		list := byLevel[lvl]
		if len(list) <= max {
			out = append(out, list...)
			continue
		}
		out = append(out, list[:max-1]...)
		rest := list[max-1:]
		var lines []string
		for _, a := range rest {
			where := a.Pos.String()
			if where == "" {
				where = "(no position)"
			}
			head, _, _ := strings.Cut(a.Title+": "+a.Message, "\n")
			lines = append(lines, where+": "+head)
		}
		out = append(out, Annotation{Level: lvl, Pos: rest[0].Pos,
			Title:   fmt.Sprintf("khook: %d more %ss", len(rest), lvl),
			Message: fmt.Sprintf("%d more %ss (GitHub shows %d per step; the job summary lists them all):\n%s", len(rest), lvl, max, strings.Join(lines, "\n"))})
	}
	return out
}
