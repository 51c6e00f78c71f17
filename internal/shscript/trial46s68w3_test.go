package shscript

import (
	"fmt"
	"strings"
	"testing"
)

// What held-out trials 46s68e, g and h showed (fixer 46s68w3), each cut down.
func TestTrial46s68w3Idioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// 46s68g's D5, c8sm's 7.2-install-c8.sh: helm template --skip-tests is what an install does
		{name: "helm template --skip-tests | kubectl apply", script: "helm template web nginx --repo https://charts.bitnami.com/bitnami -n web --skip-tests | kubectl apply -n web -f -\n",
			want: []string{"release: web"}},
		// 46s68h's D1, galaxy-services.sh: MicroK8s's bundled helm is helm
		{name: "microk8s helm3, microk8s.helm3, sudo microk8s helm", script: "microk8s helm3 repo add bitnami https://charts.bitnami.com/bitnami\nmicrok8s helm3 upgrade --install web bitnami/nginx -n web\nmicrok8s.helm3 upgrade --install api bitnami/nginx -n api\nsudo microk8s helm upgrade --install db bitnami/nginx -n db\nmicrok8s kubectl create namespace other\n",
			want: []string{"helm/kubectl commands: 5, of which 4 became steps, 1 were folded", "release: web", "release: api", "release: db", "chart: nginx"}},
		// 46s68h's D2, galaxy-services.sh: a file of the machine the script runs on, as written
		{name: "kubectl apply -f /home/ubuntu/pvc.yaml", script: "kubectl create namespace demo\nkubectl apply -f /home/ubuntu/no-such-46s68w3.yaml\n",
			want: []string{"name: namespace-demo"}, never: []string{"../home", "--dir"},
			notCarried: []string{"/home/ubuntu/no-such-46s68w3.yaml, a file of the machine the script runs on, not of the checkout, does not exist when the import runs"}},
		{name: "helm -f /home/ubuntu/values.yaml", script: "helm upgrade --install web oci://e.com/web -n web -f /home/ubuntu/no-such-46s68w3.yaml\n",
			want: []string{"release: web"}, never: []string{"--dir"},
			notCarried: []string{"/home/ubuntu/no-such-46s68w3.yaml, a file of the machine the script runs on, not of the checkout, does not exist when the import runs; helm would fail here"}},
		// 46s68e's D2, install-stage.sh: a helm plugin writes into the local chart installed after it
		{name: "helm PLUGIN … then a local chart", script: "helm my-config-creator ./config chart/templates/\nhelm upgrade --install web ./chart -n web\n",
			files: map[string]string{"chart/Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\n"},
			want:  []string{"release: web"}, never: []string{"run it in a job"},
			notCarried: []string{"it changes files of the checkout, and the chart step at install.sh:4 installs ./chart as it is at import: run it before khook (in CI) and import again"}},
		// 46s68g's D3, backstage's install.sh: a token the cluster fills in, read by go-template
		{name: "$(kubectl get secret -o go-template='{{.data.token | base64decode}}') into a ConfigMap literal", script: "kubectl apply -f s.yaml\nTOKEN=$(kubectl get secret sa -o go-template='{{.data.token | base64decode}}')\nkubectl create configmap cfg --from-literal=token=\"$TOKEN\" --dry-run=client -o yaml | kubectl apply -f -\n",
			files: map[string]string{"s.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: sa, namespace: default}\ntype: kubernetes.io/service-account-token\n"},
			want:  []string{"file: ./s.yaml"}, never: []string{"TOKEN:", "required: true"},
			notCarried: []string{"which the script reads from key token of Secret sa when it runs: the value exists only once the cluster fills the Secret during the run", "it reads what kubectl create configmap"}},
		{name: "the go-template read with -n, into helm --set", script: "PW=$(kubectl get secret db -n web -o go-template='{{.data.password | base64decode}}')\nhelm upgrade --install web oci://e.com/web -n web --set db.password=$PW\n",
			want: []string{"secretKeyRef", "key: password", "targetPath: db.password"}, never: []string{"PW:"}},
	})
}

// octops' deploy.sh: kubectl create -f of files with several objects of
// removed APIs names every one, and says kubectl creates the others
// (46s68e's D3: one named, "(and 9 more problems)", "fails").
func TestTrial46s68w3EveryRemovedObject(t *testing.T) {
	removed := func(n int) []string {
		var out []string
		for k := range n {
			out = append(out, fmt.Sprintf("clusterrole.rbac.authorization.k8s.io/old%d: rbac.authorization.k8s.io/v1beta1 ClusterRole was removed in v1.22: use rbac.authorization.k8s.io/v1 (Kubernetes v1.36)", k))
		}
		return out
	}
	res := importRemoved(t, map[string]string{"install.sh": "#!/bin/bash\nkubectl -n x create -f ok.yaml -f old.yaml\n", "ok.yaml": configMap, "old.yaml": configMap}, "old.yaml", removed(2)...)
	if len(res.Model.NotCarried) != 1 || !strings.Contains(res.Model.NotCarried[0].Why, "(clusterrole.rbac.authorization.k8s.io/old0: rbac.authorization.k8s.io/v1beta1 ClusterRole was removed in v1.22: use rbac.authorization.k8s.io/v1; clusterrole.rbac.authorization.k8s.io/old1: rbac.authorization.k8s.io/v1beta1 ClusterRole was removed in v1.22: use rbac.authorization.k8s.io/v1 (Kubernetes v1.36))") {
		t.Errorf("files: not carried %v", res.Model.NotCarried)
	}
	res = importRemoved(t, map[string]string{"install.sh": "#!/bin/bash\nkubectl create -f old.yaml\n", "old.yaml": configMap}, "old.yaml", removed(8)...)
	if len(res.Model.NotCarried) != 1 || !strings.Contains(res.Model.NotCarried[0].Why, "; and 3 more: clusterrole.rbac.authorization.k8s.io/old5, clusterrole.rbac.authorization.k8s.io/old6, clusterrole.rbac.authorization.k8s.io/old7 (Kubernetes v1.36)") ||
		!strings.Contains(res.Model.NotCarried[0].Why, "own kubectl refuses these objects on a current cluster too (and applies the others)") || strings.Contains(res.Model.NotCarried[0].Why, "more problem") {
		t.Errorf("one file: not carried %v", res.Model.NotCarried)
	}
}
