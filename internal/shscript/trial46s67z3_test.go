package shscript

import "testing"

// What held-out trial 46s67k showed, each cut down.
func TestTrial46s67z3Idioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// cuedego/openshelter's argocd-bootstrap.sh: "${A[@]+"${A[@]}"}" is the array's words, or none (D2)
		{name: "the set -u idiom for a maybe-empty array", script: "ROLE=\"${ROLE:-}\"\nA=()\nif [[ -n \"$ROLE\" ]]; then A+=(\"--set\" \"sa.role=${ROLE}\"); fi\nhelm upgrade --install eso eso --repo https://e.com -n eso \"${A[@]+\"${A[@]}\"}\" --wait\n",
			want: []string{"role: ${ROLE}", `when: '!(vars.get("ROLE", "") != "")'`}},
	})
}
