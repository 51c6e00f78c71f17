package shscript

import "testing"

// What held-out trial 46k (run once, on 7b13116) showed carried wrong or
// named with a wrong reason, each cut down.
func TestTrial46kIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// contour's make-kind-cluster.sh: if ${KUBECTL} apply … in a retry loop
		{name: "kubectl through a variable as a condition", script: "KUBECTL=${KUBECTL:-kubectl}\nK=kubectl\nif ${KUBECTL} apply -f m.yaml -n x; then echo applied; fi\nif $K apply -f m.yaml -n y; then echo applied; fi\n",
			files: map[string]string{"m.yaml": configMap}, want: []string{"namespace: x", `namespace: "y"`}},
	})
}
