package model

import (
	"encoding/json"

	"github.com/khook/khook/spec"
)

// MarshalJSON writes the result with, besides skip, the "excluded": true
// earlier versions wrote for a step left out before the run.
func (s StepResult) MarshalJSON() ([]byte, error) {
	type plain StepResult
	return json.Marshal(struct {
		plain
		Excluded bool `json:"excluded,omitempty"`
	}{plain(s), s.Skip.Excluded()})
}

// MarshalJSON writes the step with, besides skip, the "excluded": true
// earlier versions wrote for a step left out before the run.
func (s PlanStep) MarshalJSON() ([]byte, error) {
	type plain PlanStep
	return json.Marshal(struct {
		plain
		Excluded bool `json:"excluded,omitempty"`
	}{plain(s), s.Skip.Excluded()})
}

// UnmarshalJSON reads a step, of a plan file an earlier version saved too
// ("excluded": true without skip is when: false).
func (s *PlanStep) UnmarshalJSON(data []byte) error {
	type plain PlanStep
	var v struct {
		plain
		Excluded bool `json:"excluded"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*s = PlanStep(v.plain)
	if v.Excluded && s.Skip == "" {
		s.Skip = spec.SkipWhen
	}
	return nil
}
