package runner

import (
	"fmt"
	"strings"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/kube"
)

// warnings are the API server's warnings a step's attempt collected,
// masked.
func (r *run) warnings(w *kube.Warnings) []model.Warning {
	var out []model.Warning
	for _, x := range w.List() {
		out = append(out, model.Warning{Object: r.Redactor.String(x.Object), Message: r.Redactor.String(x.Message)})
	}
	return out
}

// warningsAsErrors is the failure of a step the API server warned about
// under --warnings-as-errors (as kubectl's flag of that name); nil
// otherwise.
func (r *run) warningsAsErrors(ws []model.Warning) error {
	if !r.WarningsAsErrors || len(ws) == 0 {
		return nil
	}
	lines := make([]string, len(ws))
	for i, w := range ws {
		lines[i] = w.String()
	}
	return fmt.Errorf("the API server warned (warnings-as-errors is set): %s", strings.Join(lines, "; "))
}
