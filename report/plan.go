package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/khook/khook/model"
)

// WritePlanText renders a plan for people: per step its action, name and
// type, what it starts after, what it does, why (for skip, unknown,
// excluded), the objects it touches and its diff; then the totals line.
// The document goes out in one Write.
func WritePlanText(w io.Writer, p *model.Plan) error {
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
		writeWarnings(&b, indent, notPolicyWarnings(s))
		writeObjects(&b, indent, s.Objects)
		writeViolations(&b, indent, s)
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
	writePolicyFiles(&b, p)
	b.WriteString(model.TotalsLine(p))
	b.WriteByte('\n')
	if p.Offline {
		b.WriteString("Actions are not assessed offline: run plan against a cluster to see what would change.\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}

func planHeader(p *model.Plan) string {
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

func writeObjects(b *bytes.Buffer, indent string, objs []model.ObjectPlan) {
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
