package report

import (
	"bytes"
	"fmt"

	"github.com/khook/khook/model"
)

// WarningLine is one warning as a line of text, saying whose it is when
// it is khook's: "warning: Deployment shop/web: <message>" (the API
// server's), "warning from khook: CRD x: <message>".
func WarningLine(w model.Warning) string {
	if w.ByAPIServer() {
		return "warning: " + w.String()
	}
	return "warning from khook: " + w.String()
}

// writeWarnings prints a step's warnings, one WarningLine each.
func writeWarnings(b *bytes.Buffer, indent string, ws []model.Warning) {
	for _, w := range ws {
		fmt.Fprintf(b, "%s%s\n", indent, WarningLine(w))
	}
}

// warned is the heading of one warner's warnings about a step: "the API
// server warned", "khook warned".
func warned(from model.Warner) string {
	if from == model.WarnerKhook {
		return "khook warned"
	}
	return "the API server warned"
}

// writeStepWarnings prints every step's warnings after a run's table,
// under whose they are.
func writeStepWarnings(b *bytes.Buffer, r *model.Results) {
	for _, s := range model.ResultsWarnings(r) {
		fmt.Fprintf(b, "\nstep %s: %s:\n", s.Name, warned(s.From))
		for _, w := range s.Warnings {
			fmt.Fprintf(b, "    warning: %s\n", w.String())
		}
	}
}
