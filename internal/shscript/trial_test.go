package shscript

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/internal/importer"
)

// importScript writes the files (install.sh among them) to a temporary
// directory and imports install.sh from there.
func importScript(t *testing.T, files map[string]string, args ...string) *Result {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		write(t, dir, name, text)
	}
	opts := Options{Dir: dir}
	if args != nil {
		opts.Args = args
	}
	res, err := Import("install.sh", opts)
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	return res
}

// infoLines are the lines of the warnings whose why says why.
func infoLines(m *importer.Model, why string) []int {
	var lines []int
	for _, n := range m.Info {
		if strings.Contains(n.Why, why) {
			lines = append(lines, n.Line)
		}
	}
	return lines
}

// fateAt is the fate of the command at line (all of them, joined).
func fateAt(m *importer.Model, line int) string {
	var out []string
	for _, c := range m.Commands {
		if c.Line == line {
			out = append(out, string(c.Fate))
		}
	}
	return strings.Join(out, ",")
}

// The else branch of an if on a variable installs the same release from
// another chart (corral's airgap registry): both branches are steps, under
// when: and its negation; neither is folded into the other (#46).
func TestIfElseSameReleaseBothSteps(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
if [ -z "${REG}" ]; then
  helm upgrade --install -n cm cert-manager cert-manager --repo https://charts.jetstack.io
else
  helm install cert-manager ./cm.tgz --namespace cm --set image.repository="${REG}/x"
fi
`})
	if fateAt(res.Model, 3) != "step" || fateAt(res.Model, 5) != "step" || len(res.Model.Steps) != 2 {
		t.Fatalf("fates %v, steps %d\n%s", res.Model.Commands, len(res.Model.Steps), res.Spec)
	}
	a, b := res.Model.Steps[0].Out, res.Model.Steps[1].Out
	if a.When != `vars.get("REG", "") == ""` || b.When != "!("+a.When+")" || b.Helm.Chart != "./cm.tgz" || b.Helm.Release != "cert-manager" {
		t.Errorf("steps %+v %+v", a, b.Helm)
	}
	if _, err := importer.Validate(res.Model, res.Spec); err != nil {
		t.Fatal(err)
	}
}

// An if khook cannot decide whose branches both install the release
// (from a registry where one answers, else from a file): each branch is
// a step under a when: on a variable, never folded, never both.
func TestIfUndecidedSameReleaseNotFolded(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
if ping -c1 registry.local; then
  helm upgrade --install app app --repo https://charts.example.com
else
  helm upgrade --install app ./app.tgz
fi
`})
	// Not both: one or the other, as the variable the user sets says.
	if fateAt(res.Model, 3) != "step" || fateAt(res.Model, 5) != "step" {
		t.Fatalf("fates %v", res.Model.Commands)
	}
	for _, want := range []string{"IF_REGISTRY_LOCAL: {type: string, required: true", "when: vars.IF_REGISTRY_LOCAL == \"true\"\n    helm:\n      chart: app\n", "when: '!(vars.IF_REGISTRY_LOCAL == \"true\")'\n    helm:\n      chart: ./app.tgz"} {
		if !strings.Contains(string(res.Spec), want) {
			t.Errorf("want %q in\n%s", want, res.Spec)
		}
	}
}

// helm and kubectl inside $(…) and eval are accounted for at their lines
// (confluent's K8S_ID, corral's helm search and its eval'd install,
// ververica's current-context): read-only ones as read-only, an eval'd
// install built from an array as not carried, a literal eval translated.
func TestEvalAndSubstAccounted(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
export K8S_ID=$(kubectl get namespace kube-system -oyaml | grep uid)
V=${V:=$(helm search repo rancher/rancher -o json | jq -r .[0].version)}
echo "context: $(kubectl config current-context)"
args=("--install" "--create-namespace")
if [ -n "$PW" ]; then
  args+=("--set bootstrapPassword=$PW")
fi
args+=("-n cattle-system" "rancher rancher/rancher")
eval "helm upgrade ${args[*]}"
eval "kubectl create namespace literal-ns"
X=$(helm install oops ./chart)
`})
	want := map[int]string{2: "read-only", 3: "read-only", 4: "read-only", 10: "not carried", 11: "step", 12: "not carried"}
	for line, fate := range want {
		if got := fateAt(res.Model, line); got != fate {
			t.Errorf("line %d: fate %q, want %q (%v)", line, got, fate, res.Model.Commands)
		}
	}
	if len(res.Model.Steps) != 1 || res.Model.Steps[0].From.Line != 11 {
		t.Errorf("steps %+v", res.Model.Steps)
	}
}

// A command word from a variable whose default is helm or kubectl
// (ververica's HELM=${HELM:-helm}) is that command; the header's count of
// commands not carried agrees with the lines listed.
func TestToolFromVariable(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
HELM=${HELM:-helm}
KUBECTL="${KUBECTL:-/usr/local/bin/kubectl}"
helm_install() {
  $HELM --namespace "$3" upgrade --install "$1" "$2" --repo https://charts.example.com "${@:4}"
}
helm_install minio minio vvp
$KUBECTL create namespace jobs
docker build .
`})
	if fateAt(res.Model, 5) != "step" || fateAt(res.Model, 8) != "step" || len(res.Model.Steps) != 2 {
		t.Fatalf("fates %v\n%s", res.Model.Commands, res.Spec)
	}
	if h := res.Model.Steps[0].Out.Helm; h.Chart != "minio" || h.Namespace != "vvp" {
		t.Errorf("helm %+v", h)
	}
	if !strings.Contains(string(res.Spec), "Of the 1 lines not carried below, 0 are such commands and 1 are other commands") {
		t.Errorf("header:\n%s", res.Spec)
	}
}

// "${@:N}" is the parameters from the Nth on, not all of them.
func TestArgsSlice(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
ns() {
  kubectl create namespace "${@:2}" --dry-run=client -o yaml | kubectl apply -f -
}
ns ignored jobs
`})
	if len(res.Model.Steps) != 1 || !strings.Contains(res.Model.Steps[0].Out.Apply.Manifests[0].Inline, "name: jobs") {
		t.Fatalf("fates %v\n%s", res.Model.Commands, res.Spec)
	}
}

// A local chart with --version (ksandermann's helm-functions.sh): Helm
// ignores the version for a chart on disk, so the step has none and a
// note at the line says what Helm installs; the spec validates.
func TestLocalChartVersionDropped(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
helm upgrade prometheus ./prometheus --install --recreate-pods --version 8.9.0 --namespace kubetools
`})
	if len(res.Model.Steps) != 1 || res.Model.Steps[0].Out.Helm.Version != "" {
		t.Fatalf("steps %v\n%s", res.Model.Commands, res.Spec)
	}
	want := "install.sh:2: --version 8.9.0 of the local chart ./prometheus: Helm ignores --version for a chart on disk, so it is not written"
	found := false
	for _, n := range res.Model.Info {
		found = found || strings.HasPrefix(n.String(), want)
	}
	if !found {
		t.Errorf("notes %v lack %q", res.Model.Info, want)
	}
	if _, err := importer.Validate(res.Model, res.Spec); err != nil {
		t.Error(err)
	}
}

// --set key="{$VAR}" (ververica's additionalNamespaces) is Helm's list
// syntax around a variable: a one-item list holding ${VAR}.
func TestSetListOfVariable(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
JOBS=${JOBS:-"vvp-jobs"}
helm upgrade --install vvp vvp --repo https://charts.example.com --set rbac.additionalNamespaces="{$JOBS,other}" --set a.${JOBS}.b=x
`})
	if len(res.Model.Steps) != 1 || len(res.Model.NotCarried) != 0 {
		t.Fatalf("fates %v %v\n%s", res.Model.Commands, res.Model.NotCarried, res.Spec)
	}
	if got := toJSON(res.Model.Steps[0].Out.Helm.Values); got != `{"a":{"${JOBS}":{"b":"x"}},"rbac":{"additionalNamespaces":["${JOBS}","other"]}}` {
		t.Errorf("values %s", got)
	}
	if _, err := importer.Validate(res.Model, res.Spec); err != nil {
		t.Error(err)
	}
}

// A step the spec refuses is dropped and named not carried at its line
// (field and reason); the rest is written, valid, and what needed the
// dropped step needs what it needed. Nothing is refused wholesale (#46).
func TestRefusedStepNamedAtLine(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
kubectl create namespace apps
helm upgrade --install Bad_Release ./chart -n apps
kubectl rollout status deploy/web -n apps
`})
	if fateAt(res.Model, 3) != "not carried" || len(res.Model.Steps) != 2 || res.Model.Verdict() != importer.Partial {
		t.Fatalf("fates %v\n%s", res.Model.Commands, res.Spec)
	}
	if got := res.Model.Steps[1].Out.Needs; len(got) != 1 || got[0] != res.Model.Steps[0].Out.Name {
		t.Errorf("needs %v", got)
	}
	n := res.Model.NotCarried[0]
	if n.Line != 3 || !strings.Contains(n.Why, "khook's spec refuses the step made of it (helm.release: release name") {
		t.Errorf("note %v", n)
	}
	if _, err := importer.Validate(res.Model, res.Spec); err != nil {
		t.Error(err)
	}
}

// An unquoted variable set in a getopts loop among helm's arguments
// (cykubed's $REPLICATION_ARGS) is not taken as the chart: the command is
// named not carried at its line; a quoted one is one argument.
func TestUnquotedUnknownNotCarried(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
REPLICATION_ARGS=""
NS=cykubed
while getopts "rn:" opt; do
  case $opt in
    r) REPLICATION_ARGS=" --set architecture=replicated" ;;
    n) NS=$OPTARG ;;
  esac
done
helm upgrade --install agent -n "$NS" --set platform=minikube $REPLICATION_ARGS ./chart
kubectl create namespace "$NS"
`})
	if fateAt(res.Model, 10) != "not carried" || fateAt(res.Model, 11) != "step" {
		t.Fatalf("fates %v\n%s", res.Model.Commands, res.Spec)
	}
	if n := res.Model.NotCarried[0]; n.Line != 10 || !strings.Contains(n.Why, "the unquoted $REPLICATION_ARGS is split into words only when the script runs") {
		t.Errorf("note %v", n)
	}
}

// kubectl config set-context --current --namespace=X (cykubed :43) is the
// namespace of the kubectl and helm steps after it that name none.
func TestContextNamespace(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
kubectl rollout status deploy/before
kubectl config set-context --current --namespace=agents
kubectl rollout status statefulsets agent
helm upgrade --install web nginx --repo https://charts.example.com
kubectl config set-context $(kubectl config current-context) --namespace=tools
kubectl apply -f cm.yaml
kubectl rollout status deploy/x -n other
`, "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"})
	want := []string{"default", "agents", "agents", "tools", "other"}
	if len(res.Model.Steps) != len(want) || fateAt(res.Model, 3) != "folded" || fateAt(res.Model, 6) != "read-only,folded" {
		t.Fatalf("fates %v\n%s", res.Model.Commands, res.Spec)
	}
	for i, st := range res.Model.Steps {
		ns := ""
		switch {
		case st.Out.Rollout != nil:
			ns = st.Out.Rollout.Namespace
		case st.Out.Helm != nil:
			ns = st.Out.Helm.Namespace
		case st.Out.Apply != nil:
			ns = st.Out.Apply.Namespace
		}
		if ns != want[i] {
			t.Errorf("step %s: namespace %q, want %q", st.Out.Name, ns, want[i])
		}
	}
}

// `cmd || true` (kottajl's rollout status, ververica's install_x || :):
// the script carries on when it fails; khook's step would fail the run,
// said at the line, except for the idempotent idioms.
func TestOrTrueSaid(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
kubectl create namespace apps || true
kubectl rollout status deploy/grafana -n apps --timeout=120s || true
kubectl delete job migrate -n apps || :
kubectl rollout status deploy/loki -n apps || exit 1
`})
	if len(res.Model.Steps) != 4 {
		t.Fatalf("fates %v", res.Model.Commands)
	}
	lines := infoLines(res.Model, "the script ignores its failure")
	if len(lines) != 2 || lines[0] != 3 || lines[1] != 4 {
		t.Errorf("notes at %v, want 3 and 4: %v", lines, res.Model.Info)
	}
	if d := res.Model.Steps[2].Out.Delete; d == nil || !*d.IgnoreNotFound {
		t.Errorf("delete %+v", d)
	}
}

// A script run from above --dir (veidemann's ../../dev/…/install.sh) is
// cited relative to --dir, not by the machine's absolute path.
func TestFromPathRelative(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "provider", "kind"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "dev"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "provider", "kind"), "install.sh", "#!/bin/bash\n../../dev/ns.sh\n")
	write(t, filepath.Join(root, "dev"), "ns.sh", "#!/bin/bash\nkubectl create namespace dev\n")
	res, err := Import("install.sh", Options{Dir: filepath.Join(root, "provider", "kind")})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Spec), "# from ../../dev/ns.sh:2\n") || strings.Contains(string(res.Spec), root) {
		t.Errorf("spec:\n%s", res.Spec)
	}
}

// An until loop on a shell test (ksandermann's helm_check_all_pods_successful)
// is walked once: the commands in it are accounted for, none dropped.
func TestUntilTestLoopBodyAccounted(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
until [[ "$ok" == "true" ]] || [[ "$i" -ge 60 ]]; do
  phases=$(kubectl get pods -o json)
  kubectl delete pod stuck -n apps
  sleep 5
done
`})
	if fateAt(res.Model, 3) != "read-only" || fateAt(res.Model, 4) != "step" || len(res.Model.NotCarried) != 1 || res.Model.NotCarried[0].Line != 2 {
		t.Errorf("fates %v, not carried %v", res.Model.Commands, res.Model.NotCarried)
	}
}

// An option loop over the script's arguments, when they are given
// (ververica's setup.sh --with-metrics --with-logging), runs over them:
// each option it names is set, so the branch it guards is carried.
func TestOptionLoopOverGivenArgs(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
main() {
  local metrics logging
  while [[ "$#" -gt 0 ]]; do case $1 in
    -e|--edition) edition="$2"; shift; shift;;
    -m|--with-metrics) metrics=1; shift;;
    -l|--with-logging) logging=1; shift;;
  esac; done
  if [ -n "$logging" ]; then
    kubectl create namespace logging
  fi
  if [ -n "$metrics" ]; then
    kubectl create namespace metrics
  fi
}
main "$@"
`}, "--edition", "community", "--with-metrics", "--with-logging")
	if fateAt(res.Model, 10) != "step" || fateAt(res.Model, 13) != "step" || res.Model.Steps[0].Out.When != "" {
		t.Errorf("fates %v\n%s", res.Model.Commands, res.Spec)
	}
}

// The same release installed again later, not under an existence check
// (ververica installs vvp, then again with acceptCommunityEditionLicense):
// a second step, never folded into the first with its values lost.
func TestReinstallSecondStep(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
helm upgrade --install vvp vvp --repo https://charts.example.com
helm upgrade --install vvp vvp --repo https://charts.example.com --set acceptCommunityEditionLicense=true
`})
	if fateAt(res.Model, 2) != "step" || fateAt(res.Model, 3) != "step" || toJSON(res.Model.Steps[1].Out.Helm.Values) != `{"acceptCommunityEditionLicense":true}` {
		t.Errorf("fates %v\n%s", res.Model.Commands, res.Spec)
	}
	if _, err := importer.Validate(res.Model, res.Spec); err != nil {
		t.Error(err)
	}
}

// kubectl auth reconcile writes RBAC objects: not read-only, as auth can-i
// is; kubectl config keeps its own reason (the local kubeconfig), in a
// statement and in $(…) alike.
func TestKubectlAuthAndConfigFates(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
kubectl auth reconcile -f rbac.yaml
kubectl auth can-i create deployments
kubectl config use-context kind-dev
X=$(kubectl auth reconcile -f rbac.yaml)
`})
	want := map[int]string{2: "not carried", 3: "read-only", 4: "read-only", 5: "not carried"}
	for line, fate := range want {
		if got := fateAt(res.Model, line); got != fate {
			t.Errorf("line %d: fate %q, want %q (%v)", line, got, fate, res.Model.Commands)
		}
	}
	for _, c := range res.Model.Commands {
		if c.Line == 4 && !strings.Contains(c.Why, "only the local kubeconfig") {
			t.Errorf("kubectl config's reason: %q", c.Why)
		}
	}
}

// --set with a list index over a values file that gives the list sets the
// field inside the file's element, as helm does: the element's other keys
// and the other elements stay (trial 46s's D3, in a helmfile).
func TestSetListIndexOverValuesFile(t *testing.T) {
	res := importScript(t, map[string]string{
		"install.sh": `#!/bin/bash
helm upgrade --install web ./chart -f values.yaml --set 'ingress.hosts[0].host=web.example.com' --set 'ingress.tls[0]=null'
`,
		"values.yaml":      "ingress:\n  hosts:\n    - host: placeholder\n      paths: [/]\n    - host: second.example.com\n",
		"chart/Chart.yaml": "apiVersion: v2\nname: chart\nversion: 0.1.0\n",
	})
	got := toJSON(res.Model.Steps[0].Out.Helm.Values)
	if want := `{"ingress":{"hosts":[{"host":"web.example.com","paths":["/"]},{"host":"second.example.com"}],"tls":[null]}}`; got != want {
		t.Errorf("values %s, want %s", got, want)
	}
}

// A case branch that exits (*) echo unsupported; exit 1) reaches none of
// the commands after the case, and branches that leave a variable the
// same (a required one each way) do not split them: one command, one step
// (trial 46r's D2: three steps, one under the exiting branch).
func TestCaseExitingBranchMakesNoStep(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
set -euo pipefail
MODE="${MODE:-b}"
case "${MODE}" in
a)
	HANDLER="${HANDLER:-runc}"
	;;
b)
	HANDLER="${HANDLER:-runsc}"
	;;
*)
	echo "unsupported" >&2
	exit 1
	;;
esac
kubectl create configmap h -n demo --from-literal=handler="${HANDLER}"
`})
	if len(res.Model.Steps) != 1 || len(res.Model.Commands) != 1 {
		t.Fatalf("want one command and one step, got %v:\n%s", res.Model.Commands, res.Spec)
	}
	if v := res.Model.Var("HANDLER"); v == nil || !v.Required {
		t.Errorf("HANDLER is %+v, want required (a default per branch)", v)
	}
}

// A --set with a list index beside a values file the import cannot read
// says that the list may differ from helm's.
func TestSetListIndexOverUnreadableFile(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nhelm upgrade --install web oci://e.com/web -n web -f https://e.com/values.yaml --set 'ingress.hosts[0].host=web.example.com'\n"})
	found := false
	for _, n := range res.Model.Info {
		found = found || strings.Contains(n.Why, "a list --set indexes keeps only what the --set gives")
	}
	if !found {
		t.Errorf("no note of the unreadable values file: %v", res.Model.Info)
	}
}
