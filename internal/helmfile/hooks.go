package helmfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
		info: func(line int, what, why string) { c.infoAt(r, line, what, why) }}
	list, _ := r.m["hooks"].([]any)
	for i, x := range list {
		h, _ := x.(map[string]any)
		line := r.hookLine(i, len(list))
		what, command, args, ok := c.hook(at, fmt.Sprintf("hooks[%d]", i), h, line)
		if !ok {
			continue
		}
		before, after := c.hookEvents(at, what, h, line)
		if (!before && !after) || c.helmDependency(r, command, args) {
			continue
		}
		steps := c.hookSteps(at, what, command, args, line)
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

// nameHookSteps names a hook's steps prefix-N, counting on from n; their
// needs are chained by the caller, in the hooks' order.
func (c *converter) nameHookSteps(steps []*importer.OutStep, prefix string, n int) {
	for j, st := range steps {
		st.Name = fmt.Sprintf("%s-%d", prefix, n+j+1)
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
	command := str(h["command"])
	if strings.Contains(command, "{{") {
		if out, err := c.r.render(at.file, line-1, at.dir, command, at.data); err == nil {
			command = out
			if filepath.IsAbs(out) {
				command = c.rel(out)
			}
		}
	}
	var args []string
	a, _ := h["args"].([]any)
	for _, v := range a {
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
	m, err := shscript.Fragment(text, importer.Loc{File: at.file, Line: line}, shscript.Options{Dir: at.dir, SpecDir: c.specDir})
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
		at.note(n.Line, what+": "+c.shown(n.What), c.shown(n.Why))
	}
	for _, n := range m.Info {
		at.info(n.Line, what+": "+c.shown(n.What), c.shown(n.Why))
	}
	c.commands = append(c.commands, m.Commands...)
	c.hookVars = append(c.hookVars, m.Vars...)
	if len(m.Steps) == 0 && len(m.NotCarried) == 0 {
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
