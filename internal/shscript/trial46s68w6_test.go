package shscript

import "testing"

// What held-out trials 46s68m and 46s68n showed, each cut down.
func TestTrial46s68w6Idioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// kubearchive's elasticsearch install.sh: a patch file's own ${QUERY} is literal (46s68n D2)
		{name: "kubectl patch --patch-file of a file with its own ${…}", script: "kubectl create namespace demo\nkubectl patch -n demo configmap cfg --patch-file p.yaml\n",
			files: map[string]string{"p.yaml": "data:\n  q: ${QUERY}\n"},
			want:  []string{"q: $${QUERY}", "name: patch-configmap-cfg"}},
	})
}

// A step khook's spec refuses only at a line of the spec written (a ${…}
// the script quotes, no variable declares) is dropped and named at its
// line; the import goes on (trial 46s68n's D2: nothing written, "please
// report it").
func TestTrial46s68w6RefusedAtALine(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "kubectl patch -p '…${QUERY}…'", script: "kubectl create namespace demo\nkubectl patch -n demo configmap cfg -p '{\"data\":{\"q\":\"${QUERY}\"}}'\n",
			want: []string{"name: namespace-demo"}, notCarried: []string{"khook's spec refuses the step made of it (variable QUERY is not set (pass --set QUERY=..., add it to a --var-file, export KHOOK_VAR_QUERY, or write ${QUERY:-default}; $${QUERY} keeps it literal)); write this step by hand"}},
	})
}
