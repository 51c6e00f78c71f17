package shscript

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// What held-out trials 46s69n and 46s69o showed, each cut down.
func TestTrial46s69noIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// cartyc/rancher-master-class's install.sh: kubectl ns, the kubens plugin (n's D2)
		{name: "kubectl ns NS", script: "kubectl create ns flux\nkubectl ns flux\nkubectl create configmap demo --from-literal=a=b\n",
			want: []string{"namespace: flux\n            data:", "1 were folded"}},
		// christian-posta's deploy-multi.sh: the current context renamed, then named by --context (o's D1)
		{name: "kubectl config rename-context of the current context", script: "kind create cluster --name demo\nkubectl config rename-context kind-demo ai-demo\nkubectl create namespace first\nCONTEXT=${1:-ai-demo}\nkubectl --context $CONTEXT create namespace demo\nhelm upgrade --install web oci://e.com/nginx -n web --kube-context $CONTEXT\n",
			want:       []string{"name: namespace-first", "name: namespace-demo", "release: web"},
			notCarried: []string{"khook runs against the cluster it is given; create the cluster before khook runs"}},
		// christian-posta's install-gateway-1-19.sh: a licence key from the environment (o's N1)
		{name: "--set license_key=$VAR", script: "helm repo add g https://e.com/g\nhelm upgrade -i gloo g/gloo-ee -n gloo-system --set license_key=$GLOO_LICENSE_WITH_AI --set image.tag=$TAG\n",
			want: []string{"GLOO_LICENSE_WITH_AI: {type: string, secret: true", "TAG: {type: string, required: true"}},
		// rafaribe/home-ops's commands.sh: sops -d f | kubectl apply -f -, as -f <(sops -d f) (n's D1)
		{name: "sops -d FILE | kubectl apply -f -", script: "sops -d age.sops.yaml | kubectl apply -f -\n",
			files: map[string]string{"age.sops.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: sops-age\n  namespace: flux-system\nstringData:\n  age.agekey: ENC[AES256_GCM,data:x,iv:y,tag:z,type:str]\nsops:\n  lastmodified: \"2023-02-25T22:34:46Z\"\n  mac: ENC[AES256_GCM,data:x,iv:y,tag:z,type:str]\n  encrypted_regex: ^(data|stringData)$\n  version: 3.7.3\n"},
			want:  []string{"- file: ./age.sops.yaml"}, never: []string{"commit them"}},
		// futuroptimist/sugarkube's flux-bootstrap.sh: kubectl apply -f of a kustomize config (n's D4)
		{name: "kubectl apply -f of a kustomization file", script: "kubectl apply -f components.yaml\nkubectl create namespace after\n",
			files:      map[string]string{"components.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- https://e.com/install.yaml\n"},
			notCarried: []string{"components.yaml is a kustomize config (kustomize.config.k8s.io), which no API server serves"}},
	})
}

// o's D2, llmariner's deploy_llmariner_control_plane.sh: a values file
// missing above --dir, by $(dirname "$0")/.., is the checkout's: named from
// --dir, with no absolute path of the importing machine.
func TestTrial46s69noMissingValuesAboveDir(t *testing.T) {
	root := t.TempDir()
	write(t, root, "sub/install.sh", "#!/bin/bash\nset -e\nbasedir=$(dirname \"$0\")\nhelm upgrade --install web oci://e.com/nginx -n web -f \"${basedir}\"/../values-missing.yaml\n")
	t.Chdir(root)
	res, err := Import(filepath.Join(root, "sub", "install.sh"), Options{Dir: filepath.Join(root, "sub")})
	if err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprint(res.Model.NotCarried)
	if !strings.Contains(text, "../values-missing.yaml does not exist") || strings.Contains(text, root) {
		t.Errorf("not carried: %s", text)
	}
}
