package shscript

import "testing"

// What held-out trials 46s68a, c and d showed, each cut down.
func TestTrial46s68zIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// quorum's helm/deploy.sh (46s68c D3): a bare name in [[ -eq ]] is the variable
		{name: "[[ i -eq 0 ]] in a loop over i", script: "for i in {0..2}; do\n  if [[ i -eq 0 ]]; then R=\"rpc-$((i+1))\"; else R=\"validator-${i}\"; fi\n  helm upgrade --install $R ./chart -n q\ndone\n",
			files: map[string]string{"chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n"},
			want:  []string{"release: rpc-1", "release: validator-1", "release: validator-2"}},
		{name: "(( i == 0 )) and [[ i+1 -gt 1 ]]", script: "for i in 0 1; do\n  if (( i == 0 )); then kubectl create namespace a$i; fi\n  if [[ i+1 -gt 1 ]]; then kubectl create namespace b$i; fi\ndone\n",
			want: []string{"name: a0\n", "name: b1\n"}, never: []string{"name: a1\n", "name: b0\n"}},
	})
}

// testapp-chart-dynamic's helm_install.sh (46s68d D1, N5): what minikube,
// kind or k3d only print is nothing to carry, and nothing is said of it
func TestPrintOnlyClusterToolCommands(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nkubectl create namespace shop\nminikube service list\nminikube -p dev service web --url\nminikube ip\nminikube status\nminikube profile list\nkind get clusters\nk3d cluster list\nminikube start\n"})
	if len(res.Model.NotCarried) != 1 || res.Model.NotCarried[0].Line != 11 || len(res.Model.Info) != 0 {
		t.Errorf("not carried %v, said %v", res.Model.NotCarried, res.Model.Info)
	}
}

// keunlee's k8s/openldap/install.sh (46s68a D2): kubectl exec $POD is not
// carried because khook has no step for exec, not because $POD is unquoted
func TestExecOnAnUnquotedPodSaysTheTrueReason(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "kubectl exec $POD", script: "POD=$(kubectl get po -l app=ldap -o name)\nkubectl exec $POD -- ldapadd -f /x.ldif\nkubectl -n ns1 cp x.ldif $POD:/x.ldif\nkubectl create namespace y\n",
			want:       []string{"name: namespace-y"},
			notCarried: []string{"khook has no step for kubectl exec; run it as a job: step", "khook has no step for kubectl cp; run it as a job: step"}},
	})
}

// quorum's helm/deploy.sh (46s68c D2): a kubectl command in a loop's
// retry branch, skipped on the one turn the import walks, is named; one
// under a test of what the loop does not set is not
func TestLaterTurnOfALoopIsNamed(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "if [ $RETRY -ge 3 ] in a while loop", script: "RETRY=0; OK=false; MODE=a\nwhile [ \"$OK\" != true ]; do\n  if [ $RETRY -ge 3 ]; then\n    kubectl delete ns demo\n    exit 1\n  fi\n  if [ \"$MODE\" = b ]; then kubectl delete ns other; fi\n  kubectl create namespace demo\n  OK=$(kubectl get ns demo -o jsonpath='{.status.phase}')\n  RETRY=$((RETRY+1))\ndone\n",
			want:       []string{"name: namespace-demo"},
			notCarried: []string{"a loop khook cannot unroll", "under [ $RETRY -ge 3 ] (install.sh:5), which can hold on a later turn of the loop at install.sh:4"}},
	})
}

// 46s68c D3: where an unquoted variable is not known because it was set
// under a condition khook cannot decide, the reason names that condition
func TestUnknownSplitNamesTheConditionThatSetIt(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "$R set under an undecided if", script: "if [ -n \"$(ls /tmp)\" ]; then R=a; else R=b; fi\nhelm upgrade --install $R ./chart -n q\nkubectl create namespace y\n",
			want:       []string{"name: namespace-y"},
			notCarried: []string{"the unquoted $R is split into words only when the script runs, and its value is not known at import ($R is set under the condition at install.sh:3, which khook cannot decide; it may hold flags or the chart)"}},
	})
}
