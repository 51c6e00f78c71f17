package shscript

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/khook/khook/internal/importer"
	"github.com/khook/khook/spec"
)

// Tests on the scripts vendored after the first seven (SOURCES.md).

func TestFairwindsCertManagerPreTest(t *testing.T) {
	res, s := load(t, "fairwinds", "stable/insights-admission/ci/pre-test-script.sh")
	if got := stepNames(s); !reflect.DeepEqual(got, []string{"namespace-cert-manager", "cert-manager"}) {
		t.Fatalf("steps %v", got)
	}
	h := s.Steps[1].Helm
	if h.Chart != "cert-manager" || h.Repo != "https://charts.jetstack.io" || h.Version != "v1.11.0" || h.Namespace != "cert-manager" || !h.Wait {
		t.Errorf("helm %+v", h)
	}
	// --set installCRDs=true is typed as helm types it: a bool.
	if v, ok := h.Values["installCRDs"].(bool); !ok || !v {
		t.Errorf("values %#v", h.Values)
	}
	// repo add/update fold into repo:; `helm get notes … || helm install` is the existence check.
	f := fates(res.Model)
	if f[2] != importer.FateFolded || f[3] != importer.FateFolded || f[4] != importer.FateStep {
		t.Errorf("fates %v", f)
	}
	var five []importer.Fate
	for _, c := range res.Model.Commands {
		if c.Line == 5 {
			five = append(five, c.Fate)
		}
	}
	if !reflect.DeepEqual(five, []importer.Fate{importer.FateReadOnly, importer.FateStep}) {
		t.Errorf("line 5: %v", five)
	}
	checkOrder(t, res, s)
	if res.Model.Verdict() != importer.Faithful {
		t.Errorf("verdict %s %v", res.Model.Verdict(), res.Model.NotCarried)
	}
}

func TestFairwindsFleetInstallRetry(t *testing.T) {
	res, s := load(t, "fairwinds", "scripts/fleet-install-test.sh")
	want := []string{"insights-agent", "wait-job-fleet-installer", "wait-job-polaris", "wait-job-workloads"}
	if got := stepNames(s); !reflect.DeepEqual(got, want) {
		t.Fatalf("steps %v", got)
	}
	// The helm upgrade is the condition of `while ! helm …; do sleep; done`: a retry, carried once.
	h := s.Steps[0].Helm
	if h.Release != "insights-agent" || h.Namespace != "insights-agent" || !h.CreateNamespace || !strings.HasSuffix(h.ValuesFrom[0].File, "stable/insights-agent/ci/fleet-install-test.yaml") {
		t.Errorf("helm %+v", h)
	}
	if !strings.Contains(string(res.Spec), "cluster: test-fleet-${random_number}") {
		t.Errorf("--set insights.cluster=\"$cluster_name\" not carried:\n%s", res.Spec)
	}
	// case "$CHANGED" in *insights-agent*) is a glob: contains, not equality.
	for _, st := range s.Steps {
		if !strings.Contains(st.When, `vars.get("CHANGED", "").contains("insights-agent")`) {
			t.Errorf("step %s when %q", st.Name, st.When)
		}
	}
	w := s.Steps[1]
	if w.Wait.For != "condition=Complete" || w.Wait.On != "job/fleet-installer" || w.Wait.Namespace != "insights-agent" || w.Timeout.String() != "2m0s" {
		t.Errorf("wait %+v %s", w.Wait, w.Timeout)
	}
	if f := fates(res.Model); f[37] != importer.FateStep || f[35] != importer.FateFolded {
		t.Errorf("fates %v", f)
	}
	if v := res.Model.Var("CHANGED"); v == nil || !v.Required {
		t.Errorf("CHANGED %+v", v)
	}
	checkOrder(t, res, s)
}

func TestCasePatternGlob(t *testing.T) {
	for p, want := range map[string]string{
		"prod":  `v == "prod"`,
		"*x*":   `v.contains("x")`,
		"dev*":  `v.startsWith("dev")`,
		"*-eu":  `v.endsWith("-eu")`,
		"a?b*c": `v.matches("^a.b.*c$")`,
	} {
		if got := globCEL("v", p, p != "prod"); got != want {
			t.Errorf("%s: %s, want %s", p, got, want)
		}
	}
}

func whenOf(s *spec.Spec, name string) string {
	for _, st := range s.Steps {
		if st.Name == name {
			return st.When
		}
	}
	return "<no step " + name + ">"
}

// kserve's manage.*-helm.sh source hack/setup/common.sh (functions, the
// repo root found by walking up to .git, kserve-deps.env for versions).
func TestKserveCertManager(t *testing.T) {
	res, s := load(t, "kserve", "hack/setup/infra/manage.cert-manager-helm.sh")
	want := []string{"uninstall-cert-manager", "delete-all", "delete-namespace-cert-manager",
		"uninstall-cert-manager-2", "delete-all-2", "delete-namespace-cert-manager-2", "cert-manager", "wait-pod-pod"}
	if got := stepNames(s); !reflect.DeepEqual(got, want) {
		t.Fatalf("steps %v", got)
	}
	// UNINSTALL=true under [[ "$*" == *--uninstall* ]] is not known at import: the
	// uninstall is under when:, and its `exit 0` puts everything after it under the negation.
	un := `vars.get("UNINSTALL", "false") == "true"`
	if whenOf(s, "uninstall-cert-manager") != un || whenOf(s, "cert-manager") != "!("+un+")" {
		t.Errorf("when %q / %q", whenOf(s, "uninstall-cert-manager"), whenOf(s, "cert-manager"))
	}
	if w := whenOf(s, "uninstall-cert-manager-2"); !strings.Contains(w, `!(vars.get("REINSTALL", "false") == "false")`) {
		t.Errorf("reinstall when %q", w)
	}
	h := s.Steps[6].Helm
	// CERT_MANAGER_VERSION comes from kserve-deps.env, found from find_repo_root.
	if h.Version != "v1.17.0" || h.Repo != "https://charts.jetstack.io" || !h.CreateNamespace || !h.Wait || toJSON(h.Values) != `{"crds":{"enabled":true}}` {
		t.Errorf("helm %+v", h)
	}
	// wait_for_pods's `local timeout="${3:-180s}"` is the caller's third argument, not the
	// local of the function it called before (locals end with their function).
	if w := s.Steps[7]; w.Timeout.String() != "3m0s" || w.Wait.For != "condition=Ready" || w.Wait.Namespace != "cert-manager" {
		t.Errorf("wait %+v %s", w.Wait, w.Timeout)
	}
	nc := map[string]bool{}
	for _, n := range res.Model.NotCarried {
		nc[n.Loc.String()] = true
	}
	for _, at := range []string{"hack/setup/common.sh:186", "hack/setup/common.sh:224"} {
		if !nc[at] {
			t.Errorf("not carried at %s missing: %v", at, res.Model.NotCarried)
		}
	}
	// `if helm list -n cert-manager | grep -q cert-manager` is an existence
	// check: read-only, the install it guards idempotent
	if !slices.ContainsFunc(res.Model.Commands, func(c importer.Command) bool {
		return c.Loc.String() == "hack/setup/infra/manage.cert-manager-helm.sh:48" && c.Fate == importer.FateReadOnly
	}) {
		t.Errorf("the check at manage.cert-manager-helm.sh:48 is not read-only: %v", res.Model.Commands)
	}
	// Scratch variables of common.sh (BIN_DIR, PATH, pod_count) are no inputs of the spec.
	for _, v := range []string{"BIN_DIR", "PATH", "pod_count", "timeout_created"} {
		if res.Model.Var(v) != nil {
			t.Errorf("variable %s declared though no step uses it", v)
		}
	}
	checkOrder(t, res, s)
}

func TestKserveIstio(t *testing.T) {
	res, s := load(t, "kserve", "hack/setup/infra/manage.istio-helm.sh")
	var helm []string
	for _, st := range s.Steps {
		if st.Helm != nil {
			helm = append(helm, st.Name)
		}
	}
	if !reflect.DeepEqual(helm, []string{"istio-base", "istiod", "istio-ingressgateway"}) {
		t.Fatalf("helm steps %v", helm)
	}
	// ISTIO_VERSION="${ISTIO_VERSION_OVERRIDE:-$ISTIO_VERSION}": the override's default is kserve-deps.env's.
	if v := res.Model.Var("ISTIO_VERSION_OVERRIDE"); v == nil || v.Default == nil || *v.Default != "1.27.1" {
		t.Errorf("ISTIO_VERSION_OVERRIDE %+v", v)
	}
	if !strings.Contains(string(res.Spec), "version: ${ISTIO_VERSION_OVERRIDE}") {
		t.Errorf("version not from the variable")
	}
	// `# comment` in backticks between istiod's --set flags expands to nothing;
	// --set-string keeps "true" a string, escaped dots stay in the key.
	var istiod *spec.Step
	for i := range s.Steps {
		if s.Steps[i].Name == "istiod" {
			istiod = s.Steps[i]
		}
	}
	if got := toJSON(istiod.Helm.Values); got != `{"pilot":{"env":{"ENABLE_GATEWAY_API_INFERENCE_EXTENSION":true,"SUPPORT_GATEWAY_API_INFERENCE_EXTENSION":true},"podAnnotations":{"cluster-autoscaler.kubernetes.io/safe-to-evict":"true"}},"proxy":{"autoInject":"disabled"}}` {
		t.Errorf("istiod values %s", got)
	}
	if f := fates(res.Model); f[93] != importer.FateStep || f[78] != importer.FateFolded {
		t.Errorf("fates %v", f)
	}
	checkOrder(t, res, s)
}

func TestIngressNginxDevEnv(t *testing.T) {
	res, s := load(t, "ingress-nginx", "build/dev-env.sh")
	if got := stepNames(s); !reflect.DeepEqual(got, []string{"namespace-ingress-nginx", "ingress-nginx"}) {
		t.Fatalf("steps %v", got)
	}
	// cat <<EOF | helm template … --values - | kubectl apply -f -: the helm step.
	h := s.Steps[1].Helm
	if h.Chart != "./charts/ingress-nginx" || h.Release != "ingress-nginx" || h.Namespace != "ingress-nginx" {
		t.Errorf("helm %+v", h)
	}
	// Its values hold $(date +%s): not known at import, named with why, at the pipe's line.
	nc := map[string]string{}
	for _, n := range res.Model.NotCarried {
		nc[n.Loc.String()] = n.Why
	}
	if !strings.Contains(nc["build/dev-env.sh:84"], "$(date +%s)") {
		t.Errorf("line 84: %q", nc["build/dev-env.sh:84"])
	}
	for _, at := range []string{"build/dev-env.sh:64", "build/dev-env.sh:65", "build/dev-env.sh:73", "build/dev-env.sh:79"} {
		if nc[at] == "" {
			t.Errorf("%s (make, docker, kind) not named: %v", at, res.Model.NotCarried)
		}
	}
	// The closing `cat <<EOF` only prints; no note quotes the import's own directory.
	if nc["build/dev-env.sh:105"] != "" || strings.Contains(toJSON(res.Model), "testdata/scripts") {
		t.Errorf("notes %v", res.Model.NotCarried)
	}
	if f := fates(res.Model); f[82] != importer.FateStep || f[84] != importer.FateStep {
		t.Errorf("fates %v", f)
	}
	checkOrder(t, res, s)
}

func TestKserveSelfSignedCA(t *testing.T) {
	res, s := load(t, "kserve", "hack/self-signed-ca.sh")
	// The option loop (while [[ $# -gt 0 ]]; case $1) is no poll: not named; `[ -z "$namespace" ] &&
	// namespace=kserve` gives the default; `[ … ]` on its own is no command to run.
	if got := stepNames(s); !reflect.DeepEqual(got, []string{"delete-pod-webhookpod"}) || s.Steps[0].Delete.Namespace != "kserve" {
		t.Fatalf("steps %v %+v", got, s.Steps[0].Delete)
	}
	nc := map[int]string{}
	for _, n := range res.Model.NotCarried {
		nc[n.Line] = n.Why
	}
	for line := 42; line <= 80; line++ {
		if nc[line] != "" {
			t.Errorf("line %d: %s", line, nc[line])
		}
	}
	// The certificate Secret is made from files openssl wrote: never read into the spec.
	if !strings.Contains(nc[124], "from a file") || !strings.Contains(nc[115], "openssl") && !strings.Contains(nc[115], "local files") {
		t.Errorf("124 %q / 115 %q", nc[124], nc[115])
	}
	// The caBundle patches are strings the script builds: not carried (they were an invalid spec).
	if !strings.Contains(nc[163], "only known when the script runs") || !strings.Contains(nc[179], "only known when the script runs") {
		t.Errorf("patches: %q / %q", nc[163], nc[179])
	}
	if f := fates(res.Model); f[124] != importer.FateNotCarried || f[133] != importer.FateStep {
		t.Errorf("fates %v", f)
	}
}

func TestKserveKeda(t *testing.T) {
	res, s := load(t, "kserve", "hack/setup/infra/manage.keda-helm.sh")
	var keda *spec.Step
	for _, st := range s.Steps {
		if st.Name == "keda" {
			keda = st
		}
	}
	if keda == nil {
		t.Fatalf("no keda step: %v", stepNames(s))
	}
	// --timeout 10m is the step's timeout; the version is kserve-deps.env's; the empty
	// ${KEDA_EXTRA_ARGS:-} adds nothing.
	h := keda.Helm
	if keda.Timeout.String() != "10m0s" || h.Chart != "keda" || h.Repo != "https://kedacore.github.io/charts" || h.Version != kedaVersion(t) || h.Namespace != "keda" || !h.Wait || !h.CreateNamespace {
		t.Errorf("keda %+v timeout %s", h, keda.Timeout)
	}
	if w := whenOf(s, "keda"); w != `!(vars.get("UNINSTALL", "false") == "true")` {
		t.Errorf("when %q", w)
	}
	checkOrder(t, res, s)
}

func kedaVersion(t *testing.T) string {
	data, err := os.ReadFile(filepath.Join(corpus, "kserve", "kserve-deps.env"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "KEDA_VERSION="); ok {
			return strings.Trim(v, `"`)
		}
	}
	t.Fatal("no KEDA_VERSION in kserve-deps.env")
	return ""
}

// kubeflow/manifests' tests/*_install.sh: kubectl only, kustomize build | apply, waits.
func TestKubeflowPipelinesInstall(t *testing.T) {
	res, s := load(t, "kubeflow", "tests/pipelines_install.sh")
	names := stepNames(s)
	if len(names) != 13 || names[0] != "apply-crd" || names[1] != "wait-crd-compositecontrollers-metacontroller-k8s" || names[2] != "apply-overlays" || names[3] != "wait-pods" {
		t.Fatalf("steps %v", names)
	}
	// cd applications/pipeline: the paths after it are relative to it.
	if f := s.Steps[0].Apply.Manifests[0].File; f != "./applications/pipeline/upstream/third-party/metacontroller/base/crd.yaml" {
		t.Errorf("crd %q", f)
	}
	if k := s.Steps[2].Apply.Manifests[0].Kustomize; k != "./applications/pipeline/overlays" {
		t.Errorf("kustomize %q", k)
	}
	// --for condition=established is the API's Established; --field-selector is kept (a Succeeded
	// pod is never Ready: without it the wait would hang).
	if w := s.Steps[1].Wait; w.For != "condition=Established" || s.Steps[1].Timeout.String() != "30s" {
		t.Errorf("crd wait %+v", w)
	}
	if w := s.Steps[3].Wait; w.On != "pods" || !w.AllNamespaces || w.FieldSelector != "status.phase!=Succeeded" || s.Steps[3].Timeout.String() != "10m0s" {
		t.Errorf("pods wait %+v %s", w, s.Steps[3].Timeout)
	}
	if w := s.Steps[12].Wait; w.On != "deployment/mysql" || w.Namespace != "kubeflow" || w.For != "condition=Available" {
		t.Errorf("last wait %+v", w)
	}
	if f := fates(res.Model); f[22] != importer.FateReadOnly {
		t.Errorf("fates %v", f)
	}
	if res.Model.Verdict() != importer.Faithful {
		t.Errorf("verdict %s %v", res.Model.Verdict(), res.Model.NotCarried)
	}
	checkOrder(t, res, s)
}

func TestKubeflowKserveInstall(t *testing.T) {
	res, s := load(t, "kubeflow", "tests/kserve_install.sh")
	// The first apply (|| true) and the second after the CRD is Established: both carried, server-side.
	if s.Steps[0].Name != "apply-kserve" || s.Steps[5].Name != "apply-kserve-2" || !s.Steps[0].Apply.ServerSide || s.Steps[0].Apply.Manifests[0].Kustomize != "./applications/kserve/kserve" {
		t.Fatalf("steps %v", stepNames(s))
	}
	// kubectl wait --for=create (kubectl 1.31): until the secret exists, cel=true.
	if w := s.Steps[3].Wait; w == nil || w.On != "secret/kserve-webhook-server-cert" || w.For != "cel=true" || s.Steps[3].Timeout.String() != "1m0s" {
		t.Errorf("--for=create wait %+v", s.Steps[3])
	}
	if f := fates(res.Model); f[8] != importer.FateStep || f[18] != importer.FateReadOnly || f[19] != importer.FateReadOnly {
		t.Errorf("fates %v", f)
	}
	if n := res.Model.NotCarried; len(n) != 0 {
		t.Errorf("not carried %v", n)
	}
	checkOrder(t, res, s)
}

func TestKubeflowKnativeRetry(t *testing.T) {
	res, s := load(t, "kubeflow", "tests/knative_install.sh")
	// `if kustomize build … | kubectl apply -f -; then break; fi` in a retry loop: the apply
	// in the condition runs whatever it returns (it was dropped, uncounted).
	if got := stepNames(s); len(got) != 9 || got[0] != "apply-gateways" || got[1] != "wait-pods" {
		t.Fatalf("steps %v", got)
	}
	if f := fates(res.Model); f[6] != importer.FateStep {
		t.Errorf("fates %v", f)
	}
	// for ((i=1; i<=3; i++)) is unrolled as for i in 1 2 3 is (trial
	// 46s69f's D2): three turns of the same steps, a retry, said
	if n := res.Model.NotCarried; len(n) != 0 || !slices.Equal(infoLines(res.Model, "(a retry)"), []int{5}) {
		t.Errorf("not carried %v, retry said at %v", n, infoLines(res.Model, "(a retry)"))
	}
}

func TestKubeflowMetricsServer(t *testing.T) {
	res, s := load(t, "kubeflow", "tests/metrics-server_install.sh")
	if got := stepNames(s); !reflect.DeepEqual(got, []string{"apply-metrics-server", "wait-deployment-metrics-server", "wait-pods"}) {
		t.Fatalf("steps %v", got)
	}
	if w := s.Steps[2].Wait; w.Selector != "k8s-app=metrics-server" || w.Namespace != "kube-system" || w.For != "condition=Ready" {
		t.Errorf("wait %+v", w)
	}
	// curl > file and sed -i on it: named, the apply reads the file when it runs.
	nc := map[int]bool{}
	for _, n := range res.Model.NotCarried {
		nc[n.Line] = true
	}
	if !nc[4] || !nc[5] {
		t.Errorf("not carried %v", res.Model.NotCarried)
	}
	// The debugging commands of the failure branch are read-only.
	if f := fates(res.Model); f[21] != importer.FateReadOnly || f[22] != importer.FateReadOnly || f[23] != importer.FateReadOnly {
		t.Errorf("fates %v", f)
	}
}

func TestKubeflowWaitsOnSelectors(t *testing.T) {
	_, s := load(t, "kubeflow", "tests/cert_manager_install.sh")
	if got := stepNames(s); !reflect.DeepEqual(got, []string{"apply-base", "wait-pod", "apply-kubeflow", "wait-pod-2", "wait-endpoints"}) {
		t.Fatalf("steps %v", got)
	}
	if w := s.Steps[1].Wait; w.On != "pod" || w.Selector != "app=webhook" || w.Namespace != "cert-manager" || s.Steps[1].Timeout.String() != "3m0s" {
		t.Errorf("wait %+v", w)
	}
	// --for=jsonpath='{…}'=Pod on endpoints chosen by a set-based selector.
	if w := s.Steps[4].Wait; w.For != "jsonpath={.subsets[0].addresses[0].targetRef.kind}=Pod" || w.Selector != "app in (cert-manager,webhook)" {
		t.Errorf("endpoints wait %+v", w)
	}

	_, s = load(t, "kubeflow", "tests/oauth2-proxy_install.sh")
	// `kubectl wait … deployment -n oauth2-proxy oauth2-proxy`: TYPE NAME around a flag.
	if w := s.Steps[3].Wait; w.On != "deployment/oauth2-proxy" || w.Namespace != "oauth2-proxy" {
		t.Errorf("deployment wait %+v", w)
	}
	if w := s.Steps[4].Wait; !w.AllNamespaces || w.FieldSelector != "status.phase!=Succeeded" {
		t.Errorf("quoted '--field-selector=…' %+v", w)
	}

	res, s := load(t, "kubeflow", "tests/istio-cni_install.sh")
	if w := s.Steps[3].Wait; w.On != "pods" || w.Namespace != "istio-system" || res.Model.Verdict() != importer.Faithful {
		t.Errorf("wait %+v verdict %s", w, res.Model.Verdict())
	}
}

func TestKubeflowSparkRepoRoot(t *testing.T) {
	res, s := load(t, "kubeflow", "tests/spark_install.sh")
	// REPOSITORY_ROOT=$(git rev-parse --show-toplevel 2>/dev/null || echo …); cd "$REPOSITORY_ROOT"
	if k := s.Steps[0].Apply.Manifests[0].Kustomize; k != "./applications/spark/spark-operator/overlays/kubeflow" || !s.Steps[0].Apply.ServerSide {
		t.Errorf("apply %+v", s.Steps[0].Apply)
	}
	if res.Model.Verdict() != importer.Faithful {
		t.Errorf("verdict %s %v", res.Model.Verdict(), res.Model.NotCarried)
	}
	if w := s.Steps[4].Wait; w.On != "endpoints/spark-operator-webhook-svc" || w.Namespace != "kubeflow" {
		t.Errorf("wait %+v", w)
	}
}

func TestKubeflowTrainerRollout(t *testing.T) {
	res, s := load(t, "kubeflow", "tests/trainer_install.sh")
	want := []string{"apply-crds", "wait-crd-trainjobs-trainer-kubeflow-org", "apply-overlays", "wait-deployment-kubeflow-trainer-controller",
		"wait-deployment-jobset-controller-manager", "apply-runtimes", "apply-kubeflow-trainer-roles",
		"restart-deployment-jobset-controller-manager", "status-deployment-jobset-controller-manager", "wait-deployment-jobset-controller-manager-2",
		"wait-validatingwebhookconfiguration-validator", "wait-mutatingwebhookconfiguration-jobset-mutating"}
	if got := stepNames(s); !reflect.DeepEqual(got, want) {
		t.Fatalf("steps %v", got)
	}
	// cd - returns to the start: paths before it are under applications/trainer.
	if f := s.Steps[6].Apply.Manifests[0].File; f != "./applications/trainer/upstream/overlays/kubeflow-platform/kubeflow-trainer-roles.yaml" {
		t.Errorf("file %q", f)
	}
	if r := s.Steps[7].Rollout; r == nil || r.Restart != "deployment/jobset-controller-manager" || r.Namespace != "kubeflow-system" {
		t.Errorf("rollout %+v", r)
	}
	if w := s.Steps[10].Wait; w.For != "jsonpath={.webhooks[0].clientConfig.caBundle}" || s.Steps[10].Timeout.String() != "2m0s" {
		t.Errorf("caBundle wait %+v", w)
	}
	if f := fates(res.Model); f[12] != importer.FateReadOnly || f[25] != importer.FateReadOnly {
		t.Errorf("fates %v", f)
	}
	checkOrder(t, res, s)
}
