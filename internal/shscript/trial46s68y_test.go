package shscript

import (
	"strings"
	"testing"
)

// What held-out trials 46s67s and others showed, fixed by 46s68y, each cut down.
func TestTrial46s68yIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// gupta-tilak/docs-agent's deploy-milvus.sh: a counter the poll loop
		// raises is not known after it, so the give-up branch's get is counted (D3)
		{name: "a read in the give-up branch after a poll loop", script: "kubectl apply -f m.yaml\na=0\nwhile [[ $a -lt 30 ]]; do\n  [[ -n \"$(kubectl get pods -n demo -l app=x -o name)\" ]] && break\n  ((a++)); sleep 10\ndone\nif [[ $a -ge 30 ]]; then kubectl get pods -n demo -o wide; exit 1; fi\n",
			files: map[string]string{"m.yaml": configMap}, want: []string{"helm/kubectl commands: 3, of which 1 became steps, 0 were folded into steps, 2 are read-only"},
			notCarried: []string{"a loop that polls the cluster until what it reads changes"}},
		// several trials: a values file missing where the import runs is one helm refuses
		{name: "a values file that is not there", script: "helm upgrade --install web ./chart -n web -f ok.yaml --values missing.yaml\n",
			files: map[string]string{"chart/Chart.yaml": chartYAML, "ok.yaml": "a: 1\n"}, want: []string{"file: ./missing.yaml"},
			notCarried: []string{"the file missing.yaml does not exist under the import's dir; helm would fail here; add it, or import with the --dir the script runs from"}},
		// … but not one the script writes before it reads it
		{name: "values files the script writes", script: "cat > a.yaml <<EOF\na: 1\nEOF\nhelm show values ./chart > b.yaml\n./gen.sh > c.yaml\nhelm upgrade --install web ./chart -n web -f a.yaml -f b.yaml -f c.yaml\n",
			files: map[string]string{"chart/Chart.yaml": chartYAML, "gen.sh": "#!/bin/sh\necho c: 1\n"}, want: []string{"file: ./c.yaml"}},
		// celesrenata's runmefirst.sh: kubectl apply -f DIR applies the
		// manifests and refuses the values file beside them (46s67s's D2)
		{name: "kubectl apply -f DIR with a values file in it", script: "set +e\nkubectl apply -f d -n web\n",
			files: map[string]string{"d/cm.yaml": configMap, "d/pvc.yaml": "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n", "d/values.yaml": "apiKey: s3cr3t-46s68y\n"},
			want:  []string{"file: ./d/cm.yaml", "file: ./d/pvc.yaml", "d/values.yaml holds no Kubernetes object (no kind): kubectl refuses it after it applies the others, and the script goes on past that error"},
			never: []string{"s3cr3t-46s68y"}},
		{name: "kubectl apply -f DIR with a values file in it, under set -e", script: "kubectl apply -f d -n web\nkubectl create ns x\n",
			files: map[string]string{"d/cm.yaml": configMap, "d/values.yaml": "apiKey: s3cr3t-46s68y\n"},
			want:  []string{"file: ./d/cm.yaml", "under set -e the script stops there", "under set -e that failure ends the script, so bash never runs"},
			never: []string{"s3cr3t-46s68y", "file: ./d/values.yaml"}},
	})
}

const chartYAML = "apiVersion: v2\nname: web\nversion: 0.1.0\n"

// several trials: a sleep that is nothing to carry is a note, listed apart
// from the differences, so "Carried with a difference" holds only those.
func TestTrial46s68ySleepIsANote(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nkubectl apply -f m.yaml -n x\nsleep 10\n", "m.yaml": configMap})
	spec := string(res.Spec)
	if strings.Contains(spec, "Carried with a difference") || !strings.Contains(spec, "# Notes, nothing differs (1):\n#   install.sh:4: sleep 10: nothing to carry") {
		t.Errorf("want the sleep under Notes only:\n%s", spec)
	}
}
