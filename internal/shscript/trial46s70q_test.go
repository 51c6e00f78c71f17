package shscript

import (
	"strings"
	"testing"
)

// 46s70q D1 (KubeEstateHub's deploy-all.sh:158): a directory the script
// names through SCRIPT_DIR=$(cd … && pwd) is quoted in the header
// relative to where the script runs, never as the import machine's path.
func TestTrial46s70qNoMachinePathInNotes(t *testing.T) {
	script := "set -e\nSCRIPT_DIR=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)\"\nkubectl apply -f \"$SCRIPT_DIR/m/\"\n"
	res := importScript(t, map[string]string{"install.sh": script, "m/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\n"})
	if spec := string(res.Spec); !strings.Contains(spec, "kubectl apply -f m/: a directory") || strings.Contains(spec, "/m/: a directory") {
		t.Errorf("the header quotes the machine's path:\n%s", res.Spec)
	}
}
