package helmfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/khook/khook/internal/importer"
	"github.com/khook/khook/internal/shscript"
)

// hookAt is where hooks are written and what their templates see: a
// release's (hooks) or a helmfile's own, helmfile-wide (globalHooks).
// note and info say, at a line of file, what is not carried and what is
// carried with a difference.
type hookAt struct {
	file, dir  string
	data       map[string]any
	note, info func(line int, what, why string)
	// elsewhere is a note at a line of another file: a script the hook
	// runs (apply-crds.sh:45, not the helmfile's line 45: trial 46t's D5).
	elsewhere func(notCarried bool, loc importer.Loc, what, why string)
}

// noteFrom and infoFrom are note and info at a line the shell translator
// names: the hook's own text (its file), or a script it runs.
func (a hookAt) noteFrom(loc importer.Loc, what, why string) {
	if loc.File == "" || loc.File == a.file {
		a.note(loc.Line, what, why)
		return
	}
	a.elsewhere(true, loc, what, why)
}

func (a hookAt) infoFrom(loc importer.Loc, what, why string) {
	if loc.File == "" || loc.File == a.file {
		a.info(loc.Line, what, why)
		return
	}
	a.elsewhere(false, loc, what, why)
}

// hooks turns a release's hooks into steps before (prepare, preapply,
// presync) or after (postsync, postapply, cleanup) the release. A hook's
// command is a script line: internal/shscript, the translator of `khook
// import script`, carries it command by command (kubectl apply, create
// … --dry-run | apply, wait, rollout, patch, label, delete, poll loops,
// helm), and names at the hook's line what it does not carry.
func (c *converter) hooks(r *rel) {
	at := hookAt{file: r.st.file, dir: r.st.dir, data: releaseData(r.st, r.m),
		note: func(line int, what, why string) { c.noteAt(r, line, what, why) },
		info: func(line int, what, why string) { c.infoAt(r, line, what, why) },
		elsewhere: func(notCarried bool, loc importer.Loc, what, why string) {
			n := Note{Loc: loc, What: "release " + r.out.Resolved.Name + ": " + what, Why: why}
			if notCarried {
				r.out.NotCarried = append(r.out.NotCarried, n)
			} else {
				r.out.Info = append(r.out.Info, n)
			}
		}}
	list, _ := r.m["hooks"].([]any)
	applied := appliedByHooks(list)
	for i, x := range list {
		h, _ := x.(map[string]any)
		line := r.hookLine(i, len(list))
		what, command, args, ok := c.hook(at, fmt.Sprintf("hooks[%d]", i), h, line)
		if !ok {
			continue
		}
		if file := undoesAnApply(h, command, applied); file != "" && !holdsData(abs(r.st.dir, file)) {
			at.info(line, what, "it deletes at uninstall what another hook of the release applies ("+file+"), which khook destroy deletes itself with the step that applied it")
			continue
		}
		before, after := c.hookEvents(at, what, h, line)
		if (!before && !after) || c.helmDependency(r, command, args) {
			continue
		}
		pulled := len(c.chartCRDs)
		steps := c.hookSteps(at, what, command, args, line)
		var own *importer.OutHelm
		if r.step != nil {
			own = r.step.Helm
		}
		c.ownChartCRDs(at, what, line, pulled, own)
		if len(steps) == 0 {
			continue
		}
		side := "post"
		if before {
			side = "pre"
		}
		c.nameHookSteps(steps, r.step.Name+"-"+side, len(r.before)+len(r.after))
		if before {
			r.before = append(r.before, steps...)
		} else {
			r.after = append(r.after, steps...)
		}
		r.out.Carried = append(r.out.Carried, what+" as "+fmt.Sprint(len(steps))+" step(s)")
	}
	// Chain: before hooks in order, then the release, then after hooks.
	chain(r.steps())
}

// hook reads a hook: what notes call it (label and its command line),
// its command and arguments.
func (c *converter) hook(at hookAt, label string, h map[string]any, line int) (what, command string, args []string, ok bool) {
	command, args, ok = c.hookCommand(at, label, h, line)
	if !ok {
		return "", "", nil, false
	}
	cmdline := c.shown(strings.TrimSpace(command + " " + strings.Join(args, " ")))
	return fmt.Sprintf("%s (%s)", label, shorten(cmdline)), command, args, true
}

// nameHookSteps names a hook's steps prefix-N, counting on from n past
// names taken; their needs are chained by the caller, in the hooks' order.
func (c *converter) nameHookSteps(steps []*importer.OutStep, prefix string, n int) {
	for _, st := range steps {
		n++
		for c.names[fmt.Sprintf("%s-%d", prefix, n)] > 0 { // a release's step has the name
			n++
		}
		st.Name = fmt.Sprintf("%s-%d", prefix, n)
		st.Needs = nil
		c.names[st.Name]++
	}
}

// chain makes each step need the one before it.
func chain(steps []*importer.OutStep) {
	for i := 1; i < len(steps); i++ {
		steps[i].Needs = appendUnique(steps[i].Needs, steps[i-1].Name)
	}
}

// hookCommand is a hook's command and arguments, templates rendered (a
// command under {{ requiredEnv "ROOT_DIR" }} is written relative to the
// spec).
func (c *converter) hookCommand(at hookAt, label string, h map[string]any, line int) (string, []string, bool) {
	command, a := str(h["command"]), h["args"]
	if k, ok := h["kubectlApply"].(map[string]any); ok {
		// helmfile's pkg/event prepareKubectlHook: kubectl apply -f
		// FILENAME or -k KUSTOMIZE, whatever command: says.
		f, hasF := k["filename"]
		kz, hasK := k["kustomize"]
		switch {
		case hasF == hasK:
			at.note(line, label+" kubectlApply", "helmfile refuses it too: it takes exactly one of filename and kustomize")
			return "", nil, false
		case hasF:
			command, a = "kubectl", []any{"apply", "-f", f}
		default:
			command, a = "kubectl", []any{"apply", "-k", kz}
		}
	}
	if strings.Contains(command, "{{") {
		if out, err := c.r.render(at.file, line-1, at.dir, command, at.data); err == nil {
			command = out
			if filepath.IsAbs(out) {
				command = c.rel(out)
			}
		}
	}
	var args []string
	list, _ := a.([]any)
	for _, v := range list {
		s := str(v)
		if strings.Contains(s, "{{") {
			out, err := c.r.render(at.file, line-1, at.dir, s, at.data)
			if err != nil {
				at.note(line, label, "its arguments do not render: "+err.Error())
				return "", nil, false
			}
			s = out
		}
		args = append(args, s)
	}
	return command, args, true
}

// hookEvents says whether a hook runs before or after its release, and
// names the events khook has no moment for.
func (c *converter) hookEvents(at hookAt, what string, h map[string]any, line int) (before, after bool) {
	var other []string
	ev, _ := h["events"].([]any)
	for _, e := range ev {
		switch str(e) {
		case "prepare", "preapply", "presync":
			before = true
		case "postsync", "postapply":
			after = true
		case "cleanup":
			// helmfile sync runs a release's cleanup hooks right after
			// its postsync ones, and fails the release when one fails.
			after = true
			at.info(line, what+" on cleanup", "helmfile sync runs it right after the release (as postsync), and helmfile template, diff and lint run it too; written as a step after the release")
		default:
			other = append(other, str(e))
		}
	}
	if len(other) > 0 {
		at.note(line, what+" on "+strings.Join(other, ", "), "khook runs no hooks at uninstall or cleanup: add a step by hand")
	}
	return before, after
}

// ownChartCRDs keeps, of the charts whose crds/ a hook applied (those
// from index from on), the one the release installs: its step's crds:
// upgrade does that. Another chart's (or a helmfile-wide hook's, h nil)
// is not carried.
func (c *converter) ownChartCRDs(at hookAt, what string, line, from int, h *importer.OutHelm) {
	kept := c.chartCRDs[:from]
	for _, p := range c.chartCRDs[from:] {
		if h != nil && p.Is(h) {
			kept = append(kept, p)
			at.info(line, what, "it applies the crds/ of the chart it pulls ("+p.Chart+") before the release, which the release's step does itself: crds: upgrade")
			continue
		}
		why := "it applies the crds/ of chart " + p.Chart + ", which no step of this release installs: apply them with a step of their own"
		at.note(line, what, why)
		for i := range c.commands {
			if cm := &c.commands[i]; cm.Loc == p.Applied && cm.Fate == importer.FateFolded {
				cm.Fate, cm.Why = importer.FateNotCarried, why
			}
		}
	}
	c.chartCRDs = kept
}

// appliedByHooks are the files the release's install-time hooks apply
// (kubectl apply -f FILE).
func appliedByHooks(list []any) map[string]bool {
	out := map[string]bool{}
	for _, x := range list {
		h, _ := x.(map[string]any)
		if !hasEvent(h, "presync", "preapply", "postsync", "postapply", "prepare") {
			continue
		}
		if file := kubectlFile(h, "apply"); file != "" {
			out[file] = true
		}
	}
	return out
}

// undoesAnApply is the file of a hook that only runs at uninstall and
// deletes (kubectl delete -f FILE) what another hook applies ("" else):
// khook destroy deletes what the spec's steps created (fiware's iam).
func undoesAnApply(h map[string]any, command string, applied map[string]bool) string {
	ev, _ := h["events"].([]any)
	if len(ev) == 0 || filepath.Base(command) != "kubectl" {
		return ""
	}
	for _, e := range ev {
		if s := str(e); s != "preuninstall" && s != "postuninstall" {
			return ""
		}
	}
	if file := kubectlFile(h, "delete"); file != "" && applied[file] {
		return file
	}
	return ""
}

// holdsData: the manifest file has an object whose deletion deletes data,
// which khook destroy keeps without deleteData: (the hook's delete is then
// not what destroy does).
func holdsData(file string) bool {
	b, err := os.ReadFile(file)
	return err != nil || dataKinds.Match(b)
}

var dataKinds = regexp.MustCompile(`(?m)^kind:\s*(PersistentVolumeClaim|PersistentVolume|StatefulSet|CustomResourceDefinition)\s*$`)

func hasEvent(h map[string]any, names ...string) bool {
	ev, _ := h["events"].([]any)
	for _, e := range ev {
		if slices.Contains(names, str(e)) {
			return true
		}
	}
	return false
}

// kubectlFile is FILE of a hook `kubectl VERB … -f FILE` (one file).
func kubectlFile(h map[string]any, verb string) string {
	if filepath.Base(str(h["command"])) != "kubectl" {
		return ""
	}
	args, _ := h["args"].([]any)
	file, hasVerb := "", false
	for i, a := range args {
		switch s := str(a); {
		case s == verb:
			hasVerb = true
		case (s == "-f" || s == "--filename") && i+1 < len(args):
			if file != "" {
				return ""
			}
			file = filepath.Clean(str(args[i+1]))
		}
	}
	if !hasVerb {
		return ""
	}
	return file
}

func shorten(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// hookSteps carries one hook's command through the script translator:
// the steps of what it understood; each command it did not carry is
// noted at the hook's line. Release hooks and helmfile-wide hooks both
// come through here.
func (c *converter) hookSteps(at hookAt, what, command string, args []string, line int) []*importer.OutStep {
	text := shscript.CommandLine(append([]string{command}, args...))
	if base := filepath.Base(command); base == "sh" || base == "bash" {
		// sh -c SCRIPT, and its combined forms (-ec, -euc, -c with -e before).
		for i, a := range args {
			if !strings.HasPrefix(a, "-") || strings.HasPrefix(a, "--") {
				break
			}
			if strings.Contains(a, "c") && i+1 < len(args) {
				text = args[i+1]
				break
			}
		}
	}
	m, err := shscript.Fragment(text, importer.Loc{File: at.file, Line: line}, shscript.Options{Dir: at.dir, SpecDir: c.specDir, Redactor: c.opts.Redactor})
	var ie *shscript.InputError
	if errors.As(err, &ie) {
		at.note(line, what, ie.Msg)
		return nil
	}
	if err != nil {
		at.note(line, what, err.Error())
		return nil
	}
	for _, n := range m.NotCarried {
		at.noteFrom(n.Loc, what+": "+c.shown(n.What), c.shown(n.Why))
	}
	for _, n := range m.Info {
		at.infoFrom(n.Loc, what+": "+c.shown(n.What), c.shown(n.Why))
	}
	c.commands = append(c.commands, m.Commands...)
	c.hookVars = append(c.hookVars, m.Vars...)
	c.chartCRDs = append(c.chartCRDs, m.ChartCRDs...)
	c.logins = append(c.logins, m.Logins...)
	c.computedInHook(at, what, line, m)
	if len(m.Steps) == 0 && len(m.NotCarried) == 0 && len(m.ChartCRDs) == 0 {
		at.info(line, what, "nothing in it changes the cluster (read-only or output only), so no step is written")
	}
	steps := make([]*importer.OutStep, len(m.Steps))
	for i, st := range m.Steps {
		steps[i] = st.Out
		c.from[st.Out] = st.From
	}
	return steps
}

// helmDependency is `helm dependency build|update CHART` of the release's
// own local chart: what a helm step does with a Chart.lock, or with
// dependencyUpdate: true.
func (c *converter) helmDependency(r *rel, command string, args []string) bool {
	if filepath.Base(command) != "helm" || len(args) != 3 || (args[0] != "dependency" && args[0] != "dep") || (args[1] != "build" && args[1] != "update") ||
		r.step.Helm == nil || filepath.Clean(c.rel(abs(r.st.dir, args[2]))) != filepath.Clean(r.step.Helm.Chart) {
		return false
	}
	if _, err := os.Stat(filepath.Join(abs(r.st.dir, args[2]), "Chart.lock")); err != nil || args[1] == "update" {
		r.step.Helm.DependencyUpdate = true
	}
	return true
}

// shown is a hook's text with the checkout's absolute paths (a rendered
// {{ requiredEnv "ROOT_DIR" }}) relative to it, as notes name files.
func (c *converter) shown(s string) string {
	return strings.ReplaceAll(s, c.l.root+string(filepath.Separator), "")
}

// stateHooks are a helmfile's own, helmfile-wide hooks as steps. helmfile
// v1.8.0 fires them on two events only, once per command and per
// helmfile (pkg/app Run.WithPreparedCharts): prepare before the file's
// releases (pkg/state TriggerGlobalPrepareEvent) and cleanup after them
// (TriggerGlobalCleanupEvent), both through triggerGlobalReleaseEvent,
// the one reader of the state's hooks.
type stateHooks struct {
	rels             []*rel // the file's releases
	prev             []*rel // what helmfile finishes before the file (its sub-helmfiles, the entry before it)
	prepare, cleanup []*importer.OutStep
}

// globalHooks carries the helmfile-wide hooks of s, whose releases are
// rels and whose predecessors prev, through the translator release hooks
// use. A hook on any other event never ran in helmfile: a warning says so
// and nothing is carried.
func (c *converter) globalHooks(s *state, rels, prev []*rel) {
	if len(s.hooks) == 0 {
		return
	}
	g := &stateHooks{rels: rels, prev: prev}
	for _, r := range rels {
		r.global = g
	}
	c.globals = append(c.globals, g)
	for i, h := range s.hooks {
		at := c.globalHookAt(s, h)
		label := fmt.Sprintf("helmfile-wide hooks[%d]", i)
		var prepare, cleanup bool
		var other []string
		ev, _ := h.m["events"].([]any)
		for _, e := range ev {
			switch str(e) {
			case "prepare":
				prepare = true
			case "cleanup":
				cleanup = true
			default:
				other = append(other, str(e))
			}
		}
		if len(other) > 0 {
			raw := str(h.m["command"])
			a, _ := h.m["args"].([]any)
			for _, x := range a {
				raw += " " + str(x)
			}
			at.info(h.line, fmt.Sprintf("%s (%s) on %s", label, shorten(c.shown(raw)), strings.Join(other, ", ")),
				"helmfile v1 fires a helmfile-wide hook on prepare and cleanup only (pkg/app Run.WithPreparedCharts calls pkg/state TriggerGlobalPrepareEvent and TriggerGlobalCleanupEvent, the only callers of triggerGlobalReleaseEvent), so on these events it never ran and nothing is carried for them")
		}
		if !prepare && !cleanup {
			continue
		}
		evt := "prepare"
		if !prepare {
			evt = "cleanup"
		}
		at.data["Event"] = map[string]any{"Name": evt, "Error": nil}
		what, command, args, ok := c.hook(at, label, h.m, h.line)
		if !ok {
			continue
		}
		pulled := len(c.chartCRDs)
		steps := c.hookSteps(at, what, command, args, h.line)
		c.ownChartCRDs(at, what, h.line, pulled, nil)
		if len(steps) == 0 {
			continue
		}
		if prepare {
			c.nameHookSteps(steps, "hooks-prepare", c.countGlobal(func(g *stateHooks) int { return len(g.prepare) }))
			g.prepare = append(g.prepare, steps...)
			if len(s.helmfiles) > 0 {
				at.info(h.line, what+" on prepare", "helmfile runs the helmfiles: of "+s.file+" first, their cleanup hooks included, and fires its prepare hooks after them (pkg/app visitStatesWithContext), so these steps wait for them")
			}
		}
		if cleanup {
			if prepare { // it runs twice: once more at the end
				steps = c.copySteps(steps)
			}
			c.nameHookSteps(steps, "hooks-cleanup", c.countGlobal(func(g *stateHooks) int { return len(g.cleanup) }))
			g.cleanup = append(g.cleanup, steps...)
			at.info(h.line, what+" on cleanup", "helmfile runs it once after the command's work on this helmfile whatever its result (the error is .Event.Error); its steps run after the helmfile's releases, and only when they succeeded")
		}
	}
	chain(g.prepare)
	chain(g.cleanup)
}

// globalHookAt is where a helmfile-wide hook is (a base's hook is in the
// base; it runs in the helmfile's directory) and what its templates see
// (pkg/event Bus.runHook): the environment, the event and the command.
// What it does not carry makes the import partial.
func (c *converter) globalHookAt(s *state, h hookNode) hookAt {
	at := func(line int, what, why string) Note {
		if line <= 0 {
			line = h.line
		}
		return Note{Loc: importer.Loc{File: h.file, Line: line}, What: what, Why: why}
	}
	return hookAt{file: h.file, dir: s.dir,
		data: map[string]any{"Environment": s.envData()["Environment"], "Namespace": "", "HelmfileCommand": "sync"},
		note: func(line int, what, why string) { c.res.NotCarried = append(c.res.NotCarried, at(line, what, why)) },
		info: func(line int, what, why string) { c.res.Info = append(c.res.Info, at(line, what, why)) },
		elsewhere: func(notCarried bool, loc importer.Loc, what, why string) {
			if notCarried {
				c.res.NotCarried = append(c.res.NotCarried, Note{Loc: loc, What: what, Why: why})
			} else {
				c.res.Info = append(c.res.Info, Note{Loc: loc, What: what, Why: why})
			}
		}}
}

// countGlobal sums n over every helmfile's hooks: step names count on
// across helmfiles.
func (c *converter) countGlobal(n func(*stateHooks) int) int {
	sum := 0
	for _, g := range c.globals {
		sum += n(g)
	}
	return sum
}

// copySteps are copies of steps (a hook on both prepare and cleanup is
// written twice), each from where its original came.
func (c *converter) copySteps(steps []*importer.OutStep) []*importer.OutStep {
	out := make([]*importer.OutStep, len(steps))
	for i, st := range steps {
		b, err := yaml.Marshal(st)
		cp := &importer.OutStep{}
		if err == nil {
			err = yaml.Unmarshal(b, cp)
		}
		if err != nil {
			panic("helmfile: a step does not copy through YAML: " + err.Error())
		}
		out[i] = cp
		c.from[cp] = c.from[st]
	}
	return out
}

// linkHooks puts each helmfile's own hooks around its releases: its
// prepare steps after what helmfile finishes before the file, each of its
// releases after them; its cleanup steps after each release's last step.
// A release after another helmfile (a sub-helmfile, the helmfiles: entry
// before its own) waits for that file's cleanup steps too.
func (c *converter) linkHooks() {
	for _, g := range c.globals {
		var before []string
		for _, p := range g.prev {
			for _, t := range p.done() {
				before = appendUnique(before, t)
			}
		}
		if n := len(g.prepare); n > 0 {
			for _, t := range before {
				g.prepare[0].Needs = appendUnique(g.prepare[0].Needs, t)
			}
			before = []string{g.prepare[n-1].Name}
			for _, r := range g.rels {
				first := r.steps()[0]
				first.Needs = appendUnique(first.Needs, g.prepare[n-1].Name)
			}
		}
		if len(g.cleanup) > 0 {
			after := before
			if len(g.rels) > 0 {
				after = nil
				for _, r := range g.rels {
					steps := r.steps()
					after = append(after, steps[len(steps)-1].Name)
				}
			}
			for _, t := range after {
				g.cleanup[0].Needs = appendUnique(g.cleanup[0].Needs, t)
			}
		}
	}
	for _, r := range c.rels {
		if r.global != nil && len(r.global.prepare) > 0 {
			continue // its prepare steps wait for them
		}
		first := r.steps()[0]
		for _, p := range r.prev {
			for _, t := range p.done() {
				first.Needs = appendUnique(first.Needs, t)
			}
		}
	}
}

// done are the steps whose end means helmfile is done with r: its own,
// then its helmfile's cleanup hooks.
func (r *rel) done() []string {
	out := r.terminal()
	if g := r.global; g != nil && len(g.cleanup) > 0 {
		out = append(out, g.cleanup[len(g.cleanup)-1].Name)
	}
	return out
}

// globalSteps are the steps of every helmfile's own hooks.
func (c *converter) globalSteps() []*importer.OutStep {
	var out []*importer.OutStep
	for _, g := range c.globals {
		out = append(append(out, g.prepare...), g.cleanup...)
	}
	return out
}

// dropGlobal removes a helmfile-wide hook's step; false when st is none.
func (c *converter) dropGlobal(st *importer.OutStep) bool {
	drop := func(l *[]*importer.OutStep) bool {
		for i, x := range *l {
			if x == st {
				*l = append((*l)[:i:i], (*l)[i+1:]...)
				return true
			}
		}
		return false
	}
	for _, g := range c.globals {
		if drop(&g.prepare) || drop(&g.cleanup) {
			return true
		}
	}
	return false
}

// computedInHook names a value the hook computes when it runs
// (CA_CERT=$(kubectl get secret ca-secret …), then applied): helmfile's
// hook reads it then; khook runs no shell, so the step written asks for
// it as a variable — not what helmfile does, so the hook is partial.
func (c *converter) computedInHook(at hookAt, what string, line int, m *importer.Model) {
	var text strings.Builder
	for _, st := range m.Steps {
		b, _ := json.Marshal(st.Out)
		text.Write(b)
	}
	for _, v := range m.Vars {
		if v.Computed && (strings.Contains(text.String(), "${"+v.Name+"}") || strings.Contains(text.String(), "${"+v.Name+" ")) {
			at.note(line, what+": "+v.Name, "the hook computes it when it runs ("+c.shown(v.Description)+"); khook runs no shell, so the step written asks for it as a variable: give it, or carry the copy by hand")
		}
	}
}
