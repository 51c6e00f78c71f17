package model

import (
	"github.com/khook/khook/spec"
)

// Input is one declared variable as a run used it. Secret values are never
// carried: Value is "***" for them.
type Input struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Value  string `json:"value"`
	Source string `json:"source"` // --set, environment KHOOK_VAR_X, --var-file, default, unset
	Secret bool   `json:"secret,omitempty"`
}

// MaskedValue stands in for a secret input's value.
const MaskedValue = "***"

// InputsOf lists the inputs a loaded spec declares, secrets masked.
func InputsOf(s *spec.Spec) []Input {
	if s == nil || s.Declared == nil {
		return nil
	}
	out := make([]Input, 0, len(s.Declared.Vars))
	for _, v := range s.Declared.Vars {
		in := Input{Name: v.Name, Type: v.Type, Value: v.Value, Source: v.Source, Secret: v.Secret}
		if v.Secret && v.Value != "" {
			in.Value = MaskedValue
		}
		out = append(out, in)
	}
	return out
}
