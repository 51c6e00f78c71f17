package shscript

import (
	"strings"
	"testing"
)

// What held-out trial 46zr (e-commerce and web-analytics installers, run
// once on e1c4ecb) showed: no command carried wrong, two notes misleading.

// N1 (a Saleor deploy): an apply of a file no commit had and nothing in
// the script makes says bash's command fails too, not "import again once
// it exists".
func TestApplyOfAFileNothingMakes(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nkubectl apply -f manifests/01-namespace.yaml\n"})
	if nc := res.Model.NotCarried; len(nc) != 1 || !strings.Contains(nc[0].Why, "nothing in the script makes it, so bash's command fails too") {
		t.Errorf("not carried %v", nc)
	}
}

// N2 (Sylius): kubectl delete deployment,service,rs --all is one command
// of three steps, counted once.
func TestMultiKindDeleteCountedOnce(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nkubectl delete deployment,service,rs --all -n shop\n"})
	if len(res.Model.Commands) != 1 || len(res.Model.Steps) != 3 {
		t.Errorf("commands %v, %d steps", res.Model.Commands, len(res.Model.Steps))
	}
}
