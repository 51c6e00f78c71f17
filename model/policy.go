package model

import "strings"

// Violation is one policy rule a planned change breaks (docs/policies.md):
// a deny fails the step's plan, a warn is a warning, an audit is shown.
type Violation struct {
	// Policy names the rule: a khook rule's name, or an admission policy's
	// (and its binding's).
	Policy string `json:"policy"`
	Effect string `json:"effect"` // deny | warn
	// Object is the change's object: "Deployment shop/web".
	Object  string `json:"object,omitempty"`
	Message string `json:"message"`
	// Source is the file the rule was written in.
	Source string `json:"source,omitempty"`
}

// Violation effects. An audit is an admission policy's Audit action: the
// API server admits the request and records the failure in its audit log,
// so an audit neither fails the step nor warns.
const (
	EffectDeny  = "deny"
	EffectWarn  = "warn"
	EffectAudit = "audit"
)

// AuditAnnotation is an admission policy's auditAnnotation for one object:
// what the API server would write to its audit log for the request.
type AuditAnnotation struct {
	// Policy is the admission policy; Key the annotation's key as the API
	// server records it ("POLICY/KEY").
	Policy string `json:"policy"`
	Object string `json:"object,omitempty"`
	Key    string `json:"key"`
	Value  string `json:"value"`
}

// String is "deny no-latest-images: Deployment shop/web: image web:latest".
func (v Violation) String() string {
	parts := []string{v.Effect + " " + v.Policy}
	if v.Object != "" {
		parts = append(parts, v.Object)
	}
	return strings.Join(append(parts, v.Message), ": ")
}

// Warning is a warn violation as a warning of khook's on its step.
func (v Violation) Warning() Warning {
	return Warning{From: WarnerKhook, Object: v.Object, Message: "policy " + v.Policy + ": " + v.Message}
}

// RecordViolations puts a step's violations on its plan: each under the
// step, every warn among its warnings, and the first deny as the reason
// the step's plan is fail (apply would be refused).
func RecordViolations(ps *PlanStep, vs []Violation) {
	for _, v := range vs {
		ps.Policy = append(ps.Policy, v)
		if v.Effect == EffectAudit {
			continue
		}
		if v.Effect == EffectWarn {
			ps.Warnings = append(ps.Warnings, v.Warning())
			continue
		}
		if ps.Action != ActionFail {
			ps.Action = ActionFail
			obj := v.Object
			if obj == "" {
				obj = "it"
			}
			ps.Reason = "policy " + v.Policy + " denies " + obj + ": " + v.Message
		}
	}
}

// Denials are the plan's deny violations, step by step.
func (p *Plan) Denials() []Violation {
	var out []Violation
	for _, s := range p.Steps {
		for _, v := range s.Policy {
			if v.Effect == EffectDeny {
				out = append(out, v)
			}
		}
	}
	return out
}
