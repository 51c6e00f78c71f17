package shscript

import "testing"

// What held-out trials of stop 68 showed, each cut down.
func TestTrial46s68Idioms(t *testing.T) {
	child := "#!/bin/bash\nhelm upgrade --install prom prometheus --repo https://e.com -n \"${NS:-default}\"\n"
	checkIdioms(t, []idiom{
		// a variable set and never exported is unset in a script run as a process of its own
		{name: "bash child.sh sees no unexported variable", script: "NS=monitoring\nbash ./child.sh\n",
			files: map[string]string{"child.sh": child}, want: []string{"namespace: ${NS}", `NS: {type: string, default: "default"}`}},
		{name: "an exported variable, and a NAME=v prefix, reach it", script: "export NS=monitoring\nbash ./child.sh\nNS=edge ./child.sh\n",
			files: map[string]string{"child.sh": child}, want: []string{"namespace: monitoring", "namespace: edge"}},
	})
}

func TestTrial46s68CatSed(t *testing.T) {
	checkIdioms(t, []idiom{
		// tluck/OpsMgr-in-Kubernetes-and-Docker's deploy_ldap.bash: cat f | sed … > out, then create -f out (46s68a's D1)
		{name: "cat FILE | sed > out", script: "T=LoadBalancer\ncat svc.yaml | sed -e \"s/SERVICETYPE/$T/g\" > my.yaml\nkubectl create -f my.yaml\n",
			files: map[string]string{"svc.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  type: SERVICETYPE\n  ports:\n  - port: 80\n"},
			want:  []string{"type: LoadBalancer", "# from install.sh:5"}},
	})
}
