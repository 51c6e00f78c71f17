package shscript

import "testing"

// What held-out trials 46s67s and others showed, fixed by 46s68y, each cut down.
func TestTrial46s68yIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// gupta-tilak/docs-agent's deploy-milvus.sh: a counter the poll loop
		// raises is not known after it, so the give-up branch's get is counted (D3)
		{name: "a read in the give-up branch after a poll loop", script: "kubectl apply -f m.yaml\na=0\nwhile [[ $a -lt 30 ]]; do\n  [[ -n \"$(kubectl get pods -n demo -l app=x -o name)\" ]] && break\n  ((a++)); sleep 10\ndone\nif [[ $a -ge 30 ]]; then kubectl get pods -n demo -o wide; exit 1; fi\n",
			files: map[string]string{"m.yaml": configMap}, want: []string{"helm/kubectl commands: 3, of which 1 became steps, 0 were folded into steps, 2 are read-only"},
			notCarried: []string{"a loop that polls the cluster until what it reads changes"}},
	})
}
