package report

import (
	"bytes"
	"fmt"

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

// writeInputsMD adds a collapsed table of the inputs a run used.
func writeInputsMD(b *bytes.Buffer, inputs []Input) {
	if len(inputs) == 0 {
		return
	}
	fmt.Fprintf(b, "<details><summary>Inputs (%d)</summary>\n\n| Input | Value | Source |\n|---|---|---|\n", len(inputs))
	for _, in := range inputs {
		v := in.Value
		switch {
		case in.Secret:
			v = MaskedValue + " (secret)"
		case v == "":
			v = "(empty)"
		default:
			v = "`" + mdCode(v) + "`"
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", mdCell(in.Name), mdCell(v), mdCell(in.Source))
	}
	b.WriteString("\n</details>\n\n")
}
