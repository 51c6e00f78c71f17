package shscript

import "testing"

// What held-out trial 46k (run once, on 7b13116) showed carried wrong or
// named with a wrong reason, each cut down.
func TestTrial46kIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// contour's make-kind-cluster.sh: if ${KUBECTL} apply … in a retry loop
		{name: "kubectl through a variable as a condition", script: "KUBECTL=${KUBECTL:-kubectl}\nK=kubectl\nif ${KUBECTL} apply -f m.yaml -n x; then echo applied; fi\nif $K apply -f m.yaml -n y; then echo applied; fi\n",
			files: map[string]string{"m.yaml": configMap}, want: []string{"namespace: x", `namespace: "y"`}},
		// gitea-operator's quickstart.sh: one name, four release tags
		{name: "a variable set again from another computation", script: "LATEST=$(curl -s https://api.github.com/repos/a/a/releases/latest | jq -r .tag_name)\nkubectl apply -f https://example.com/a/${LATEST}/a.yaml -n x\nLATEST=$(curl -s https://api.github.com/repos/b/b/releases/latest | jq -r .tag_name)\nkubectl apply -f https://example.com/b/${LATEST}/b.yaml -n x\n",
			want: []string{"LATEST: {type: string, required: true", "LATEST_2: {type: string, required: true", "/b/${LATEST_2}/b.yaml"}},
		// rating-operator's deploy: [ -z "${APP_NAMESPACE:-}" ] && … exit 1
		{name: "a variable the script stops without", script: "E=${E:-dev}\n[ -z \"${NS:-}\" ] && echo \"NS not set\" && exit 1\nif [[ -z \"$TEAM\" ]]; then\n  echo no team >&2\n  exit 2\nfi\n[ -n \"$E\" ] || { echo no; exit 1; }\n[ -z \"$1\" ] && exit 1\nkubectl create ns \"$NS\" || true\nkubectl apply -f m.yaml -n \"$TEAM-$E\"\n",
			files: map[string]string{"m.yaml": configMap}, want: []string{"NS: {type: string, required: true, description: \"the script stops without it (install.sh:4)", "TEAM: {type: string, required: true", `E: {type: string, default: "dev"}`, "name: ${NS}"}},
		// secrets-manager's deploy-local.sh: the Safe's age key, created once
		{name: "a Secret created only where a check finds none", script: "kubectl apply -f ns.yaml\nif kubectl get secret -n demo | grep age-key; then\n  echo \"exists; not overriding it\"\nelse\n  kubectl apply -f secret.yaml\nfi\nkubectl get secret db -n demo || kubectl create secret generic db -n demo --from-literal=user=app\n",
			files: map[string]string{"ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo\n", "secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: age-key\n  namespace: demo\n"},
			want:  []string{"- file: ./secret.yaml\n      skipIf: exists", "user: ${DB_USER | toJson}\n      skipIf: exists", "a re-run keeps the Secret's data"}},
		// haproxytech's create.sh: a counter loop that polls pods until Running
		{name: "a poll on a counter", script: "kubectl apply -f m.yaml -n x\nCOUNTER=0\nwhile [  $COUNTER -lt 150 ]; do\n  sleep 2\n  result=$(kubectl get pods -n x --no-headers --selector=run=ctl | awk '{print $3}')\n  if [ \"$result\" = \"Running\" ]; then\n    COUNTER=151\n  else\n    COUNTER=`expr $COUNTER + 1`\n  fi\ndone\nkubectl wait --for=condition=ready --timeout=10s pod -l run=ctl -n x\n",
			files: map[string]string{"m.yaml": configMap}, want: []string{"name: wait-pod"},
			notCarried: []string{"a loop that polls the cluster until what it reads changes"}},
		// rating-operator: sed -i on a manifest, then apply -f of its directory
		{name: "a file edited in place, applied with its directory", script: "NS=${NS:-ops}\nsed -i \"s/namespace: .*/namespace: $NS/\" deploy/sa.yaml\nkubectl -n ${NS} apply -f deploy/\n",
			files: map[string]string{"deploy/sa.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: op\n  namespace: x\n", "deploy/cm.yaml": configMap},
			want:  []string{"namespace: ${NS}\n", "- file: ./deploy/cm.yaml", "the script edits it in place at install.sh:4 (sed -i)"}},
		// contour's make-kind-cluster.sh: readonly WAITTIME=${WAITTIME:-5m}
		{name: "a timeout from a variable with a default", script: "readonly WAITTIME=${WAITTIME:-5m}\nkubectl wait --timeout=\"${WAITTIME}\" -n op deployment/ctl --for=condition=Available\n",
			want: []string{"timeout: 5m", "written as the default of WAITTIME, 5m"}},
		// fluent-operator's e2e: a cleanup trapped on EXIT and on ERR runs once
		{name: "a function trapped on EXIT and ERR", script: "cleanup() {\n  helm uninstall app -n demo\n}\ntrap cleanup EXIT\ntrap cleanup ERR\nkubectl apply -f m.yaml -n demo\n",
			files: map[string]string{"m.yaml": configMap}, want: []string{"helm/kubectl commands: 2, of which 1 became steps"},
			notCarried: []string{"it runs when the script exits (trap at install.sh:6 on EXIT)"}},
		// hortator's quickstart: kubectl neat only prints
		{name: "a krew plugin that only prints", script: "kubectl apply -f m.yaml -n x\nkubectl get configmap demo -n x -o yaml | kubectl neat\n",
			files: map[string]string{"m.yaml": configMap}, want: []string{"2 are read-only"}},
	})
}

// What held-out trial 46l (run once, on 914cd16) showed, each cut down.
func TestTrial46lIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// mancier's bootstrap.sh, run without arguments
		{name: "a verb from an argument with a default", script: "ACTION=${1:-\"apply\"}\nkubectl ${ACTION} -f m.yaml -n x\ncase $@ in\n  one) kubectl apply -f m.yaml -n one ;;\n  *) kubectl apply -f m.yaml -n other ;;\nesac\n",
			files: map[string]string{"m.yaml": configMap}, want: []string{"read as apply, the default of ARG1", "namespace: other", "bash matches \"\" here"}},
		{name: "a guard on a directory missing at import", script: "kubectl apply -f m.yaml -n x\nif [ ! -d envs/prod ]; then\n  echo \"envs/prod not found\"; exit 1\nfi\nkubectl apply -f m.yaml -n y\n[ -f m.yaml ] || exit 1\n",
			files: map[string]string{"m.yaml": configMap}, notCarried: []string{"decided at import, and the script stops there with a failure", "bash never runs it: the script stops before it, at install.sh:4"}},
		// a prerequisite on the machine the script runs on is no file of the
		// repository: not decided at import, so it cannot stop the import
		{name: "a guard on a file of the machine", script: "[ -f ~/.kube/config ] || { echo \"no kubeconfig\"; exit 1; }\nif [ ! -f /etc/rancher/k3s/k3s.yaml ]; then echo no k3s; exit 1; fi\nkubectl apply -f m.yaml -n x\n",
			files: map[string]string{"m.yaml": configMap}, want: []string{"namespace: x"}},
		// vkc's bootstrap.sh: alias k='kubectl'
		{name: "an alias bash does not expand", script: "alias k='kubectl'\nk create ns demo\nshopt -s expand_aliases\nalias kk='kubectl -n x'\nkk apply -f m.yaml\n",
			files: map[string]string{"m.yaml": configMap}, want: []string{"namespace: x"},
			notCarried: []string{"k is an alias of kubectl, which bash does not expand in a script"}},
		// chonchmonich's vault-init.sh: kubectl exec through a function, in a here-string
		{name: "a function's kubectl in a condition's here-string", script: "v() { kubectl -n vault exec -i vault-0 -- \"$@\"; }\nkubectl apply -f m.yaml -n x\nif ! grep -q initialized <<<\"$(v vault status)\"; then\n  v vault operator init\nfi\n",
			files:      map[string]string{"m.yaml": configMap},
			notCarried: []string{"inside $(…)", "khook has no step for kubectl exec", "khook runs no shell commands"}},
		// oas-infra's setup-cluster.sh: kubectl on a node, through ssh
		{name: "kubectl in a here-document ssh runs", script: "ssh ubuntu@node1 << 'EOS'\n  kubectl create namespace data --dry-run=client -o yaml | kubectl apply -f -\nEOS\nkubectl apply -f m.yaml -n x\n",
			files: map[string]string{"m.yaml": configMap}, want: []string{"helm/kubectl commands: 3"},
			notCarried: []string{"khook runs no shell commands", "its here-document runs `kubectl create namespace data", "its here-document runs `kubectl apply -f -` through ssh"}},
		// dhbw's bootstrap.sh: a literal username in a Secret
		{name: "a Secret's literal is not copied, and said", script: "kubectl -n x create secret generic a --from-literal=username=app_user\n",
			want: []string{"the script's literal value is not copied into the spec: give it as KHOOK_SECRET_A_USERNAME"}},
		// acoolwolf96's bootstrap: its own kubeconfig
		{name: "the script's own KUBECONFIG", script: "export KUBECONFIG=\"$PWD/.generated/kubeconfig\"\nkubectl apply -f m.yaml -n x\n",
			files: map[string]string{"m.yaml": configMap}, want: []string{"points helm and kubectl at a kubeconfig of its own"}},
	})
}

// What held-out trial 46o (run once, on d3a2ac4) showed, each cut down.
func TestTrial46oIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// devsecops-infra's bootstrap-argocd.sh: an optional OAuth secret
		{name: "a test of a secret's emptiness", script: "EXTRA=\"\"\nif [[ -n \"${OAUTH_SECRET:-}\" ]]; then\n  kubectl create secret generic oauth -n web --from-literal=secret=\"${OAUTH_SECRET}\" --dry-run=client -o yaml | kubectl apply -f -\n  EXTRA='--set feature.enabled=true'\nfi\nhelm upgrade --install web oci://registry.example/charts/web --namespace web ${EXTRA} --wait\n",
			want: []string{`when: vars.get("OAUTH_SECRET", "") != ""`, `when: '!(vars.get("OAUTH_SECRET", "") != "")'`}},
		// bamcmanus's argocd.sh: the script picks its cluster
		{name: "kubectl config use-context", script: "kubectl config use-context \"k3d-$1\" >/dev/null\nkubectl apply -f m.yaml -n x\n",
			files: map[string]string{"m.yaml": configMap}, want: []string{"the script picks its cluster here"}},
		// shenker-argo: a check that stops only one branch
		{name: "a stop-if-empty check under a condition", script: "KEY_FILE=\"${KEY_FILE:-}\"\nREPO_URL=\"${REPO_URL:-}\"\nif [ -n \"$KEY_FILE\" ]; then\n  if [ -z \"$REPO_URL\" ]; then\n    echo \"no repo url\" >&2; exit 1\n  fi\n  kubectl apply -f m.yaml -n \"$REPO_URL\"\nfi\n",
			files: map[string]string{"m.yaml": configMap}, want: []string{`REPO_URL: {type: string, default: "", required_with: [KEY_FILE]`}},
		// mongodb/bamcmanus: a version pinned in a file of the repository
		{name: "a value read from a file with yq", script: "V=$(yq eval '.version' pin.yaml)\nP=$(yq '.auth.password' pin.yaml)\nDB_PASSWORD=$(yq .auth.pw pin.yaml)\nhelm upgrade --install app oci://e.com/app --version \"$V\" -n x --set db.pw=\"$P\" --set db.p2=\"$DB_PASSWORD\"\n",
			files: map[string]string{"pin.yaml": "version: 1.2.3\nauth:\n  password: hunter22\n  pw: hunter33\n"}, want: []string{"version: 1.2.3", "read at import from pin.yaml (.version)", "P: {type: string, secret: true, required: true", "DB_PASSWORD: {type: string, secret: true"}, never: []string{"hunter22", "hunter33"}},
		// a literal secret the script always has is required: unset, "" would pass
		{name: "secret variables the script always gives are required", script: "helm upgrade --install app oci://e.com/app -n x --set auth.rootPassword=changeme1\nkubectl -n x create secret generic api --from-literal=token=abc123\nTOKEN=${GITHUB_TOKEN:-}\nkubectl -n x create secret generic gh --from-literal=token=\"$TOKEN\"\n",
			want: []string{"AUTH_ROOTPASSWORD: {type: string, secret: true, required: true", "API_TOKEN: {type: string, secret: true, required: true"}},
	})
}

// What held-out trial 46q (run once, on f1b77a6) showed, each cut down.
func TestTrial46qIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// terraform-hcloud-dualstack-k8s: kubectl apply -f- (pflag's -f -)
		{name: "a dry run piped to apply -f-", script: "kubectl -n kube-system create configmap cfg --from-literal=k=v -o yaml --dry-run=client | kubectl apply -f-\n",
			want: []string{"name: cfg", "helm/kubectl commands: 2, of which 1 became steps, 1 were folded"}},
		// multi-cluster-cli: [[ $src == kind* ]] is a pattern
		{name: "a glob in [[ == ]]", script: "src=kind-a\nif [[ $src == kind* ]]; then\n  kubectl apply -f m.yaml -n a\nelse\n  kubectl apply -f m.yaml -n b\nfi\nif [[ \"${CLUSTER:-}\" != kind-* ]]; then kubectl apply -f m.yaml -n c; fi\n",
			files: map[string]string{"m.yaml": configMap}, want: []string{"namespace: a", `when: '!(vars.get("CLUSTER", "").startsWith("kind-"))'`}},
		// the same object on a second --context is another cluster's
		{name: "the same command on two contexts", script: "for c in kind-a kind-b; do\n  kubectl --context \"$c\" create namespace demo\ndone\n",
			notCarried: []string{"it works on context kind-b, and this spec's steps on context kind-a"}},
		// prom-op-helm's addons.sh: a script that runs Helm 2 itself
		{name: "Helm 2 run by the script", script: "helm init --service-account tiller\nhelm install --namespace openebs --name openebs oci://e.com/openebs\n",
			want: []string{"release: openebs", "createNamespace: true"}, notCarried: []string{"Helm 2's tiller"}},
		// equinix's istio (D5): a file under a folder the script finds at run time
		{name: "a cd to a computed folder, then a relative file", script: "curl -L https://git.io/getLatestIstio | ISTIO_VERSION=1.4.2 sh -\ncd $(ls -d istio-*)\nkubectl apply -f install/kubernetes/istio-demo.yaml\n",
			notCarried: []string{"a downloaded script khook cannot read", "the directory is only known when the script runs", "its file is relative to a directory known only when the script runs (the cd at install.sh:4), so khook cannot read it"}},
		// civo's istio: a pipe into a command held in a variable
		{name: "a pipe into a command khook does not run", script: "ISTIOCTL_CMD=/opt/istio/bin/istioctl\nkubectl create namespace istio-system\ncurl -sSL https://example.com/cp.yaml | $ISTIOCTL_CMD install -y -f -\n",
			notCarried: []string{"download in CI before khook runs", "a container image that has istioctl"}},
	})
}

// What held-out trial 46r (run once, on 979ad37) showed, each cut down.
func TestTrial46rIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// kldp: helm list | grep guards an upgrade and an install that makes the namespace
		{name: "an install folded into the upgrade keeps its namespace", script: "if helm list -n demo | grep -q \"^web\"; then\n  helm upgrade web oci://e.com/web --namespace demo\nelse\n  helm install web oci://e.com/web --namespace demo --create-namespace\nfi\n",
			want: []string{"createNamespace: true"}},
		// sandboxfleet: a default per case branch
		{name: "a variable with a default per branch", script: "MODE=\"${MODE:-b}\"\ncase \"${MODE}\" in\na) HANDLER=\"${HANDLER:-runc}\" ;;\nb) HANDLER=\"${HANDLER:-runsc}\" ;;\nesac\nkubectl create configmap h -n x --from-literal=handler=\"${HANDLER}\"\n",
			want: []string{"HANDLER: {type: string, required: true", "a khook variable has one default"}},
		// wrongsecrets: a literal password as a tool's key=value argument is never quoted back
		{name: "a key=value password of a command khook does not run", script: "vault login -method=userpass username=admin password=s3cr3tpw\nkubectl apply -f m.yaml -n x\n",
			files: map[string]string{"m.yaml": configMap}, notCarried: []string{"khook runs no shell commands"}, never: []string{"s3cr3tpw"}},
		// wrongsecrets (D7): $? of a grep decides between two branches (of
		// kubectl get ns | grep -q vault, an existence check since trial
		// 46s70l's D1; a helm repo list is none)
		{name: "an undecided condition whose else branch makes the step", script: "helm repo list | grep -q vault\nif [ $? == 0 ]; then\n  echo \"vault is there\"\nelse\n  kubectl create namespace vault\nfi\n",
			notCarried: []string{"the steps of its else branch are carried as if it did not hold"}},
		// elven-observability (trial 46z's L1b): a while-read loop over the
		// namespaces the cluster has is a turn per line, not a poll
		{name: "a while-read loop over kubectl get's lines", script: "apply_one() {\n  local output=\"\"\n  if ! output=\"$(kubectl apply -n \"$1\" -f m.yaml 2>&1)\"; then\n    return 1\n  fi\n}\nwhile IFS= read -r ns; do\n  apply_one \"${ns}\" || echo skipped\ndone <<< \"$(kubectl get namespaces -o name)\"\n",
			files: map[string]string{"m.yaml": configMap}, notCarried: []string{"the script runs it inside $(…) to take its output, which khook cannot do; make it a step of its own, and where the script uses the output"}},
		// elven-observability (trial 46z's N1): a kustomization that sets
		// the namespace needs no word about the context's
		{name: "apply -k of a kustomization with its namespace", script: "kubectl apply -k k\n",
			files: map[string]string{"k/kustomization.yaml": "namespace: monitoring\nresources: [m.yaml]\n", "k/m.yaml": configMap},
			want:  []string{"kustomize: ./k"}, never: []string{"context's namespace"}},
		// falco on k3s: sudo kubectl
		{name: "sudo kubectl", script: "sudo -E kubectl create namespace falco\n",
			want: []string{"name: falco", "khook runs its own kubectl, with the identity it is given"}},
	})
}

// What held-out trial 46u (run once, on 1830f04) showed, each cut down.
func TestTrial46uIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// kthena's e2e setup: the default branch written all|*)
		{name: "a case pattern alternating with *", script: "CAT=${CAT:-all}\ncase \"${CAT}\" in\n  one) kubectl apply -f one.yaml -n x ;;\n  all|*) kubectl apply -f all.yaml -n x ;;\nesac\n",
			files: map[string]string{"one.yaml": configMap, "all.yaml": configMap}, want: []string{`when: '!((vars.get("CAT", "all") == "one"))'`, "- file: ./all.yaml"}},
		// ai-rag-gitops: an Argo CD repository Secret labelled on its way to apply
		{name: "kubectl label --local in a create | apply pipe", script: "kubectl create secret generic repo -n argocd --from-literal=password=\"$REPO_TOKEN\" --dry-run=client -o yaml | kubectl label --local -f - argocd.argoproj.io/secret-type=repository -o yaml | kubectl apply -f -\n",
			want: []string{"argocd.argoproj.io/secret-type: repository", "password: ${REPO_TOKEN | toJson}", "helm/kubectl commands: 3, of which 1 became steps, 2 were folded"}},
		// ai-rag-gitops: the cloud CLI picks the cluster
		{name: "aws eks update-kubeconfig", script: "aws eks update-kubeconfig --region us-east-1 --name demo\nkubectl create namespace demo\n",
			want: []string{"name: demo"}, notCarried: []string{"it picks the cluster the script works on"}},
		// bitsdalab: a Secret's lines written only when their variable is set
		{name: "a here-document line under ${X:+…}", script: "kubectl apply -f - <<YAML\napiVersion: v1\nkind: Secret\nmetadata:\n  name: repo\n  namespace: x\nstringData:\n${GIT_TOKEN:+  password: $GIT_TOKEN}\nYAML\n",
			notCarried: []string{"${GIT_TOKEN:+…} writes its text only when $GIT_TOKEN is set"}},
	})
}

// What held-out trial 46v (run once, on 7a72d22) showed, each cut down.
func TestTrial46vIdioms(t *testing.T) {
	checkIdioms(t, []idiom{
		// baljan: a ConfigMap from the .env, secrets and all
		{name: "a ConfigMap from an env file with credentials", script: "kubectl create configmap app-config --from-env-file=.env -n demo -o yaml --dry-run=client | kubectl apply -f -\n",
			files: map[string]string{".env": "DEBUG=false\nDJANGO_SECRET_KEY=s3cr3t-k3y-v4lue\nDATABASE_URL=postgres://app:pgpw-91x@db:5432/app\n"},
			want:  []string{`DEBUG: "false"`, `DJANGO_SECRET_KEY: ${APP_CONFIG_DJANGO_SECRET_KEY | toJson}`, `DATABASE_URL: ${APP_CONFIG_DATABASE_URL | toJson}`}, never: []string{"s3cr3t-k3y-v4lue", "pgpw-91x"}},
		// baljan: the same pipe when the file is not there: both stages accounted for
		{name: "a create | apply pipe whose create is not carried", script: "kubectl create configmap app-config --from-env-file=.env -n demo -o yaml --dry-run=client | kubectl apply -f -\n",
			want: []string{"helm/kubectl commands: 2, of which 0 became steps"}, notCarried: []string{"its file .env cannot be read at import", "which is not carried (named at its line)"}},
		// infrabox: Helm 2's -n is the release's name
		{name: "helm install CHART -n NAME --namespace NS", script: "helm install stable/minio --set replicas=1 -n demo-minio --namespace demo-system\n",
			want: []string{"release: demo-minio", "namespace: demo-system"}, notCarried: []string{"Helm 2's -n is the release's name"}},
		// rabbitinfra: an array built under a condition, an upgrade under the same condition inside an existence check
		{name: "a branch under a condition and its negation", script: "NS=infra\nARGS=()\nif [[ -n \"${APP_PASSWORD:-}\" ]]; then\n  ARGS+=(--set auth.password=\"$APP_PASSWORD\")\nfi\nARGS+=(--set metrics.enabled=true)\nif helm -n \"$NS\" status app >/dev/null 2>&1; then\n  if [[ -n \"${APP_PASSWORD:-}\" ]]; then\n    helm upgrade app oci://e.com/rabbitmq -n \"$NS\" \"${ARGS[@]}\"\n  else\n    helm upgrade app oci://e.com/rabbitmq -n \"$NS\" --reuse-values\n  fi\nelse\n  helm install app oci://e.com/rabbitmq -n \"$NS\" \"${ARGS[@]}\"\nfi\n",
			want: []string{"helm/kubectl commands: 4, of which 2 became steps", `when: vars.get("APP_PASSWORD", "") != ""` + "\n"}, never: []string{`!= "" && !(`},
			notCarried: []string{"khook cannot decide it before the run", "the other branch of a condition khook cannot decide installs the release again"}},
		// rabbitinfra, infrabox: a value computed inline, in an array or an argument
		{name: "KEY=$(…) in an array and in an argument", script: "ARGS=()\nARGS+=(--set auth.erlangCookie=$(openssl rand -hex 32))\nhelm upgrade --install app oci://e.com/rabbitmq -n infra \"${ARGS[@]}\"\nkubectl -n demo create secret generic dash --from-literal=secret=$(cat /dev/urandom | tr -dc 'a-z' | fold -w 32 | head -n 1)\n",
			want: []string{"AUTH_ERLANG_COOKIE: {type: string, secret: true, required: true, description: \"a secret the script generates", "erlangCookie: ${AUTH_ERLANG_COOKIE}", `secret: ${SECRET | toJson}`}, never: []string{`erlangCookie: ""`}},
		// infrabox: a check on one namespace's Secret before a create in another
		{name: "a Secret check on another object", script: "if kubectl describe secret -n demo-system creds > /dev/null 2>&1; then\n  echo exists\nelse\n  kubectl -n demo-worker create secret generic creds --from-literal=accessKey=$ACCESS_KEY\nfi\n",
			want: []string{"it looks for another object than step secret-creds makes"}, never: []string{"skipIf: exists"}},
		// infrabox: a port-forward to a pod found when the script runs
		{name: "a port-forward on an unquoted variable", script: "pod=$(kubectl get pods -n demo -o name | head -1)\nkubectl port-forward -n demo $pod 9000 &\n",
			notCarried: []string{"khook has no step for kubectl port-forward; it only opens a local connection"}},
		// qdrant (46v), kldp (46r's D6): a default path from the script's own place
		{name: "a default path next to the script", script: "VALUES_FILE=\"${VALUES_FILE:-$(dirname \"$0\")/values.yaml}\"\nhelm upgrade --install q oci://e.com/q -n q -f \"${VALUES_FILE}\"\n",
			files: map[string]string{"values.yaml": "a: 1\n"}, want: []string{`VALUES_FILE: {type: string, default: "./values.yaml"}`}},
		// sandboxfleet (46r's D4): a kustomization edited by sed on its way to apply
		{name: "kustomize | sed | apply", script: "kubectl kustomize k | sed 's/x/y/' | kubectl apply -f -\n",
			files: map[string]string{"k/kustomization.yaml": "resources:\n- cm.yaml\n", "k/cm.yaml": configMap}, notCarried: []string{"the objects of the kustomization are edited by sed 's/x/y/'", "which is not carried"}},
		// llmariner (46t's D5): curl to a service's API
		{name: "curl to an API", script: "curl -fs -X POST http://localhost:9001/api/v1/login -d '{}'\nkubectl create namespace x\n",
			notCarried: []string{"it calls a service's API, which khook does not"}},
		// tqnhukyverno (46x's D3): a rollout status of each Deployment the namespace lists
		{name: "a rollout loop over kubectl get -o name", script: "for d in $(kubectl get deploy -n kyverno -o name); do\n  kubectl rollout status \"$d\" -n kyverno --timeout=30m\ndone\n",
			want: []string{"for: condition=Available", `"on": deployment`, "namespace: kyverno", "timeout: 30m", "helm/kubectl commands: 2, of which 1 became steps, 0 were folded into steps, 1 are read-only"}},
		// bramscrossplane (46x's D6): the fresh cluster's install keeps its timeout when folded
		{name: "an install folded into the upgrade keeps its timeout", script: "if helm list -n c | grep -q c; then\n  helm upgrade c oci://e.com/c -n c --wait\nelse\n  helm install c oci://e.com/c -n c --create-namespace --wait --timeout 7m\nfi\n",
			want: []string{"timeout: 7m", "createNamespace: true"}},
		// cybercloudtenant (46x's D5): an answer asked of a person
		{name: "read -p of a value", script: "read -p \"CPU requests: \" REQ_CPU\nkubectl create namespace t\nkubectl -n t create configmap q --from-literal=cpu=\"$REQ_CPU\"\n",
			want: []string{`REQ_CPU: {type: string, required: true, description: "the script asks a person for it (install.sh:3)"}`}},
		// kblockscrossplane (46x's D2): a secret by its name alone is said
		{name: "a literal under a secret-looking name", script: "secret_key=\"creds\"\nkubectl -n x create configmap c --from-literal=k=\"$secret_key\"\n",
			want: []string{"secret_key: a secret by its name"}},
		// idpcrossplane (46x's D1): a directory chosen by a variable
		{name: "apply -f a directory named by a variable", script: "MODE=\"${MODE:-aws}\"\nkubectl apply -f \"m/${MODE}/\"\n",
			files: map[string]string{"m/aws/cm.yaml": configMap, "m/gcp/cm.yaml": configMap},
			want:  []string{`when: vars.get("MODE", "aws") == "aws"`, "- file: ./m/aws/cm.yaml", `when: vars.get("MODE", "aws") == "gcp"`, "- file: ./m/gcp/cm.yaml", "$MODE names one of the directories"}},
		// daredebackstage (46x's D4): a wait on a pod the script picks by label
		{name: "a wait on a pod picked by label", script: "POD=$(kubectl get pod -n kc -l app=kc -o jsonpath='{.items[0].metadata.name}')\nkubectl wait --for=condition=ready --timeout=300s pod/\"$POD\" -n kc\n",
			want: []string{`"on": pod`, "selector: app=kc", "namespace: kc"}, never: []string{"POD:"}},
		// intel-emf (46w's D2): a second lookup where the first finds nothing
		{name: "a fallback lookup of the same value", script: "POD=$(kubectl get pods -n db -l a=primary -o jsonpath='{.items[0].metadata.name}' || true)\nif [[ -z \"$POD\" ]]; then\n  POD=$(kubectl get pods -n db -l role=primary -o jsonpath='{.items[0].metadata.name}' || true)\nfi\nif [[ -z \"$POD\" ]]; then\n  exit 0\nfi\nkubectl wait --for=condition=Ready pod \"$POD\" -n db --timeout=120s\n",
			want: []string{"on\": pod/${POD}", `when: '!(vars.get("POD", "") == "")'`, "the spec asks for POD once"}, never: []string{"POD_2"}},
	})
}

// pew's script begins with an editor's byte-order mark: bash runs it as a
// command it cannot find and goes on; it is no command of the script.
func TestByteOrderMarkBeforeShebang(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "\xef\xbb\xbf#!/bin/bash\nset -e\nkubectl create namespace bom\n"})
	if len(res.Model.NotCarried) != 0 || len(res.Model.Steps) != 1 {
		t.Errorf("not carried %v, steps %d", res.Model.NotCarried, len(res.Model.Steps))
	}
}
