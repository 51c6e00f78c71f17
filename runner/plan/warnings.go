package plan

import (
	"fmt"
	"strings"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/kube"
)

// warned records the API server's warnings to the step's dry runs and,
// under --warnings-as-errors, plans the step as fail with them.
func (pr *probe) warned(w *kube.Warnings) {
	var lines []string
	for _, x := range w.List() {
		wr := model.Warning{Object: pr.Redactor.String(x.Object), Message: pr.Redactor.String(x.Message)}
		pr.out.Warnings = append(pr.out.Warnings, wr)
		lines = append(lines, wr.String())
	}
	if pr.WarningsAsErrors && len(lines) > 0 && pr.out.Action != model.ActionFail {
		pr.out.Action = model.ActionFail
		pr.out.Reason = fmt.Sprintf("the API server warned (warnings-as-errors is set): %s", strings.Join(lines, "; "))
	}
}
