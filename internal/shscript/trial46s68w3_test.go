package shscript

import "testing"

// What held-out trials 46s68e, g and h showed (fixer 46s68w3), each cut down.
func TestTrial46s68w3Idioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// 46s68g's D5, c8sm's 7.2-install-c8.sh: helm template --skip-tests is what an install does
		{name: "helm template --skip-tests | kubectl apply", script: "helm template web nginx --repo https://charts.bitnami.com/bitnami -n web --skip-tests | kubectl apply -n web -f -\n",
			want: []string{"release: web"}},
	})
}
