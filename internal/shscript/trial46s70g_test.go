package shscript

import (
	"strings"
	"testing"

	"github.com/khook/khook/internal/importer"
)

// What held-out trial 46s70f (run once, on 00381bc) showed, each cut down.
func TestTrial46s70fOutputDirIdioms(t *testing.T) {
	charts := map[string]string{"a/Chart.yaml": "apiVersion: v2\nname: a\nversion: 0.1.0\n", "a/templates/cm.yaml": configMap,
		"b/Chart.yaml": "apiVersion: v2\nname: b\nversion: 0.1.0\n", "b/templates/cm.yaml": configMap}
	checkIdioms(t, []idiom{
		// serbangilvitu/wikijs-demo's k8s-setup.sh:54, :65 (D3): two helm
		// template --output-dir into one folder are two commands
		{name: "two helm template --output-dir into one folder", script: "helm template ra ./a --output-dir=out\nhelm template rb ./b --output-dir=out\nkubectl create ns a\n",
			files: charts, want: []string{"helm/kubectl commands: 3, of which 1 became steps, 0 were folded into steps, 2 are read-only"}},
		{name: "two helm template --output-dir, then kubectl apply -R of the folder", script: "helm template ra ./a -n x --output-dir=out\nhelm template rb ./b -n x --output-dir=out\nkubectl apply -R -f out\n",
			files: charts, want: []string{"helm/kubectl commands: 3, of which 2 became steps, 1 were folded into steps", "release: ra", "release: rb"}},
		{name: "the same chart rendered twice into one folder, then kubectl apply -R of it", script: "helm template ra ./a -n x --output-dir=out\nhelm template ra2 ./a -n x --output-dir=out\nkubectl apply -R -f out\n",
			files: charts, want: []string{"helm/kubectl commands: 3, of which 1 became steps, 1 were folded into steps, 1 are read-only", "release: ra2"}, never: []string{"release: ra\n"}},
		{name: "helm template > f written over before an apply reads it", script: "helm template ra ./a -n x > m.yaml\nhelm template rb ./b -n x > m.yaml\nkubectl apply -f m.yaml\n",
			files: charts, want: []string{"helm/kubectl commands: 3, of which 1 became steps, 1 were folded into steps, 1 are read-only", "release: rb"}},
		// the same script's :60, :71 (D4): the apply of one file helm
		// template --output-dir rendered is named with the line rendering
		// it, not "nothing in the script makes it"
		{name: "kubectl apply -f DIR/<chart>/templates/x.yaml of a helm template --output-dir DIR", script: "helm template ra ./a --output-dir=out\nhelm template rb ./b --output-dir=out\nkubectl apply -f out/a/templates/cm.yaml\nkubectl create ns a\n",
			files: charts, want: []string{"helm/kubectl commands: 4, of which 1 became steps, 0 were folded into steps, 2 are read-only, 1 not carried"},
			notCarried: []string{"out/a/templates/cm.yaml is what helm template --output-dir at install.sh:3 renders when the script runs, and khook's helm step installs a whole chart, not part of one: write the object it renders as a manifest in an apply: step"}},
		{name: "kubectl apply -f of a Secret helm template --output-dir renders", script: "helm template ra ./a --output-dir=out --set pw=$PW\nkubectl apply -f out/a/templates/s.yaml\nkubectl create ns a\n",
			files:      map[string]string{"a/Chart.yaml": "apiVersion: v2\nname: a\nversion: 0.1.0\n", "a/templates/s.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {pw: {{ .Values.pw }}}\n"},
			notCarried: []string{"write the Secret it renders as a manifest in an apply: step, its values from secret variables, never its rendered text"}},
		{name: "kubectl apply -R -f DIR/<chart> of a helm template --output-dir DIR", script: "helm template ra ./a -n x --output-dir=out\nhelm template rb ./b -n x --output-dir=out\nkubectl apply -R -f out/b\n",
			files: charts, want: []string{"helm/kubectl commands: 3, of which 1 became steps, 1 were folded into steps, 1 are read-only", "release: rb"}, never: []string{"release: ra"}},
		{name: "kubectl apply -f DIR/<chart>/… of a chart no helm template renders there", script: "helm template ra ./a --output-dir=out\nkubectl apply -f out/c/templates/cm.yaml\nkubectl create ns a\n",
			files:      charts,
			notCarried: []string{"where helm template --output-dir at install.sh:3 renders the charts a, none named c, so bash's command fails too: check the path"}},
	})
}

// 46s70f D4: the helm template whose output only an apply not carried
// reads is said so, not "no kubectl apply of the script reads".
func TestTemplateOutputDirReadInPart(t *testing.T) {
	res := importScript(t, map[string]string{"a/Chart.yaml": "apiVersion: v2\nname: a\nversion: 0.1.0\n", "a/templates/cm.yaml": configMap,
		"install.sh": "#!/bin/bash\nset -e\nhelm template ra ./a --output-dir=out\nkubectl apply -f out/a/templates/cm.yaml\nkubectl create ns a\n"})
	for _, c := range res.Model.Commands {
		if c.Line == 3 && !strings.Contains(c.Why, "where only the kubectl apply at install.sh:4 reads, which is not carried") {
			t.Errorf("line 3: %v", c)
		}
	}
	if fateAt(res.Model, 3) != string(importer.FateReadOnly) {
		t.Errorf("line 3: %q", fateAt(res.Model, 3))
	}
}
