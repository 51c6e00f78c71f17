package plan

import (
	"fmt"
	"strings"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/kube"
)

// warned records the warnings of the step's dry runs (the API server's
// and khook's own) and, under --warnings-as-errors, plans the step as fail
// with the API server's.
func (pr *probe) warned(w *kube.Warnings) {
	var lines []string
	for _, x := range w.List() {
		wr := model.Warning{From: x.From, Object: pr.Redactor.String(x.Object), Message: pr.Redactor.String(x.Message)}
		pr.out.Warnings = append(pr.out.Warnings, wr)
		if wr.ByAPIServer() {
			lines = append(lines, wr.String())
		}
	}
	if pr.WarningsAsErrors && len(lines) > 0 && pr.out.Action != model.ActionFail {
		pr.out.Action = model.ActionFail
		pr.out.Reason = fmt.Sprintf("the API server warned (warnings-as-errors is set): %s", strings.Join(lines, "; "))
	}
}
