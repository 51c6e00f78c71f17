package shscript

import "testing"

// What held-out trial 46s69m showed, each cut down.
func TestTrial46s69mIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// eksai's install.sh (D1): a branch an argument turns on is named, not dropped
		{name: "a branch guarded by $# without the arguments", script: "DEPLOY=false\nif [ $# -eq 1 ]; then TOKEN=\"$1\"; DEPLOY=true; fi\nif [ \"$DEPLOY\" = true ]; then\n  kubectl create namespace ai\nfi\nkubectl create namespace other\n",
			want:       []string{"name: namespace-other"},
			notCarried: []string{"what the script does when it is given arguments ($# at install.sh:4 was counted without them)"}},
	})
}
