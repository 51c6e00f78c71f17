package shscript

import "testing"

// What held-out trial 46s67h showed, each cut down.
func TestTrial46s67yIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// idurar's deploy.sh (D7): a poll until a jsonpath is set is a jsonpath wait
		{name: "until V=$(kubectl get -o jsonpath) && [[ -n $V ]]", script: "until LB=$(kubectl get svc web -n demo -o jsonpath='{.status.loadBalancer.ingress[0].hostname}' 2>/dev/null) && [[ -n \"$LB\" ]]; do\n  sleep 5\ndone\n",
			want: []string{"for: jsonpath={.status.loadBalancer.ingress[0].hostname}\n", "\"on\": svc/web"}},
	})
}
