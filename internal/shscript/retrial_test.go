package shscript

import (
	"strings"
	"testing"
)

// The second trial on the 12 scripts (#46).

const configMap = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"

// A helm or kubectl command as an if's condition whose failure the script
// carries on after (armada's `if kubectl apply …; else echo "leaving them
// as-is"; fi`, or no else) is said at its line as `cmd || true` is: the
// step fails the run where the script carried on. Not when the failure
// branch exits; a delete ignores a missing object.
func TestIfConditionFailureSaid(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
if kubectl apply -f pc.yaml; then
  echo applied
else
  echo "leaving them as-is"
fi
if helm upgrade --install app ./app; then echo ok; fi
if ! kubectl apply -f b.yaml; then
  echo failed; exit 1
fi
if kubectl delete job old -n apps; then echo gone; fi
if kubectl apply -f b.yaml; then echo ok; else exit 1; fi
`, "pc.yaml": configMap, "b.yaml": configMap, "app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n"})
	if len(res.Model.Steps) != 5 {
		t.Fatalf("fates %v", res.Model.Commands)
	}
	lines := infoLines(res.Model, "the script ignores its failure")
	if len(lines) != 3 || lines[0] != 2 || lines[1] != 7 || lines[2] != 11 {
		t.Fatalf("notes at %v, want 2, 7 and 11: %v", lines, res.Model.Info)
	}
	if n := res.Model.Info[0]; !strings.Contains(n.Why, `(if …; else echo "leaving them as-is"; fi) and carries on`) {
		t.Errorf("note %s", n)
	}
	if d := res.Model.Steps[3].Out.Delete; d == nil || !*d.IgnoreNotFound {
		t.Errorf("delete %+v", res.Model.Steps[3].Out)
	}
}
