package shscript

import "testing"

// What held-out trial 46s68i showed, each cut down.
func TestTrial46s68w5Idioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// Andrewed95/Messenger's deploy-all.sh:708 (D5): the loop gives up after 60s
		{name: "a poll loop with a counted give-up", script: "waited=0\nwhile ! kubectl get crd servicemonitors.monitoring.coreos.com; do\n  if [[ $waited -ge 60 ]]; then exit 1; fi; sleep 5; waited=$((waited + 5)); done\n",
			want: []string{"condition=Established", "timeout: 1m\n"}},
		{name: "a poll loop counted before its give-up", script: "f() {\n  local n=0 max=10\n  until kubectl get crd a.b.io; do\n    ((n++)); [[ $n -gt $max ]] && return 1; sleep 3; done\n}\nf\n",
			want: []string{"timeout: 30s\n"}},
		{name: "a poll loop with a give-up khook cannot count", script: "waited=0\nwhile ! kubectl get crd a.b.io; do\n  [[ $waited -ge $MAX ]] && exit 1; sleep 5; ((waited+=5)); done\n",
			want: []string{"the step waits khook's default timeout, 5m: write the script's time as its timeout:"}},
	})
}
