package report

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/khook/khook/model"
)

// writeDiagnosisMD is a failed step's diagnosis in the summary and the
// comment: the reason in bold, the rest folded.
func writeDiagnosisMD(b *bytes.Buffer, d *model.Diagnosis) {
	lines := d.Lines()
	if len(lines) == 0 {
		return
	}
	summary := "Diagnosis"
	if d.Reason != "" {
		summary += ": " + mdInline(d.Reason)
	}
	fmt.Fprintf(b, "<details><summary>%s</summary>\n\n%s\n\n</details>\n\n", summary, mdFence("text", strings.Join(lines, "\n")))
}
