package shscript

import (
	"strings"
	"testing"
)

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

// kubectl's generators as kubectl 1.37 makes their objects (46s68d's N1).
func TestTrial46s68Generators(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "create deployment, then expose it", script: "kubectl create deployment web --image=nginx:1.25 --port=80 --replicas=2 -n shop\nkubectl expose deployment web --port=8080 --target-port=80 --type=NodePort -n shop\n",
			want: []string{"kind: Deployment", "replicas: 2", "name: nginx", "containerPort: 80", "kind: Service", "port: 8080", "targetPort: 80", "type: NodePort", "selector:\n                app: web"}},
		{name: "expose without --port takes the container's", script: "kubectl create deploy api --image=ghcr.io/x/api:1 --port 9000\nkubectl expose deploy/api\n",
			want: []string{"port: 9000\n                  protocol: TCP\n                  targetPort: 9000"}},
		{name: "run a pod that keeps running, with --expose", script: "kubectl run cache --image=redis:7 --port=6379 --expose\n",
			want: []string{"kind: Pod", "run: cache", "restartPolicy: Always", "dnsPolicy: ClusterFirst", "kind: Service", "port: 6379"}},
		{name: "expose of what the script did not make", script: "kubectl apply -f d.yaml\nkubectl expose deployment other --port 80\n",
			files:      map[string]string{"d.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: other}\n"},
			notCarried: []string{"kubectl expose reads the selector and ports of deployment other from the cluster"}},
		{name: "an image whose name kubectl suffixes at random", script: "kubectl create deployment w --image=my_app:1\n",
			notCarried: []string{"random suffix"}},
	})
}

// bishwesh-kumar/jmeter-gke's jmeter_cluster_create.sh: "$1", or a read
// answer, then kubectl: one line, one command, the read's path named (46s68b's D2).
func TestTrial46s68OneLineOneCommand(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\ntenant=\"$1\"\nif [ -z \"$tenant\" ]; then read tenant; fi\nkubectl create namespace $tenant\n"})
	if f := fateAt(res.Model, 5); f != "step" || len(res.Model.NotCarried) != 1 || !strings.Contains(res.Model.NotCarried[0].Why, "on the script's other path") {
		t.Errorf("line 5: %q; not carried %v", f, res.Model.NotCarried)
	}
}
