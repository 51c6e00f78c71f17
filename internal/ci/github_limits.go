package ci

import (
	"fmt"
	"strings"

	"github.com/khook/khook/report"
)

// githubCommentMaxBytes bounds a GitHub comment or issue body: GitHub takes
// 65,536 characters, bytes are never fewer than characters, and 1 KiB is
// left for the status line and marker (GitLab's is gitlabNoteMaxBytes).
const githubCommentMaxBytes = 65536 - 1024

// MaxAnnotationsPerLevel is how many annotations of one level GitHub shows
// for a workflow step; khook folds the rest into the last one. Which
// annotations khook keeps is khook ci's platform policy: report's
// renderers build them all.
const MaxAnnotationsPerLevel = 10

// LimitAnnotations keeps at most max annotations per level: past that, the
// last kept one says how many more there are and where.
func LimitAnnotations(as []report.Annotation, max int) []report.Annotation {
	if max < 1 {
		max = MaxAnnotationsPerLevel
	}
	byLevel := map[string][]report.Annotation{}
	var levels []string
	for _, a := range as {
		if _, ok := byLevel[a.Level]; !ok {
			levels = append(levels, a.Level)
		}
		byLevel[a.Level] = append(byLevel[a.Level], a)
	}
	var out []report.Annotation
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
		out = append(out, report.Annotation{Level: lvl, Pos: rest[0].Pos,
			Title:   fmt.Sprintf("khook: %d more %ss", len(rest), lvl),
			Message: fmt.Sprintf("%d more %ss (GitHub shows %d per step; the job summary lists them all):\n%s", len(rest), lvl, max, strings.Join(lines, "\n"))})
	}
	return out
}
