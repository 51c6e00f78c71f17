package shscript

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/khook/khook/internal/importer"
	"github.com/khook/khook/words"
)

// writeValid writes the model and checks it as `khook validate` would:
// it loads, and check (Options.Check) finds nothing wrong in what its
// steps apply and render. A step either refuses is dropped and named not
// carried at its line, with the reason, and the rest written again: the
// import never fails on its own translation of one command.
func (t *translator) writeValid(check importer.Check) ([]byte, error) {
	m := t.m
	build := func() *importer.Model {
		t.literalSecrets(m)
		t.echoedSecrets(m)
		secretsInSecrets(m)
		pruneVars(m)
		t.sayAbsentVars(m)
		importer.SortNotes(m.NotCarried)
		importer.SortNotes(m.Info)
		return m
	}
	return importer.WriteChecked(build, t.dropRefused, check)
}

// dropRefused drops each step a problem's path names (steps.N…); false
// when no problem names a step. Problems found only with stand-in values
// are said at their step's line instead.
func (t *translator) dropRefused(m *importer.Model, probs []importer.Problem, by importer.Finding) bool {
	first, count, removed := map[int]importer.Problem{}, map[int]int{}, map[int][]string{}
	for _, p := range probs {
		if i := importer.StepOf(p.Path); i >= 0 && i < len(m.Steps) {
			if count[i]++; count[i] == 1 {
				first[i] = p
			}
			if strings.Contains(p.Message, " was removed in ") {
				removed[i] = append(removed[i], p.Message)
			}
		}
	}
	if by == importer.Validating && (t.inlineAccepted(m, probs) || t.dropRefusedFiles(m, probs)) {
		return true
	}
	refused := map[int]string{}
	for i := range m.Steps {
		p, ok := first[i]
		switch {
		case !ok:
		case by == importer.StandIn:
			m.Info = append(m.Info, importer.Note{Loc: m.Steps[i].From, What: "step " + m.Steps[i].Out.Name, Why: t.masked(importer.StandInWhy(m, i, p))})
		case by == importer.Validating && m.Steps[i].Out.Apply != nil && len(removed[i]) == count[i] && count[i] > 1:
			// every object kubectl refuses, named; it creates the others
			// (trial 46s68e's D3: one named, "(and 9 more problems)")
			p.Message = removedList(removed[i])
			refused[i] = strings.Replace(importer.CheckWhy(m, i, p, 0), "'s own apply fails on a current cluster too", "'s own kubectl refuses these objects on a current cluster too (and applies the others)", 1)
		case by == importer.Validating:
			refused[i] = importer.CheckWhy(m, i, p, count[i]-1)
		default:
			field := strings.TrimPrefix(p.Path, fmt.Sprintf("steps.%d.", i)) + ": "
			if field == p.Path+": " { // found at the step's line only, with a hint (trial 46s68n's D2)
				field, p.Message = "", strings.TrimSuffix(p.Message+" ("+p.Hint+")", " ()")
			}
			refused[i] = "khook's spec refuses the step made of it (" + field + strings.TrimPrefix(p.Message, p.Path+": ") + "); write this step by hand"
		}
	}
	if len(refused) == 0 {
		return by == importer.StandIn
	}
	for i := range refused {
		if t.ends[m.Steps[i].Out] && strings.Contains(first[i].Message, " was removed in ") {
			refused[i] += neverReached(m, i, refused)
		}
	}
	gone := map[string][]string{} // a dropped step's name → what it needed
	kept := m.Steps[:0]
	for i, st := range m.Steps {
		why, drop := refused[i]
		if !drop {
			kept = append(kept, st)
			continue
		}
		why = t.masked(why) + st.Call // which call of a function (trial 46s67k's D7)
		gone[st.Out.Name] = st.Out.Needs
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
	m.Info = slices.DeleteFunc(m.Info, func(n importer.Note) bool { return namesStep(n, gone) })
	return true
}

// dropRefusedFiles: an apply step of several files (-f DIR) where the
// problems are removed API versions in some of them keeps the others, as
// kubectl applies those and refuses only these (trial 46s68b's D3: the
// whole command dropped, its Deployment and Services with it); false
// when no step is so.
func (t *translator) dropRefusedFiles(m *importer.Model, probs []importer.Problem) bool {
	bad := map[int]map[int]string{} // step → manifest → the problem
	msgs := map[int][]string{}      // step → every refused object, in order
	whole := map[int]bool{}
	for _, p := range probs {
		i := importer.StepOf(p.Path)
		if i < 0 || i >= len(m.Steps) || m.Steps[i].Out.Apply == nil || len(m.Steps[i].Out.Apply.Manifests) < 2 {
			continue
		}
		var j int
		if _, err := fmt.Sscanf(strings.TrimPrefix(p.Path, fmt.Sprintf("steps.%d.", i)), "apply.manifests.%d", &j); err != nil || !strings.Contains(p.Message, " was removed in ") {
			whole[i] = true
			continue
		}
		if bad[i] == nil {
			bad[i] = map[int]string{}
		}
		bad[i][j] = p.Message
		msgs[i] = append(msgs[i], p.Message)
	}
	dropped := false
	for i, files := range bad {
		a := m.Steps[i].Out.Apply
		if whole[i] || len(files) >= len(a.Manifests) {
			continue
		}
		var names, kept []importer.OutSource
		for j, src := range a.Manifests {
			if _, ok := files[j]; ok {
				names = append(names, src)
			} else {
				kept = append(kept, src)
			}
		}
		then := "the script goes on past that error"
		if t.ends[m.Steps[i].Out] {
			then = "under set -e the script stops there, so bash never runs what comes after it"
		}
		var what []string
		for _, src := range names {
			what = append(what, cmpOr(src.File, src.URL))
		}
		first := removedList(msgs[i])
		m.NotCarried = append(m.NotCarried, importer.Note{Loc: m.Steps[i].From, What: strings.Join(what, ", "),
			Why: t.masked(strings.Join(what, ", ") + words.Plural(len(what), " holds", " hold") + " an API version the cluster no longer serves (" + first + "): kubectl refuses " + words.Plural(len(what), "it", "them") + " after it applies the others, and " + then + "; the step applies the others (update " + words.Plural(len(what), "it", "them") + " to the API version named, and import again)")})
		a.Manifests = kept
		dropped = true
	}
	return dropped
}

// removedList names the objects of removed API versions kubectl refuses,
// each with its reason, short; past five, the rest by name and count.
func removedList(msgs []string) string {
	const bound = 5
	k8s := regexp.MustCompile(` \(Kubernetes v[0-9.]+\)$`)
	at := k8s.FindString(msgs[0])
	var each, more []string
	for i, msg := range msgs {
		msg = k8s.ReplaceAllString(msg, "")
		if i < bound || len(msgs) == bound+1 {
			each = append(each, msg)
		} else {
			more = append(more, strings.SplitN(msg, ": ", 2)[0])
		}
	}
	out := strings.Join(each, "; ")
	if len(more) > 0 {
		out += "; and " + strconv.Itoa(len(more)) + " more: " + strings.Join(more, ", ")
	}
	return out + at
}

// namesStep: the note is about a step that is gone (the script ignores
// its failure, a sleep carried as its wait: true).
func namesStep(n importer.Note, gone map[string][]string) bool {
	for name := range gone {
		if regexp.MustCompile(`\bstep ` + regexp.QuoteMeta(name) + `([^-a-z0-9]|$)`).MatchString(n.What + "\n" + n.Why) {
			return true
		}
	}
	return false
}

// masked is s with every literal secret the script holds replaced.
func (t *translator) masked(s string) string { return t.rd.String(s) }

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

// neverReached says what bash never runs after step i, which a removed
// API version ends under set -e (46zz's N1): the helm/kubectl commands
// after it, and of them the steps this spec still carries; counted as
// commands, since the steps after it may be refused too and nothing
// written (trial 46s67j's D3: "the 1 step this spec carries after it").
func neverReached(m *importer.Model, i int, refused map[int]string) string {
	last := -1
	for j, c := range m.Commands {
		if c.Step == m.Steps[i].Out.Name {
			last = j
		}
	}
	kept := 0
	for j := i + 1; j < len(m.Steps); j++ {
		if _, gone := refused[j]; !gone {
			kept++
		}
	}
	after := len(m.Commands) - 1 - last
	if last < 0 || after == 0 {
		return ""
	}
	why := "; under set -e bash ends there on such a cluster, so it never runs the " + words.Count(after, "helm/kubectl command", "helm/kubectl commands") + " after it"
	switch {
	case kept == 1 && after == 1:
		why += ", a step this spec carries"
	case kept > 0 && kept == after:
		why += ", each a step this spec carries"
	case kept > 0:
		why += ", " + strconv.Itoa(kept) + " of them " + words.Plural(kept, "a step", "steps") + " this spec carries"
	}
	return why
}
