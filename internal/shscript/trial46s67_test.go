package shscript

import "testing"

// What held-out trials 46s67a–d (run once, on f53f170) showed, each cut down.
func TestTrial46s67Idioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// am4am5/linkerd's upgrade.sh: k, never defined, is a kubectl command named
		{name: "k without an alias", script: "kubectl apply -f m.yaml -n x\nk apply -n linkerd -f m.yaml\n",
			files: map[string]string{"m.yaml": configMap}, want: []string{"helm/kubectl commands: 2"},
			notCarried: []string{"k is not defined in the script (kubectl's alias in an interactive shell"}},
	})
}
