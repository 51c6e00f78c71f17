package shscript

import "testing"

// What held-out trial 46s70f (run once, on 00381bc) showed, each cut down.
func TestTrial46s70fIdioms(t *testing.T) {
	charts := map[string]string{"a/Chart.yaml": "apiVersion: v2\nname: a\nversion: 0.1.0\n", "a/templates/cm.yaml": configMap,
		"b/Chart.yaml": "apiVersion: v2\nname: b\nversion: 0.1.0\n", "b/templates/cm.yaml": configMap}
	checkIdioms(t, []idiom{
		// serbangilvitu/wikijs-demo's k8s-setup.sh:54, :65 (D3): two helm
		// template --output-dir into one folder are two commands
		{name: "two helm template --output-dir into one folder", script: "helm template ra ./a --output-dir=out\nhelm template rb ./b --output-dir=out\nkubectl create ns a\n",
			files: charts, want: []string{"helm/kubectl commands: 3, of which 1 became steps, 0 were folded into steps, 2 are read-only"}},
		{name: "two helm template --output-dir, then kubectl apply -R of the folder", script: "helm template ra ./a -n x --output-dir=out\nhelm template rb ./b -n x --output-dir=out\nkubectl apply -R -f out\n",
			files: charts, want: []string{"helm/kubectl commands: 3, of which 2 became steps, 1 were folded into steps", "release: ra", "release: rb"}},
		{name: "helm template > f written over before an apply reads it", script: "helm template ra ./a -n x > m.yaml\nhelm template rb ./b -n x > m.yaml\nkubectl apply -f m.yaml\n",
			files: charts, want: []string{"helm/kubectl commands: 3, of which 1 became steps, 1 were folded into steps, 1 are read-only", "release: rb"}},
	})
}
