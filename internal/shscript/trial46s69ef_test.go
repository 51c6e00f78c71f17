package shscript

import (
	"path/filepath"
	"strings"
	"testing"
)

// 46s69e D1: a manifest whose file name starts with a variable
// ("${P}cm.yaml") is written from the spec's folder, as cm.yaml is.
func TestTrial46s69eNamePrefixRebased(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "install.sh", "#!/bin/bash\nset -e\nkubectl apply -f cm.yaml\nkubectl apply -f \"${P:-}cm.yaml\"\nkubectl apply -f \"${D:-k8s}/cm.yaml\"\n")
	write(t, dir, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\n")
	res, err := Import("install.sh", Options{Dir: dir, SpecDir: filepath.Join(dir, "out")})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"file: ../cm.yaml\n", "file: ../${P}cm.yaml\n", "file: ${D}/cm.yaml\n"} {
		if !strings.Contains(string(res.Spec), w) {
			t.Errorf("want %q in\n%s", w, res.Spec)
		}
	}
}
