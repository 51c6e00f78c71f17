package shscript

import "testing"

// What held-out trial 46h (run once, on the final build of stop 59)
// showed carried wrong or named with a wrong reason, each cut down.
func TestTrial46hIdioms(t *testing.T) {
	ns := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: \"{{NS}}\"\n"
	chart := "apiVersion: v2\nname: chart\nversion: 0.1.0\n"
	checkIdioms(t, []idiom{
		{name: "a manifest held in a variable", script: "T=$(sed \"s/{{NS}}/team-a/g\" ns.yml)\necho \"$T\" | kubectl apply -f -\ncat ns.yml | sed \"s/{{NS}}/team-b/g\" | kubectl apply -f -\n",
			files: map[string]string{"ns.yml": ns}, want: []string{`name: "team-a"`, `name: "team-b"`}},
		{name: "a value only the run knows, echoed", script: "T=$(curl -s https://example.com/x.yaml)\necho \"$T\" | kubectl apply -f -\n",
			notCarried: []string{"the manifests it reads are $T, only known when the script runs"}},
		{name: "a values file named by a variable", script: "E=${1:-dev}\nhelm upgrade --install demo ./chart -n demo -f chart/values-$E.yaml\n",
			files: map[string]string{"chart/Chart.yaml": chart, "chart/values-dev.yaml": "a: 1\n"}, want: []string{"file: ./chart/values-${ARG1}.yaml"}},
		{name: "an uninstall without set -e", script: "set +e\nhelm uninstall --wait test\nhelm upgrade --install test ./chart -n default\n",
			files: map[string]string{"chart/Chart.yaml": chart}, want: []string{"ignoreNotFound: true", "the script ignores its failure (no set -e)"}},
		{name: "a kustomization's dry run piped to apply", script: "kubectl apply -k k --dry-run=client -o yaml | kubectl apply -f -\nkubectl apply -k k --dry-run=client -o json | envsubst | kubectl apply -f -\n",
			files: map[string]string{"k/kustomization.yaml": "resources:\n- cm.yaml\n", "k/cm.yaml": configMap}, want: []string{"kustomize: ./k"},
			notCarried: []string{"envsubst over the objects of kustomization ./k", "it reads what kubectl apply -k k --dry-run=client -o json prints, which is not carried"}},
		{name: "a file a function prints to", script: "render() {\n  eval \"echo \\\"$(cat $1)\\\"\"\n}\nrender tmpl.yml > out.yml\nkubectl apply -f out.yml\n",
			files:      map[string]string{"tmpl.yml": configMap},
			notCarried: []string{"the script makes it earlier (install.sh:6 render)"}},
		{name: "a helm command helm does not have", script: "helm update repo\n",
			notCarried: []string{"helm has no update command, so the script's command fails"}},
		{name: "Helm 2's bare seconds", script: "helm upgrade --install x ./chart -n x --timeout 60\n",
			files: map[string]string{"chart/Chart.yaml": chart}, want: []string{"timeout: 60s"}, notCarried: []string{"helm refuses it (time: missing unit in duration)"}},
		{name: "Helm 2's --name", script: "helm install --name web ./chart -n x\n",
			files: map[string]string{"chart/Chart.yaml": chart}, want: []string{"release: web"}, notCarried: []string{"Helm 3 and 4 have no --name"}},
		{name: "a person's go-ahead", script: "kubectl apply -f m.yaml -n x\nread -p \"press enter when ready\"\nkubectl apply -f m.yaml -n y\n",
			files: map[string]string{"m.yaml": configMap}, want: []string{"the script waits for a person here"}},
		{name: "a computed secret", script: "ca=$(talosctl get etcdrootsecret -o yaml | yq .spec.ca)\nkubectl create secret generic ca -n x --from-literal=ca=\"$ca\"\n",
			want: []string{"a secret the script computes with commands khook does not run"}},
		// trial 46j (flux2os): each path ls lists goes to kubectl
		{name: "ls | xargs kubectl apply", script: "ls -d manifests/* | xargs -I{} kubectl apply -f {} -n x\nls manifests/*.yaml | xargs -n1 kubectl delete --ignore-not-found -n y -f\n",
			files: map[string]string{"manifests/a.yaml": configMap, "manifests/b.yaml": configMap},
			want:  []string{"file: ./manifests/a.yaml", "file: ./manifests/b.yaml", "name: delete-b"}},
		{name: "a branch that exits sets nothing on the path on", script: "NS=apps\nif kubectl get ns other >/dev/null 2>&1; then\n  NS=other\n  kubectl apply -f m.yaml -n \"$NS\"\n  exit 0\nfi\nkubectl apply -f m.yaml -n \"$NS\"\n",
			files: map[string]string{"m.yaml": configMap}, want: []string{"namespace: apps"}, notCarried: []string{"what the script does when kubectl get ns other"}},
		// trial 46j (dash): the kubectl of a function a retry wrapper runs through "$@"
		{name: "a readiness check retried through a wrapper", script: "retry() { local n=$1; shift; until \"$@\"; do n=$((n-1)); [ \"$n\" -gt 0 ] || return 1; sleep 5; done; }\nready() { kubectl -n \"$1\" get deployments -o json | jq -e '.items | length > 0'; }\nkubectl apply -f m.yaml -n x\nretry 10 ready x\nretry 3 kubectl apply -f m.yaml -n y\n",
			files: map[string]string{"m.yaml": configMap}, want: []string{`namespace: "y"`, "a retry loop around the command"},
			notCarried: []string{"a check the script repeats until it passes (retry at install.sh:6)"}},
		// trial 46j (flux2os): a name the cluster holds is a value to give, not a secret
		{name: "a name computed from the cluster", script: "PLAN=$(kubectl get installplan -n ops -o yaml | yq e '.items[].metadata.name' -)\nkubectl wait --for=condition=Installed=true installplan/$PLAN -n ops\nPW=$(kubectl get secret db -n ops -o yaml | yq .data.password)\nkubectl create secret generic copy -n x --from-literal=pw=\"$PW\"\n",
			want: []string{"PLAN: {type: string, required: true", "PW: {type: string, secret: true", "khook runs no shell, so the spec asks for it"}},
	})
}
