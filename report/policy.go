package report

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/khook/khook/model"
)

// writeViolations puts each policy violation of a step on a line under
// the step's objects: "policy deny no-latest: Deployment shop/web: ...".
func writeViolations(b *bytes.Buffer, indent string, s model.PlanStep) {
	for _, v := range s.Policy {
		fmt.Fprintf(b, "%s  policy %s\n", indent, v.String())
	}
	for _, a := range s.AuditAnnotations {
		fmt.Fprintf(b, "%s  audit annotation %s: %s: %s\n", indent, a.Key, a.Object, a.Value)
	}
}

// notPolicyWarnings are a step's warnings less its policy warns, which
// writeViolations prints under the objects.
func notPolicyWarnings(s model.PlanStep) []model.Warning {
	if len(s.Policy) == 0 {
		return s.Warnings
	}
	is := map[model.Warning]bool{}
	for _, v := range s.Policy {
		if v.Effect == model.EffectWarn {
			is[v.Warning()] = true
		}
	}
	var out []model.Warning
	for _, w := range s.Warnings {
		if !is[w] {
			out = append(out, w)
		}
	}
	return out
}

// writePolicyFiles names the --policy files in force and what of them the
// plan could not honour.
func writePolicyFiles(b *bytes.Buffer, p *model.Plan) {
	if len(p.PolicyFiles) > 0 {
		fmt.Fprintf(b, "Policies in force: %s\n", strings.Join(p.PolicyFiles, ", "))
	}
	for _, n := range p.PolicyNotes {
		fmt.Fprintf(b, "Policy note: %s\n", n)
	}
}

// writePolicyMD is the Policy section of a summary or comment: every
// violation under its step, denies first, and the files in force.
func writePolicyMD(b *bytes.Buffer, p *model.Plan) {
	var n int
	for _, s := range p.Steps {
		n += len(s.Policy)
	}
	if n == 0 && len(p.PolicyFiles) == 0 && len(p.PolicyNotes) == 0 {
		return
	}
	b.WriteString("### Policy\n\n")
	if len(p.PolicyFiles) > 0 {
		fmt.Fprintf(b, "Policy files in force: %s\n\n", mdInline(strings.Join(p.PolicyFiles, ", ")))
	}
	for _, note := range p.PolicyNotes {
		fmt.Fprintf(b, "- ℹ️ %s\n", mdInline(note))
	}
	if len(p.PolicyNotes) > 0 {
		b.WriteString("\n")
	}
	if n == 0 {
		b.WriteString("No change breaks a policy.\n\n")
		return
	}
	marks := map[string]string{model.EffectDeny: "⛔", model.EffectWarn: "⚠️", model.EffectAudit: "📝"}
	for _, effect := range []string{model.EffectDeny, model.EffectWarn, model.EffectAudit} {
		for _, s := range p.Steps {
			for _, v := range s.Policy {
				if v.Effect != effect {
					continue
				}
				fmt.Fprintf(b, "- %s **%s** `%s` in step `%s`: %s\n", marks[effect], effect, mdInline(v.Policy), s.Name, mdInline(strings.TrimPrefix(v.Object+": ", ": ")+v.Message))
			}
		}
	}
	b.WriteString("\n")
}
