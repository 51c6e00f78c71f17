package shscript

import "testing"

// What held-out trial 46s67q showed, each cut down (fixer 46s68x).
func TestTrial46s68xIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// sierra's deploy-datadog.sh (D1): a guard in a function called from
		// the case branch the known subject picks is the script's
		{name: "an exit 1 guard in a function called from a decided case branch",
			script: "check() { if [[ -z \"${KEY:-}\" ]]; then echo \"KEY not set\"; exit 1; fi; }\nmain() { case \"${1:-}\" in deploy) check\n  kubectl create secret generic s --from-literal=k=\"$KEY\" -n x --dry-run=client -o yaml | kubectl apply -f - ;; esac; }\nmain deploy\n",
			want:   []string{"KEY: {type: string, secret: true, required: true, description: \"the script stops without it"}},
	})
}
