package helmfile

import (
	"slices"

	"github.com/khook/khook/internal/importer"
)

// write renders the spec through the import model's one writer, checks
// it as validate would (a step the spec or validate's check refuses drops
// its hook, or turns its release refused, and the spec is written again),
// and settles every verdict.
func (c *converter) write(name string) ([]byte, error) {
	c.references()
	c.literalSecrets()
	refused := map[*rel]string{}
	var index map[int]*rel
	build := func() *importer.Model {
		var m *importer.Model
		m, index = c.model(name, refused)
		return m
	}
	return importer.WriteChecked(build, func(m *importer.Model, probs []importer.Problem, by importer.Finding) bool {
		if by == importer.StandIn {
			c.sayStandIns(m, probs, index)
			return true
		}
		if c.dropRefusedHooks(probs, index, m, by) {
			return true
		}
		n := len(refused)
		for _, p := range probs {
			if i := importer.StepOf(p.Path); index[i] != nil {
				if _, ok := refused[index[i]]; !ok {
					refused[index[i]] = refusal(m, i, p, by, "its step")
				}
			}
		}
		if len(refused) == n {
			return false
		}
		c.dropNeedsOf(refused)
		return true
	}, c.opts.Check)
}

// refusal is why step i, of a release or a hook (whose), is not carried:
// the spec refuses it, or khook validate what it applies or renders.
func refusal(m *importer.Model, i int, p importer.Problem, by importer.Finding, whose string) string {
	if by == importer.Validating {
		return importer.CheckWhy(m, i, p, 0)
	}
	return "the khook spec refuses " + whose + ": " + p.Message
}

// sayStandIns says, under the release, each problem khook validate finds
// only with stand-in values for the variables its step reads.
func (c *converter) sayStandIns(m *importer.Model, probs []importer.Problem, index map[int]*rel) {
	seen := map[int]bool{}
	for _, p := range probs {
		if i := importer.StepOf(p.Path); index[i] != nil && !seen[i] {
			seen[i] = true
			r := index[i]
			r.out.Info = append(r.out.Info, Note{Loc: c.fromOr(m.Steps[i].Out, r, "chart"), What: "release " + r.out.Resolved.Name + ": step " + m.Steps[i].Out.Name, Why: importer.StandInWhy(m, i, p)})
		}
	}
}

// model is the import model of the releases not refused, in order: each
// release's before hooks, its step, its after hooks; index maps a step's
// position to its release. The verdicts are settled first, so the notes
// are final.
func (c *converter) model(name string, refused map[*rel]string) (*importer.Model, map[int]*rel) {
	m := &importer.Model{Source: c.top + " (environment " + c.opts.Environment + ")", Tool: "khook import helmfile", Dir: c.specDir, Name: name, Vars: c.res.Vars, Commands: c.commands, ChartCRDs: c.chartCRDs}
	index := map[int]*rel{}
	hooks := func(steps []*importer.OutStep) {
		for _, st := range steps {
			m.Steps = append(m.Steps, &importer.Step{From: c.from[st], Out: st})
		}
	}
	for _, r := range c.rels {
		g := r.global
		if g != nil && g.rels[0] == r {
			hooks(g.prepare) // before the helmfile's first release
		}
		if _, ok := refused[r]; !ok {
			for _, st := range r.steps() {
				index[len(m.Steps)] = r
				from, ok := c.from[st]
				if !ok {
					from = importer.Loc{File: r.st.file, Line: r.line}
				}
				m.Steps = append(m.Steps, &importer.Step{From: from, Out: st})
			}
		}
		if g != nil && g.rels[len(g.rels)-1] == r {
			hooks(g.cleanup) // after its last
		}
	}
	for _, g := range c.globals {
		if len(g.rels) == 0 { // a helmfile without releases of its own
			hooks(g.prepare)
			hooks(g.cleanup)
		}
	}
	c.verdicts(refused)
	c.maskNotes()
	m.NotCarried = append(m.NotCarried, c.res.NotCarried...)
	m.Info = append(m.Info, c.res.Info...)
	gone := map[*Release]bool{}
	for r := range refused {
		gone[r.out] = true
	}
	for _, r := range c.res.Releases {
		m.NotCarried = append(m.NotCarried, r.NotCarried...)
		if !gone[r] { // a refused release's differences are moot
			m.Info = append(m.Info, r.Info...)
		}
	}
	m.Commands = c.goneCommands(m.Commands, refused)
	return m, index
}

// goneCommands are the hook commands' fates with those whose step went
// with its refused release not carried (trial 46y's D1: counted "became
// steps", no such step written).
func (c *converter) goneCommands(cmds []importer.Command, refused map[*rel]string) []importer.Command {
	at := map[importer.Loc]string{}
	for r := range refused {
		for _, st := range append(slices.Clone(r.before), r.after...) {
			if loc, ok := c.from[st]; ok {
				at[loc] = r.out.Resolved.Name
			}
		}
	}
	out := slices.Clone(cmds)
	for i, cmd := range out {
		if rel, ok := at[cmd.Loc]; ok && cmd.Fate != importer.FateNotCarried {
			out[i].Fate, out[i].Step, out[i].Why = importer.FateNotCarried, "", "a hook of release "+rel+", which is not carried"
		}
	}
	return out
}

// dropRefusedHooks drops each hook's step the spec refuses: it loses the
// hook, not the release.
func (c *converter) dropRefusedHooks(probs []importer.Problem, index map[int]*rel, m *importer.Model, by importer.Finding) bool {
	dropped := false
	for _, p := range probs {
		i := importer.StepOf(p.Path)
		if i < 0 || i >= len(m.Steps) {
			continue
		}
		switch r, st := index[i], m.Steps[i].Out; {
		case r == nil && c.dropGlobal(st):
			c.rewire(st)
			c.res.NotCarried = append(c.res.NotCarried, Note{Loc: c.from[st], What: "a helmfile-wide hook's step " + st.Name, Why: refusal(m, i, p, by, "it")})
			dropped = true
		case r != nil && st != r.step && r.dropHook(st):
			c.rewire(st)
			r.out.NotCarried = append(r.out.NotCarried, Note{Loc: c.fromOr(st, r, "hooks"), What: "release " + r.out.Resolved.Name + ": a hook's step " + st.Name,
				Why: refusal(m, i, p, by, "it")})
			dropped = true
		}
	}
	return dropped
}

// dropNeedsOf removes the needs on a refused release's steps; a release
// that needed it says so at its needs, and is partial: it runs without
// waiting for the refused one, which helmfile would have finished first
// (trial 46n's D2: the need was dropped silently, the release faithful).
func (c *converter) dropNeedsOf(refused map[*rel]string) {
	gone := map[string]*rel{}
	for r := range refused {
		for _, s := range append(append([]string{}, r.out.Steps...), r.terminal()...) {
			gone[s] = r
		}
	}
	for _, r := range c.rels {
		if _, ok := refused[r]; ok {
			continue
		}
		said := map[*rel]bool{}
		for _, st := range r.steps() {
			var keep []string
			for _, nd := range st.Needs {
				g, ok := gone[nd]
				if !ok {
					keep = append(keep, nd)
					continue
				}
				if !said[g] {
					said[g] = true
					c.lostNeed(r, g.out.Resolved.Namespace+"/"+g.out.Resolved.Name)
				}
			}
			st.Needs = keep
		}
	}
	// a helmfile-wide cleanup hook waits for the releases there are
	for _, st := range c.globalSteps() {
		st.Needs = slices.DeleteFunc(st.Needs, func(nd string) bool { _, ok := gone[nd]; return ok })
	}
}

// lostNeed says at r's needs that its need of a release the import
// refuses is not carried.
func (c *converter) lostNeed(r *rel, need string) {
	c.note(r, "needs", "needs "+need, "that release is refused (see its line), so this step is written without that need: it runs without waiting for "+need+", which helmfile finishes first")
}

// fromOr is where a step came from: its hook's line, else the release's
// key.
func (c *converter) fromOr(st *importer.OutStep, r *rel, key string) importer.Loc {
	if l, ok := c.from[st]; ok {
		return l
	}
	return importer.Loc{File: r.st.file, Line: r.lineOf(key)}
}

func (c *converter) verdicts(refused map[*rel]string) {
	for _, r := range c.rels {
		if why, ok := refused[r]; ok {
			if r.out.Verdict == Refused && r.out.Step == "" {
				continue // said in an earlier round
			}
			r.out.Verdict = Refused
			r.out.Step, r.out.Steps = "", nil
			r.out.NotCarried = append(r.out.NotCarried, Note{Loc: importer.Loc{File: r.st.file, Line: r.line}, What: "release " + r.out.Resolved.Name, Why: why})
			continue
		}
		if len(r.out.NotCarried) > 0 {
			r.out.Verdict = Partial
		} else {
			r.out.Verdict = Faithful
		}
	}
	for _, rel := range c.res.Releases {
		if rel.Verdict == "" {
			rel.Verdict = Refused
		}
		importer.SortNotes(rel.NotCarried)
		importer.SortNotes(rel.Info)
	}
	importer.SortNotes(c.res.NotCarried)
	importer.SortNotes(c.res.Info)
}

// dropHook removes a hook's step; steps that needed it need what it
// needed instead.
func (r *rel) dropHook(st *importer.OutStep) bool {
	found := false
	var keep func([]*importer.OutStep) []*importer.OutStep
	keep = func(l []*importer.OutStep) []*importer.OutStep {
		var out []*importer.OutStep
		for _, x := range l {
			if x == st {
				found = true
				continue
			}
			out = append(out, x)
		}
		return out
	}
	r.before, r.after = keep(r.before), keep(r.after)
	if !found {
		return false
	}
	var steps []string
	for _, s := range r.out.Steps {
		if s != st.Name {
			steps = append(steps, s)
		}
	}
	r.out.Steps = steps
	return true
}

// rewire makes every step that needed a dropped step need what it needed.
func (c *converter) rewire(st *importer.OutStep) {
	for _, x := range c.allSteps() {
		var needs []string
		for _, nd := range x.Needs {
			if nd == st.Name {
				for _, up := range st.Needs {
					needs = appendUnique(needs, up)
				}
				continue
			}
			needs = appendUnique(needs, nd)
		}
		x.Needs = needs
	}
}

// allSteps are the steps of every release and of every helmfile's own
// hooks.
func (c *converter) allSteps() []*importer.OutStep {
	var out []*importer.OutStep
	for _, r := range c.rels {
		out = append(out, r.steps()...)
	}
	return append(out, c.globalSteps()...)
}
