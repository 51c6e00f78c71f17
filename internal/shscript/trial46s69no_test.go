package shscript

import "testing"

// What held-out trials 46s69n and 46s69o showed, each cut down.
func TestTrial46s69noIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// cartyc/rancher-master-class's install.sh: kubectl ns, the kubens plugin (n's D2)
		{name: "kubectl ns NS", script: "kubectl create ns flux\nkubectl ns flux\nkubectl create configmap demo --from-literal=a=b\n",
			want: []string{"namespace: flux\n            data:", "1 were folded"}},
	})
}
