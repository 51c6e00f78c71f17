package shscript

import "testing"

// What held-out trial 46s67e showed, each cut down.
func TestTrial46s67xIdioms(t *testing.T) {
	nsCM := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: x\n"
	checkIdioms(t, []idiom{
		// knative-extensions/eventing-istio's install-dependencies.sh (D1): -Rf is -R -f
		{name: "kubectl apply -Rf DIR", script: "kubectl apply -Rf m\nkubectl apply -n x -Rfm/sub\n",
			files: map[string]string{"m/a.yaml": nsCM, "m/sub/b.yaml": nsCM},
			want:  []string{"- file: ./m/a.yaml\n        - file: ./m/sub/b.yaml\n", "- file: ./m/sub/b.yaml\n      namespace: x"}},
	})
}
