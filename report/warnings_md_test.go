package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/khook/khook/model"
)

// A step's warnings are bounded in the summary, saying how many it left out.
func TestWarningsMDBounded(t *testing.T) {
	var ws []model.Warning
	for i := range maxWarningsPerStep + 5 {
		ws = append(ws, model.Warning{Object: fmt.Sprintf("ConfigMap ns/cm-%d", i), Message: "deprecated"})
	}
	var b bytes.Buffer
	writeWarningsMD(&b, []model.StepWarnings{{Name: "many", From: model.WarnerAPIServer, Warnings: ws}})
	out := b.String()
	if n := strings.Count(out, "\n- "); n != maxWarningsPerStep+1 {
		t.Errorf("%d list lines, want %d warnings and one line for the rest:\n%s", n, maxWarningsPerStep, out)
	}
	if !strings.Contains(out, "… and 5 more") {
		t.Errorf("the summary does not say what it left out:\n%s", out)
	}
}
