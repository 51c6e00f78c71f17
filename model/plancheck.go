package model

import (
	"fmt"
	"sort"
	"strings"
)

// Plan check modes (the CI input plan-check).
const (
	PlanCheckStrict = "strict"
	PlanCheckWarn   = "warn"
	PlanCheckOff    = "off"
)

// Failure reasons of a plan check besides ReasonPlanChanged (go).
const (
	// ReasonPlanNotFound: there is no reviewed plan to check against (a
	// direct push, no khook comment, a comment without a fingerprint).
	ReasonPlanNotFound = "plan-not-found"
)

// PlanCheck is an apply's comparison of the plan reviewed on a pull request
// with the plan made just before applying. Apply refuses (strict) or warns
// (warn) unless it Matches.
type PlanCheck struct {
	Mode       string `json:"mode"`                 // strict | warn
	Source     string `json:"source,omitempty"`     // "pull request #7"
	CommentURL string `json:"commentUrl,omitempty"` // the reviewed comment
	Reviewed   string `json:"reviewed,omitempty"`   // fingerprint on the comment
	Current    string `json:"current,omitempty"`    // fingerprint of the plan now
	// Problem says why there is no reviewed plan to compare with.
	Problem string `json:"problem,omitempty"`
	// Steps are the steps whose predicted action differs, when the comment
	// recorded the reviewed actions.
	Steps []StepActionChange `json:"steps,omitempty"`
	// StepsKnown is whether the reviewed actions were known, so an empty
	// Steps means every action is as reviewed.
	StepsKnown bool `json:"stepsKnown,omitempty"`
	// NothingToApply is whether the plan now neither changes the cluster
	// nor runs a job or restarts a rollout: such an apply needs no review
	// (a pull request whose plan changed nothing gets no comment under
	// comment: on-change).
	NothingToApply bool `json:"nothingToApply,omitempty"`
}

// StepActionChange is one step whose predicted action is not the reviewed
// one; "" stands for a step absent from that plan.
type StepActionChange struct {
	Name     string `json:"name"`
	Reviewed Action `json:"reviewed"`
	Now      Action `json:"now"`
}

// Matches reports whether the plan now is the plan reviewed.
func (c *PlanCheck) Matches() bool {
	return c.Problem == "" && c.Reviewed != "" && c.Reviewed == c.Current
}

// Passes reports whether the apply may go ahead: the plan is the one
// reviewed, or it changes nothing.
func (c *PlanCheck) Passes() bool { return c.Matches() || c.NothingToApply }

// Reason is the failure reason of a check that does not match.
func (c *PlanCheck) Reason() string {
	if c.Problem != "" {
		return ReasonPlanNotFound
	}
	return ReasonPlanChanged
}

// Sentences say what the check found, plain text, one sentence each.
func (c *PlanCheck) Sentences() []string {
	return c.SentencesWith(func(s string) string { return s }, func(text, _ string) string { return text })
}

func (c *PlanCheck) SentencesWith(code func(string) string, link func(text, url string) string) []string {
	src := link(c.Source, c.CommentURL)
	if c.Source == "" {
		src = link("the pull request", c.CommentURL)
	}
	switch {
	case c.NothingToApply && !c.Matches():
		return []string{fmt.Sprintf("The plan now changes nothing in the cluster and runs nothing (fingerprint %s): there is nothing to hold to a review.", code(ShortFingerprint(c.Current)))}
	case c.Problem != "":
		return []string{c.Problem}
	case c.Matches():
		return []string{fmt.Sprintf("The plan matches the one reviewed on %s (fingerprint %s).", src, code(ShortFingerprint(c.Current)))}
	}
	out := []string{fmt.Sprintf("The plan changed since it was reviewed on %s: reviewed fingerprint %s, now %s.",
		src, code(ShortFingerprint(c.Reviewed)), code(ShortFingerprint(c.Current)))}
	if !c.StepsKnown {
		return out
	}
	if len(c.Steps) == 0 {
		return append(out, "Every step's action is as reviewed: what differs is an object's content, an input, the spec or the cluster.")
	}
	parts := make([]string, len(c.Steps))
	for i, s := range c.Steps {
		switch {
		case s.Reviewed == "":
			parts[i] = fmt.Sprintf("%s (new: %s)", s.Name, s.Now)
		case s.Now == "":
			parts[i] = fmt.Sprintf("%s (no longer in the plan; reviewed: %s)", s.Name, s.Reviewed)
		default:
			parts[i] = fmt.Sprintf("%s (reviewed: %s, now: %s)", s.Name, s.Reviewed, s.Now)
		}
	}
	return append(out, "Steps whose action changed: "+strings.Join(parts, ", ")+".")
}

// RefusalVerdict is the verdict of an apply the check refused.
func (c *PlanCheck) RefusalVerdict() Verdict {
	return Verdict{ToneFailed, fmt.Sprintf("Apply refused (%s): nothing was applied.", c.Reason())}
}

// RefusalHint says what to do about a refusal.
func (c *PlanCheck) RefusalHint() string {
	if c.Problem != "" {
		return "Apply plans through reviewed pull requests, or set plan-check: warn (apply with a warning) or off for this workflow."
	}
	return "Review the plan now (below). To apply it, have it reviewed again (a new pull request), or run the apply by hand (workflow_dispatch checks no plan unless plan-check is set)."
}

// CompareSteps lists the steps whose action in p differs from reviewed
// (step name -> action), in p's order, then the steps p no longer has.
func CompareSteps(reviewed map[string]Action, p *Plan) []StepActionChange {
	var out []StepActionChange
	seen := map[string]bool{}
	for _, s := range p.Steps {
		seen[s.Name] = true
		if was := reviewed[s.Name]; was != s.Action {
			out = append(out, StepActionChange{Name: s.Name, Reviewed: was, Now: s.Action})
		}
	}
	var gone []string
	for name := range reviewed {
		if !seen[name] {
			gone = append(gone, name)
		}
	}
	sort.Strings(gone)
	for _, name := range gone {
		out = append(out, StepActionChange{Name: name, Reviewed: reviewed[name]})
	}
	return out
}
