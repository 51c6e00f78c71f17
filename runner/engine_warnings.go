package runner

import (
	"fmt"
	"strings"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/kube"
)

// warnings are the warnings a step's attempt collected (the API server's
// and khook's own), masked.
func (r *run) warnings(w *kube.Warnings) []model.Warning {
	var out []model.Warning
	for _, x := range w.List() {
		out = append(out, model.Warning{From: x.From, Object: r.Redactor.String(x.Object), Message: r.Redactor.String(x.Message)})
	}
	return out
}

// warningsAsErrors is the failure of a step the API server warned about
// under --warnings-as-errors (as kubectl's flag of that name); nil
// otherwise. khook's own warnings (a CRD kept) are not the server's and
// never fail a step.
func (r *run) warningsAsErrors(ws []model.Warning) error {
	ws = model.APIServerWarnings(ws)
	if !r.WarningsAsErrors || len(ws) == 0 {
		return nil
	}
	lines := make([]string, len(ws))
	for i, w := range ws {
		lines[i] = w.String()
	}
	return fmt.Errorf("the API server warned (warnings-as-errors is set): %s", strings.Join(lines, "; "))
}
