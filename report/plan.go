package report

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
)

// actionOrder is the order of the closing totals line, changes first.
var actionOrder = []Action{
	ActionFail, ActionInstall, ActionUpgrade, ActionCreate, ActionConfigure, ActionDelete, ActionUninstall,
	ActionRestart, ActionRun, ActionWait, ActionKeep, ActionUnchanged, ActionNoop, ActionSkip,
	ActionUnknown, ActionPlanned, ActionExcluded,
}

// actionPhrase is how the totals line names an action's count.
var actionPhrase = map[Action]string{
	ActionInstall:   "to install",
	ActionUpgrade:   "to upgrade",
	ActionCreate:    "to create",
	ActionConfigure: "to configure",
	ActionDelete:    "to delete",
	ActionUninstall: "to uninstall",
	ActionRestart:   "to restart",
	ActionRun:       "to run",
	ActionWait:      "to wait",
	ActionSkip:      "to skip",
	ActionKeep:      "to keep",
	ActionFail:      "would fail",
}

// DriftFails reports whether a drift run of the plan fails: a step whose
// drift is not warn (drift: warn) would change the cluster.
func (p *Plan) DriftFails() bool {
	for _, s := range p.Steps {
		if IsChange(s.Action) && !s.DriftWarn {
			return true
		}
	}
	return false
}

// PlanTotals counts the steps per predicted action.
func PlanTotals(steps []PlanStep) map[Action]int {
	t := map[Action]int{}
	for _, s := range steps {
		t[s.Action]++
	}
	return t
}

// TotalsLine is the terraform-style closing line:
// "Plan: 2 to install, 1 to upgrade, 3 unchanged, 1 excluded."
func TotalsLine(p *Plan) string {
	totals := p.Totals
	if totals == nil {
		totals = PlanTotals(p.Steps)
	}
	var parts []string
	seen := map[Action]bool{}
	for _, a := range actionOrder {
		seen[a] = true
		if n := totals[a]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, phrase(a)))
		}
	}
	var other []string
	for a, n := range totals {
		if !seen[a] && n > 0 {
			other = append(other, fmt.Sprintf("%d %s", n, phrase(a)))
		}
	}
	sort.Strings(other)
	parts = append(parts, other...)
	if len(parts) == 0 {
		parts = []string{"no steps"}
	}
	prefix := "Plan: "
	if p.Offline {
		prefix = "Plan (offline): "
	}
	return prefix + strings.Join(parts, ", ") + "."
}

func phrase(action Action) string {
	if p, ok := actionPhrase[action]; ok {
		return p
	}
	return string(action)
}

// WritePlanText renders a plan for people: per step its action, name and
// type, what it starts after, what it does, why (for skip, unknown,
// excluded), the objects it touches and its diff; then the totals line.
// The document goes out in one Write.
func WritePlanText(w io.Writer, p *Plan) error {
	var b bytes.Buffer
	b.WriteString(planHeader(p))
	b.WriteString("\n\n")
	width := 0
	for _, s := range p.Steps {
		width = max(width, len(s.Action))
	}
	width += 2
	indent := strings.Repeat(" ", width)
	for _, s := range p.Steps {
		fmt.Fprintf(&b, "%-*s%s (%s)\n", width, s.Action, s.Name, s.Type)
		if len(s.Needs) == 0 {
			fmt.Fprintf(&b, "%sstarts at once\n", indent)
		} else {
			fmt.Fprintf(&b, "%safter: %s\n", indent, strings.Join(s.Needs, ", "))
		}
		if s.Summary != "" {
			fmt.Fprintf(&b, "%s%s\n", indent, s.Summary)
		}
		if s.Reason != "" {
			fmt.Fprintf(&b, "%s%s: %s\n", indent, s.Action, s.Reason)
		}
		writeWarnings(&b, indent, s.Warnings)
		writeObjects(&b, indent, s.Objects)
		switch {
		case s.Diff != "":
			fmt.Fprintf(&b, "%sdiff:\n", indent)
			for _, line := range strings.Split(strings.TrimRight(s.Diff, "\n"), "\n") {
				fmt.Fprintf(&b, "%s    %s\n", indent, line)
			}
		case s.DiffNote != "":
			fmt.Fprintf(&b, "%sdiff: %s\n", indent, s.DiffNote)
		}
	}
	if len(p.Steps) > 0 {
		b.WriteByte('\n')
	}
	for _, n := range p.Notes {
		fmt.Fprintf(&b, "Note: %s\n", n)
	}
	b.WriteString(TotalsLine(p))
	b.WriteByte('\n')
	if p.Offline {
		b.WriteString("Actions are not assessed offline: run plan against a cluster to see what would change.\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}

func planHeader(p *Plan) string {
	h := "Plan for " + p.Name
	if p.Identifier != "" && p.Identifier != p.Name {
		h += " [" + p.Identifier + "]"
	}
	switch {
	case p.Offline:
		h += " (offline)"
	case p.Server != "":
		h += " on " + p.Server
	}
	if hl := p.Selection.Headline(); hl != "" {
		h += "\n" + selectionLine(p.Selection)
	}
	return h
}

func writeObjects(b *bytes.Buffer, indent string, objs []ObjectPlan) {
	width := 0
	for _, o := range objs {
		width = max(width, len(o.Action))
	}
	for _, o := range objs {
		ref := o.Name
		if o.Namespace != "" {
			ref = o.Namespace + "/" + o.Name
		}
		fmt.Fprintf(b, "%s%-*s  %s %s", indent, width, o.Action, o.Kind, ref)
		if o.With != "" {
			fmt.Fprintf(b, " and %s", o.With)
		}
		if o.Reason != "" {
			fmt.Fprintf(b, " (%s)", o.Reason)
		}
		b.WriteByte('\n')
	}
}
