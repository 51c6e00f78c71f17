package shscript

import (
	"fmt"
	"strings"

	"github.com/khook/khook/internal/importer"
)

// writeValid writes the model and checks it as `khook validate` would. A
// step the spec refuses is dropped and named not carried at its line,
// with the field and the reason, and the rest written again: the import
// never fails on its own translation of one command.
func writeValid(m *importer.Model) ([]byte, error) {
	build := func() *importer.Model {
		pruneVars(m)
		importer.SortNotes(m.NotCarried)
		importer.SortNotes(m.Info)
		return m
	}
	return importer.WriteChecked(build, dropRefused)
}

// dropRefused drops each step a problem's path names (steps.N…); false
// when no problem names a step.
func dropRefused(m *importer.Model, probs []importer.Problem) bool {
	refused := map[int]string{}
	for _, p := range probs {
		var i int
		if _, err := fmt.Sscanf(p.Path, "steps.%d", &i); err != nil || i < 0 || i >= len(m.Steps) {
			continue
		}
		if _, ok := refused[i]; !ok {
			field := strings.TrimPrefix(p.Path, fmt.Sprintf("steps.%d.", i))
			refused[i] = field + ": " + strings.TrimPrefix(p.Message, p.Path+": ")
		}
	}
	if len(refused) == 0 {
		return false
	}
	gone := map[string][]string{} // a dropped step's name → what it needed
	kept := m.Steps[:0]
	for i, st := range m.Steps {
		why, drop := refused[i]
		if !drop {
			kept = append(kept, st)
			continue
		}
		gone[st.Out.Name] = st.Out.Needs
		why = "khook's spec refuses the step made of it (" + why + "); write this step by hand"
		text := "step " + st.Out.Name
		for j, c := range m.Commands {
			if c.Step == st.Out.Name {
				m.Commands[j].Fate, m.Commands[j].Step, m.Commands[j].Why, text = importer.FateNotCarried, "", why, c.Text
			}
		}
		m.NotCarried = append(m.NotCarried, importer.Note{Loc: st.From, What: text, Why: why})
	}
	m.Steps = kept
	for _, st := range m.Steps {
		st.Out.Needs = rewire(st.Out.Needs, gone)
	}
	return true
}

// rewire replaces needs on dropped steps by what those needed.
func rewire(needs []string, gone map[string][]string) []string {
	var out []string
	for _, n := range needs {
		if before, ok := gone[n]; ok {
			out = append(out, rewire(before, gone)...)
			continue
		}
		out = append(out, n)
	}
	return out
}
