package shscript

import "testing"

// What held-out trial 46s69s showed, each cut down.
func TestTrial46s70aIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// EricNovales/listmonk-gitops's k3s_infra_deploy.sh: wait_rollout_ready
		// returns 0 where the rollout is ready, and only otherwise calls
		// log_err, which exits: the commands after its call run (D1)
		{name: "return 0 on a test khook cannot decide, then a function that exits", script: "log_err() { echo \"$*\"; exit 1; }\nwait_ready() {\n  available=\"$(kubectl -n app get deploy web -o jsonpath='{.status.availableReplicas}' || echo 0)\"\n  if [[ \"$available\" -ge 1 ]]; then return 0; fi\n  log_err \"not ready\"\n}\nwait_ready\nkubectl create namespace after\n",
			want: []string{"name: namespace-after", "the script stops here only where the function did not return first (at install.sh:6"}},
	})
}
