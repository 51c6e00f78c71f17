package report

import (
	"bytes"
	"fmt"

	"github.com/khook/khook/model"
)

// writeWarnings prints "warning: Deployment shop/web: <message>" lines.
func writeWarnings(b *bytes.Buffer, indent string, ws []model.Warning) {
	for _, w := range ws {
		fmt.Fprintf(b, "%swarning: %s\n", indent, w.String())
	}
}

// writeStepWarnings prints every step's warnings after a run's table.
func writeStepWarnings(b *bytes.Buffer, r *model.Results) {
	for _, s := range model.ResultsWarnings(r) {
		fmt.Fprintf(b, "\nstep %s: the API server warned:\n", s.Name)
		writeWarnings(b, "    ", s.Warnings)
	}
}
