package shscript

import "testing"

// What held-out trial 46s67e showed, each cut down.
func TestTrial46s67xIdioms(t *testing.T) {
	nsCM := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: x\n"
	checkIdioms(t, []idiom{
		// knative-extensions/eventing-istio's install-dependencies.sh (D1): -Rf is -R -f
		{name: "kubectl apply -Rf DIR", script: "kubectl apply -Rf m\nkubectl apply -n x -Rfm/sub\n",
			files: map[string]string{"m/a.yaml": nsCM, "m/sub/b.yaml": nsCM},
			want:  []string{"- file: ./m/a.yaml\n        - file: ./m/sub/b.yaml\n", "- file: ./m/sub/b.yaml\n      namespace: x"}},
		// cloudpilot-ai/karpenter-provider-gcp's e2e-deploy.sh (D4): git -C DIR rev-parse --show-toplevel
		{name: "git -C DIR rev-parse --show-toplevel", script: "REPO_ROOT=\"$(git -C \"$(dirname \"$0\")\" rev-parse --show-toplevel)\"\nhelm upgrade --install demo \"${REPO_ROOT}/charts/demo\" -n demo\n",
			files: map[string]string{"charts/demo/Chart.yaml": "apiVersion: v2\nname: demo\nversion: 0.1.0\n"},
			want:  []string{"chart: ./charts/demo"}},
		// eventing-istio's install-dependencies.sh (D2): a directory through a variable's default
		{name: "kubectl apply -f DIR of a variable with a directory default", script: "CONFIG_DIR=${CONFIG_DIR:-\"./third_party/istio\"}\nkubectl apply -f \"${CONFIG_DIR}/samples/addons\"\n",
			files: map[string]string{"third_party/istio/samples/addons/a.yaml": nsCM, "third_party/istio/samples/addons/b.yaml": nsCM},
			want:  []string{"- file: ${CONFIG_DIR}/samples/addons/a.yaml\n        - file: ${CONFIG_DIR}/samples/addons/b.yaml\n", `default: "./third_party/istio"`}},
		// eventing-istio's install-dependencies.sh (D3): --patch-file and a script run under the checkout's variable
		{name: "--patch-file and a script run under REPO_ROOT_DIR", script: "export REPO_ROOT_DIR=${REPO_ROOT_DIR:-$(git rev-parse --show-toplevel)}\nkubectl patch deployment w -n x --type merge --patch-file \"${REPO_ROOT_DIR}/hack/p.yaml\"\n\"${REPO_ROOT_DIR}\"/kafka/setup.sh\n",
			files: map[string]string{"hack/p.yaml": "metadata:\n  labels:\n    injected: \"false\"\n", "kafka/setup.sh": "#!/bin/bash\nkubectl create namespace kafka\n"},
			want:  []string{"injected: \"false\"", "# from kafka/setup.sh:2", "name: kafka"}},
		// the knative library.sh it then follows: bash's * matches a / too
		{name: "[[ X != *@* ]] on a path with a slash", script: "f() {\n  if [[ \"$1\" != *@* ]]; then exit 1; fi\n  case \"$1\" in github.com*gum@v1) kubectl create namespace b ;; esac\n}\nf github.com/x/gum@v1\nkubectl create namespace a\n",
			want: []string{"name: a\n", "name: b\n"}},
		// aerospike's deploy-test-operator.sh (D5): a case only the run decides, steps in two branches
		{name: "case $(kubectl get nodes) with steps in two branches", script: "case $(kubectl get nodes -o yaml) in\n  *\"cloud.google.com\"*) kubectl apply -f gke.yaml ;;\n  *\"eks.amazonaws.com\"*) kubectl apply -f eks.yaml ;;\n  *) echo none ;;\nesac\n",
			files: map[string]string{"gke.yaml": configMap, "eks.yaml": configMap},
			want:  []string{"IF_CLOUD_GOOGLE_COM: {type: string, required: true", "when: vars.IF_CLOUD_GOOGLE_COM == \"true\"\n", `when: vars.IF_EKS_AMAZONAWS_COM == "true" && !(vars.IF_CLOUD_GOOGLE_COM == "true")`}},
		// eventing-istio's install-dependencies.sh (N4): a manifest under ${REPO_ROOT_DIR} naming its namespace is read for the warning
		{name: "no namespace warning for a manifest under REPO_ROOT_DIR naming its namespace", script: "REPO_ROOT_DIR=${REPO_ROOT_DIR:-$(git rev-parse --show-toplevel)}\nkubectl apply -f \"${REPO_ROOT_DIR}/cm.yaml\"\n",
			files: map[string]string{"cm.yaml": nsCM}, want: []string{"file: ${REPO_ROOT_DIR}/cm.yaml"}, never: []string{"without -n"}},
		// ewhauser/cursor-controller's hack/e2e/setup.sh (N10): a jsonpath poll that breaks on its value
		{name: "a for loop polling a jsonpath until it breaks", script: "for i in $(seq 1 60); do\n  ready=$(kubectl -n x get volumesnapshot snap -o jsonpath='{.status.readyToUse}' 2>/dev/null || true)\n  [ \"$ready\" = \"true\" ] && break\n  sleep 2\ndone\n[ \"$ready\" = \"true\" ] || { echo never ready; exit 1; }\nkubectl create namespace b\n",
			want: []string{"for: jsonpath={.status.readyToUse}=true\n      \"on\": volumesnapshot/snap\n      namespace: x", "name: b\n"}},
	})
}
