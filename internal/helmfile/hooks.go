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

// hooks turns a release's hooks into steps before (prepare, preapply,
// presync) or after (postsync, postapply, cleanup) the release. A hook's
// command is a script line: internal/shscript, the translator of `khook
// import script`, carries it command by command (kubectl apply, create
// … --dry-run | apply, wait, rollout, patch, label, delete, poll loops,
// helm), and names at the hook's line what it does not carry.
func (c *converter) hooks(r *rel) {
	list, _ := r.m["hooks"].([]any)
	for i, x := range list {
		h, _ := x.(map[string]any)
		line := r.hookLine(i, len(list))
		command, args, ok := c.hookCommand(r, i, h, line)
		if !ok {
			continue
		}
		cmdline := c.shown(strings.TrimSpace(command + " " + strings.Join(args, " ")))
		what := fmt.Sprintf("hooks[%d] (%s)", i, shorten(cmdline))
		before, after := c.hookEvents(r, what, h, line)
		if !before && !after {
			continue
		}
		steps := c.hookSteps(r, what, command, args, line)
		if len(steps) == 0 {
			continue
		}
		side := "post"
		if before {
			side = "pre"
		}
		for j, st := range steps {
			st.Name = fmt.Sprintf("%s-%s-%d", r.step.Name, side, len(r.before)+len(r.after)+j+1)
			st.Needs = nil // chained below, in the hook's order
			c.names[st.Name]++
		}
		if before {
			r.before = append(r.before, steps...)
		} else {
			r.after = append(r.after, steps...)
		}
		r.out.Carried = append(r.out.Carried, what+" as "+fmt.Sprint(len(steps))+" step(s)")
	}
	// Chain: before hooks in order, then the release, then after hooks.
	chain := r.steps()
	for i := 1; i < len(chain); i++ {
		chain[i].Needs = appendUnique(chain[i].Needs, chain[i-1].Name)
	}
}

// hookCommand is a hook's command and arguments, templates rendered (a
// command under {{ requiredEnv "ROOT_DIR" }} is written relative to the
// spec).
func (c *converter) hookCommand(r *rel, i int, h map[string]any, line int) (string, []string, bool) {
	command := str(h["command"])
	if strings.Contains(command, "{{") {
		if out, err := c.r.render(r.st.file, line-1, r.st.dir, command, releaseData(r.st, r.m)); err == nil {
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
			out, err := c.r.render(r.st.file, line-1, r.st.dir, s, releaseData(r.st, r.m))
			if err != nil {
				c.noteAt(r, line, fmt.Sprintf("hooks[%d]", i), "its arguments do not render: "+err.Error())
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
func (c *converter) hookEvents(r *rel, what string, h map[string]any, line int) (before, after bool) {
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
			c.infoAt(r, line, what+" on cleanup", "helmfile sync runs it right after the release (as postsync), and helmfile template, diff and lint run it too; written as a step after the release")
		default:
			other = append(other, str(e))
		}
	}
	if len(other) > 0 {
		c.noteAt(r, line, what+" on "+strings.Join(other, ", "), "khook runs no hooks at uninstall or cleanup: add a step by hand")
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
// noted at the hook's line.
func (c *converter) hookSteps(r *rel, what, command string, args []string, line int) []*importer.OutStep {
	if c.helmDependency(r, command, args) {
		return nil
	}
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
	at := importer.Loc{File: r.st.file, Line: line}
	m, err := shscript.Fragment(text, at, shscript.Options{Dir: r.st.dir, SpecDir: c.specDir})
	var ie *shscript.InputError
	if errors.As(err, &ie) {
		c.noteAt(r, line, what, ie.Msg)
		return nil
	}
	if err != nil {
		c.noteAt(r, line, what, err.Error())
		return nil
	}
	for _, n := range m.NotCarried {
		c.noteAt(r, n.Line, what+": "+c.shown(n.What), c.shown(n.Why))
	}
	for _, n := range m.Info {
		c.infoAt(r, n.Line, what+": "+c.shown(n.What), c.shown(n.Why))
	}
	c.commands = append(c.commands, m.Commands...)
	c.hookVars = append(c.hookVars, m.Vars...)
	if len(m.Steps) == 0 && len(m.NotCarried) == 0 {
		c.infoAt(r, line, what, "nothing in it changes the cluster (read-only or output only), so no step is written")
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
