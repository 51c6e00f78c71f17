package shscript

import (
	"strings"
	"testing"

	"github.com/khook/khook/internal/importer"
)

// 46s70o D1 (gym-asset-management-system's deploy.sh:43, imported with
// rolling): a get in a branch the given arguments do not take is read
// in no step either way: read-only, not a loss that makes the import
// partial.
func TestTrial46s70oUntakenGetIsReadOnly(t *testing.T) {
	script := "case \"${1:-}\" in\n  up) kubectl create namespace demo ;;\n  status) kubectl -n demo get pods -o wide ;;\nesac\n"
	res := importScript(t, map[string]string{"install.sh": script}, "up")
	if got := fateAt(res.Model, 3); got != string(importer.FateReadOnly) {
		t.Errorf("line 3: %s, want read-only", got)
	}
	if len(res.Model.NotCarried) != 0 || !strings.Contains(string(res.Spec), "2, of which 1 became steps, 0 were folded into steps, 1 are read-only, 0 not carried") {
		t.Errorf("not carried %v:\n%s", res.Model.NotCarried, res.Spec)
	}
}
