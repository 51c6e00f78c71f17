package model

import (
	"fmt"
	"strings"
)

// Selection is which steps a run was asked to run (--target, --target-only,
// --selector, --exclude) and which it ran: the results, the plan, a saved
// plan (apply --plan applies exactly its selection) and the CI outputs
// carry it. A run without a selection has none (nil).
type Selection struct {
	Targets    []string `json:"targets,omitempty"`
	TargetOnly bool     `json:"targetOnly,omitempty"`
	Selector   string   `json:"selector,omitempty"`
	Exclude    []string `json:"exclude,omitempty"`

	// Steps are the selected steps, in spec order; Total is the spec's
	// step count. Partial: fewer steps were selected than the spec has.
	Steps   []string `json:"steps"`
	Total   int      `json:"total"`
	Partial bool     `json:"partial"`
}

// Requested reports whether the selection asks for anything (a zero
// Selection selects every step).
func (s *Selection) Requested() bool {
	return s != nil && (len(s.Targets) > 0 || s.TargetOnly || s.Selector != "" || len(s.Exclude) > 0)
}

// IsPartial reports whether a run of this selection leaves steps out.
func (s *Selection) IsPartial() bool { return s != nil && s.Partial }

// Headline is the summary's first words for a partial run: "partial run:
// 3 of 40 steps" ("" for a full run).
func (s *Selection) Headline() string {
	if !s.IsPartial() {
		return ""
	}
	noun := "steps"
	if s.Total == 1 {
		noun = "step"
	}
	return fmt.Sprintf("partial run: %d of %d %s", len(s.Steps), s.Total, noun)
}

// Flags is the selection as khook's flags write it, for the summaries
// ("--target web --exclude smoke").
func (s *Selection) Flags() string {
	if s == nil {
		return ""
	}
	var parts []string
	for _, t := range s.Targets {
		parts = append(parts, "--target "+t)
	}
	if s.TargetOnly {
		parts = append(parts, "--target-only")
	}
	if s.Selector != "" {
		parts = append(parts, fmt.Sprintf("--selector %q", s.Selector))
	}
	for _, e := range s.Exclude {
		parts = append(parts, "--exclude "+e)
	}
	return strings.Join(parts, " ")
}
