package shscript

import (
	"testing"
)

// What held-out trials 46s67i and 46s67j showed, each cut down.
func TestTrial46s67z2Idioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// cnpg/up.sh (46s67j's D1): a plugin's verb that only prints
		{name: "kubectl cnpg status", script: "kubectl create namespace cnpg\nkubectl cnpg status cluster-example\nkubectl cnpg -n cnpg report cluster c\n",
			want: []string{"name: namespace-cnpg"}},
		// eks-gpu's install.sh (46s67i's D4): a helm values file applied by kubectl
		{name: "kubectl apply -f of a values file", script: "kubectl create namespace a\nkubectl apply -f values.yaml\n",
			files:      map[string]string{"values.yaml": "rules:\n  custom:\n    - metricsQuery: avg(<<.Series>>)\n"},
			notCarried: []string{"values.yaml holds no Kubernetes object (no kind), so kubectl fails there too: a helm values file?"}, never: []string{"metricsQuery", "u003c"}},
	})
}
