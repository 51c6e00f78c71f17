package shscript

import (
	"strings"
	"testing"

	"github.com/khook/khook/internal/importer"
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

// 46s70s D1 (KaayJob's deploy.sh:72): kubectl apply -f of a directory
// holding a kustomization.yaml sends it as an object kubectl refuses;
// the others are applied, and the advice is apply -k, not "fix the
// manifest".
func TestTrial46s70sKustomizationInAppliedDir(t *testing.T) {
	ns := "apiVersion: v1\nkind: Namespace\nmetadata: {name: kaay}\n"
	res := importScript(t, map[string]string{"install.sh": "set -e\nkubectl apply -f k8s/\n", "k8s/ns.yaml": ns,
		"k8s/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [ns.yaml]\n"})
	spec := string(res.Spec)
	for _, want := range []string{"file: ./k8s/ns.yaml", "k8s/kustomization.yaml is a kustomization, which kubectl apply -f sends as an object of kind Kustomization", "write kubectl apply -k k8s/ instead"} {
		if !strings.Contains(spec, want) {
			t.Errorf("want %q in\n%s", want, spec)
		}
	}
	if strings.Contains(spec, "k8s/kustomization.yaml\n") || strings.Contains(spec, "metadata.name") {
		t.Errorf("the kustomization is applied as a manifest:\n%s", spec)
	}
}

// Only a path that starts with the run directory is made relative: a
// path relative to the spec's folder may hold its name too.
func TestRelativeNotesOnlyAtAPathsStart(t *testing.T) {
	tr := &translator{runDir: "/r/x", m: &importer.Model{Info: []importer.Note{{What: "kubectl apply -f /r/x/m/", Why: "manifest ../../r/x/a.yaml: not there (\"/r/x/b.yaml\")"}}}}
	tr.relativeNotes()
	if n := tr.m.Info[0]; n.What != "kubectl apply -f m/" || n.Why != "manifest ../../r/x/a.yaml: not there (\"b.yaml\")" {
		t.Errorf("%q / %q", n.What, n.Why)
	}
}
