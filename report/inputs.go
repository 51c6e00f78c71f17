package report

import (
	"bytes"
	"fmt"

	"github.com/khook/khook/model"
)

// writeInputsMD adds a collapsed table of the inputs a run used.
func writeInputsMD(b *bytes.Buffer, inputs []model.Input) {
	if len(inputs) == 0 {
		return
	}
	fmt.Fprintf(b, "<details><summary>Inputs (%d)</summary>\n\n| Input | Value | Source |\n|---|---|---|\n", len(inputs))
	for _, in := range inputs {
		v := in.Value
		switch {
		case in.Secret:
			v = model.MaskedValue + " (secret)"
		case v == "":
			v = "(empty)"
		default:
			v = "`" + mdCode(v) + "`"
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", mdCell(in.Name), mdCell(v), mdCell(in.Source))
	}
	b.WriteString("\n</details>\n\n")
}
