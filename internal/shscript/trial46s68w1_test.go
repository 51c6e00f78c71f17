package shscript

import "testing"

// What held-out trials 46s68e and 46s68g showed (fixer 46s68w1), each cut down.
func TestTrial46s68w1Idioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// argo-juunini's install_argo_workflows.sh: rollout status of every deployment, no --timeout (46s68g's D4)
		{name: "rollout status deployment without a name or --timeout", script: "kubectl rollout status deployment -n argo\n",
			want: []string{"\"on\": deployment", "kubectl rollout status without --timeout waits until the rollout is done, without limit"}},
		{name: "rollout status deployment without a name, with --timeout", script: "kubectl rollout status deployment -n argo --timeout=10m\n",
			want: []string{"timeout: 10m"}, never: []string{"without limit"}},
	})
}
