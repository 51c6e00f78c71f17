package shscript

import (
	"strings"
	"testing"
)

// What held-out trials 46s67a–d (run once, on f53f170) showed, each cut down.
func TestTrial46s67Idioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// am4am5/linkerd's upgrade.sh: k, never defined, is a kubectl command named
		{name: "k without an alias", script: "kubectl apply -f m.yaml -n x\nk apply -n linkerd -f m.yaml\n",
			files: map[string]string{"m.yaml": configMap}, want: []string{"helm/kubectl commands: 2"},
			notCarried: []string{"k is not defined in the script (kubectl's alias in an interactive shell"}},
		// govau/cga-deploy-sentry's deploy.sh: a here-document through <(cat <<EOF)
		{name: "kubectl apply -f <(cat <<EOF)", script: "kubectl apply -n ns1 -f <(cat <<EOF\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\nEOF\n)\nhelm upgrade --install web ./chart -f <(cat <<EOF\nreplicas: 2\nEOF\n)\n",
			files: map[string]string{"chart/Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\n"},
			want:  []string{"helm/kubectl commands: 2, of which 2 became steps", "  name: c\n", "namespace: ns1", "replicas: 2"}},
		// the same script: a check with -n before get guards the Secret it makes
		{name: "kubectl -n NS get secret as an existence check", script: "if ! kubectl -n ns1 get secret redis; then\n  P=\"$(openssl rand -hex 4)\"\n  kubectl -n ns1 create secret generic redis --from-literal \"p=${P}\"\nfi\n",
			want: []string{"skipIf: exists"}},
		// jijae92/EKSAdmissionPolicy's apply_policies.sh: a kind khook does not know is hedged
		{name: "kubectl apply without -n of a kind that is no built-in one", script: "kubectl apply -f ct.yaml\n",
			files: map[string]string{"ct.yaml": "apiVersion: templates.gatekeeper.sh/v1\nkind: ConstraintTemplate\nmetadata:\n  name: k8sdeny\n"},
			want:  []string{"if ConstraintTemplate is namespaced (no built-in kind: khook cannot tell), kubectl without -n"}},
		// TheEnbyperor/tafarn's kube/apply.sh: sed reads its manifest through <
		{name: "sed … < FILE | kubectl apply -f -", script: "sed -e \"s/(version)/v1/g\" < d.yaml | kubectl apply -f -\n",
			files: map[string]string{"d.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: x\ndata:\n  version: (version)\n"},
			want:  []string{"version: v1"}},
		// suserancher's initRancher.sh: the helm CLI fetched and installed is nothing to carry
		{name: "the helm CLI installed", script: "wget https://get.helm.sh/helm-v3.9.0-linux-amd64.tar.gz\ntar -zxvf helm-v3.9.0-linux-amd64.tar.gz\nsudo mv linux-amd64/helm /usr/local/bin/helm\nrm -rf linux-amd64 helm-v3.9.0-linux-amd64.tar.gz\nkubectl create namespace demo\n",
			want: []string{"name: namespace-demo"}},
		// pravega-geds' minio-install.sh: a sleep after a command not carried is that command's
		{name: "a sleep after a command not carried", script: "helm upgrade --install web oci://e.com/nginx -n web\nkubectl exec -n web deploy/web -- nginx -s reload\nsleep 10\n",
			want: []string{"it gives the command at install.sh:4, which is not carried, its time"}, never: []string{"wait: true"},
			notCarried: []string{"khook has no step for kubectl exec"}},
		// kubeedge/sedna's install.sh: kubectl delete --timeout bounds the step
		{name: "kubectl delete --timeout", script: "kubectl -n sedna delete pod --all --timeout=60s\n",
			want: []string{"timeout: 60s"}},
		// sebdet/oran-deployment's install-oran.sh: ONAP's helm deploy plugin
		{name: "a helm plugin's command khook does not know", script: "helm deploy onap local/onap --namespace onap -f values.yaml\n",
			notCarried: []string{"helm deploy is not one of helm's own commands: a plugin's"}},
		// ECK's and TiDB's CRDs by kubectl create: server-side, as create keeps no last-applied annotation
		{name: "kubectl create -f", script: "kubectl create -f m.yaml -n x\n",
			files: map[string]string{"m.yaml": configMap}, want: []string{"serverSide: true"}},
		// KDT-TravelPlanner/travel-gitops' argocd-bootstrap.sh: a precondition with a message, then the work
		{name: "check || { echo …; exit 1; }", script: "kubectl get nodes -l ingress-ready=true --no-headers 2>/dev/null | grep -q . || { echo \"no ingress-ready node\" >&2; exit 1; }\nkubectl create namespace demo\n",
			want: []string{"name: namespace-demo"}},
		// paritytech/sub-flood's commands.sh: helm show values > values.yaml overwrites the committed file
		{name: "helm show values > values.yaml, then -f values.yaml", script: "helm show values oci://e.com/runner > values.yaml\nhelm install runner oci://e.com/runner -f values.yaml -n ci\n",
			files: map[string]string{"values.yaml": "privileged: true\n"},
			want:  []string{"release: runner"}, never: []string{"valuesFrom", "privileged"}},
		// simple-time-service's install-eks-addons.sh: a poll that returns where it passes, then exit 1 on timeout
		{name: "a poll in a function that returns 0, exit 1 after it", script: "wait_nodes() {\n  for i in 1 2 3; do\n    n=$(kubectl get nodes --no-headers | grep -c ' Ready ' || echo 0)\n    if [ \"$n\" -gt 0 ]; then return 0; fi\n    sleep 10\n  done\n  echo timeout; exit 1\n}\nwait_nodes\nkubectl create namespace x\n",
			want: []string{"name: namespace-x"}, notCarried: []string{"a check the script repeats until it passes"}},
		// upmio/infini-scale-install: two loops over other lists, one loop variable name
		{name: "two unknown loops with one variable name", script: "IFS=\",\" read -r -a ctrl <<<\"${CTRL_NODES}\"\nfor node in \"${ctrl[@]}\"; do kubectl label node \"${node}\" role/ctrl=yes --overwrite; done\nIFS=\",\" read -r -a data <<<\"${DATA_NODES}\"\nfor node in \"${data[@]}\"; do kubectl label node \"${node}\" role/data=yes --overwrite; done\n",
			want:       []string{"target: node/${node}\n", "target: node/${node_2}\n"},
			notCarried: []string{"its list is only known when the script runs", "its list is only known when the script runs"}},
		// deploy-tanzu-rabbitmq's install.sh: the create | apply idiom behind sudo and $kubectl
		{name: "sudo $kubectl create … --dry-run=client -o yaml | sudo $kubectl apply -f-", script: "kubectl=kubectl\nsudo $kubectl create namespace ns1 --dry-run=client -o yaml | sudo $kubectl apply -f-\nsudo kubectl create serviceaccount sa1 -n ns1 --dry-run=client -o yaml | kubectl apply -f -\n",
			want: []string{"helm/kubectl commands: 4, of which 2 became steps, 2 were folded", "name: ns1", "name: sa1"}},
		// EYRA-Benchmark/eyra-k8s' setup.sh: kubectl through xargs is a command, named
		{name: "… | xargs -I@ kubectl taint nodes @ …", script: "kubectl get nodes -o name | xargs -I@ kubectl taint nodes @ gpu=true:NoSchedule\nkubectl create namespace y\n",
			want: []string{"helm/kubectl commands: 3"}, notCarried: []string{"a kubectl command xargs runs for each line kubectl get nodes -o name prints"}},
		// AYapejian/automation-k8s-stack's velero-up.sh: a failure handed to a function that only prints
		{name: "kubectl wait … || { log_warn …; }", script: "log_warn() { echo \"WARN $*\"; }\nkubectl wait --for=condition=Available deployment/web -n demo --timeout=180s || { log_warn \"continuing\"; }\n",
			want: []string{"the script ignores its failure ({ log_warn \"continuing\"; }) and carries on"}},
		// deploy-tanzu-rabbitmq's install.sh: [ A -a B ] decided as [ A ] && [ B ] is
		{name: "[ $a -gt 0 -a $b -gt 0 ] of known values", script: "a=0\nb=1\nif [ $a -gt 0 -a $b -gt 0 ]; then kubectl create namespace x; fi\nif [ $a -gt 0 -o $b -gt 0 ]; then kubectl create namespace y; fi\n",
			want: []string{"name: namespace-y"}, never: []string{"namespace-x"}},
		// tkddls8848/forfun's ceph.sh: kubectl logs -f in the foreground, commands after it
		{name: "kubectl logs -f, then more", script: "kubectl create namespace a\nkubectl logs -f deploy/op -n a\nkubectl create namespace b\n",
			want: []string{"it follows until it is stopped, and stopping it (Ctrl-C) ends the script, so bash never runs the 1 helm/kubectl command(s) after it"}},
		// a field's test is a state, not an existence check, in either order of the flags
		{name: "a state test with flags after get", script: "if ! kubectl get pod -n kube-system -l app=net -o jsonpath='{.items[0].status.phase}' | grep -q Running; then\n  kubectl -n kube-system delete pod -l app=net\nfi\n",
			want: []string{`when: vars.IF_NOT_RUNNING == "true"`}},
	})
}

// presidenten/rancher-in-kind: a long name is cut at a word's end (N1).
func TestLongStepNameIsCutAtAWord(t *testing.T) {
	for in, want := range map[string]string{
		"restart deployment ingress-controller-nginx-ingress-controller -n ingress": "restart-deployment-ingress-controller-nginx",
		strings.Repeat("a", 60):                   strings.Repeat("a", 50),
		"apply-" + strings.Repeat("b", 44) + "-c": "apply-" + strings.Repeat("b", 44),
	} {
		if got := dnsName(in); got != want {
			t.Errorf("dnsName(%q) = %q, want %q", in, got, want)
		}
	}
}
