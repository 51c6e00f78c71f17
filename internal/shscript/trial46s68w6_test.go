package shscript

import "testing"

// What held-out trials 46s68m and 46s68n showed, each cut down.
func TestTrial46s68w6Idioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// kubearchive's elasticsearch install.sh: a patch file's own ${QUERY} is literal (46s68n D2)
		{name: "kubectl patch --patch-file of a file with its own ${…}", script: "kubectl create namespace demo\nkubectl patch -n demo configmap cfg --patch-file p.yaml\n",
			files: map[string]string{"p.yaml": "data:\n  q: ${QUERY}\n"},
			want:  []string{"q: $${QUERY}", "name: patch-configmap-cfg"}},
		// the same, quoted in the script: a step the spec refuses only at a
		// line is dropped and named there; the import goes on (no "please report it")
		{name: "kubectl patch -p '…${QUERY}…'", script: "kubectl create namespace demo\nkubectl patch -n demo configmap cfg -p '{\"data\":{\"q\":\"${QUERY}\"}}'\n",
			want:       []string{"name: namespace-demo"},
			notCarried: []string{"khook's spec refuses the step made of it (variable QUERY is not set (pass --set QUERY=..., add it to a --var-file, export KHOOK_VAR_QUERY, or write ${QUERY:-default}; $${QUERY} keeps it literal)); write this step by hand"}},
		// eclipse-hono's 10-deploy-cert-manager.sh: a retry function runs "$@" once, then while $? fails (46s68m D3)
		{name: "retry() { \"$@\"; while [ $? -ne 0 ]; do sleep 2; \"$@\"; done; }", script: "retry() { \"$@\"; while [ $? -ne 0 ]; do sleep 2; \"$@\"; done; }\nretry kubectl apply -f a.yml\n",
			files: map[string]string{"a.yml": configMap},
			want:  []string{"helm/kubectl commands: 1, of which 1 became steps", "name: apply-a\n"}, never: []string{"apply-a-2"}},
		// druid's getting_started.sh: a kubectl exec in a function only a while condition calls (46s68n D3)
		{name: "while [ \"$(fn)\" == RUNNING ] with kubectl exec in fn", script: "kubectl create namespace demo\nstatus() { kubectl exec pod-0 -- curl -s http://x/task; }\nwhile [ \"$(status)\" == \"RUNNING\" ]; do sleep 10; done\n",
			want:       []string{"helm/kubectl commands: 2, of which 1 became steps", "1 not carried", "it gives the command at install.sh:4, which is not carried"},
			notCarried: []string{"the script runs it inside $(…) to take its output"}},
	})
}
