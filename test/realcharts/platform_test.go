// Package realcharts runs the built khook over public charts (the corpus
// described in docs/real-charts.md) on its own harness cluster: the
// metrics-server APIService it installs makes discovery partial cluster-wide,
// which no other test package should see.
package realcharts

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/khook/khook/internal/ci/gha"
	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/test/chartsrc"
	"github.com/khook/khook/test/ci/citest"
	"github.com/khook/khook/test/cluster"
	"github.com/khook/khook/test/e2e/apiproxy"
)

var kube *cluster.Cluster

func TestMain(m *testing.M) {
	code := cluster.Main(m, &kube)
	citest.RemoveBuilds()
	os.Exit(code)
}

// prefix is the spec's ${P}: the namespaces are P-policy, P-secrets,
// P-gatekeeper, P-metrics. The package has its own cluster, so it is fixed.
const prefix = "platform"

// platform runs the built khook on testdata/platform.yaml through the
// write-counting proxy.
type platform struct {
	t     *testing.T
	bin   string
	home  string
	proxy *apiproxy.Proxy
	vars  map[string]string
}

func (p *platform) run(args ...string) (code int, stdout, stderr string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	full := append(append([]string{}, args...), "-f", spec(), "--kubeconfig", p.proxy.Kubeconfig)
	for _, k := range sortedKeys(p.vars) {
		full = append(full, "--set", k+"="+p.vars[k])
	}
	cmd := exec.CommandContext(ctx, p.bin, full...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + p.home, "NO_COLOR=1", "TERM=dumb"}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		p.t.Fatalf("cannot run khook %s: %v", strings.Join(args, " "), err)
	}
	p.t.Logf("khook %s: exit %d in %s", strings.Join(args, " "), code, time.Since(start).Round(100*time.Millisecond))
	return code, out.String(), errOut.String()
}

// mustRun runs khook and fails the test unless it exits with want.
func (p *platform) mustRun(want int, args ...string) string {
	p.t.Helper()
	code, stdout, stderr := p.run(args...)
	if code != want {
		p.t.Fatalf("khook %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, stdout, stderr)
	}
	return stdout
}

func spec() string {
	p, _ := filepath.Abs(filepath.Join("testdata", "platform.yaml"))
	return p
}

func sortedKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func TestPlatformBootstrap(t *testing.T) {
	kube.DumpLogsOnFailure(t)
	corpus := chartsrc.RealChartsDir(t)
	started := time.Now()
	ctx := t.Context()

	// The three ways users get charts: an HTTP repository, an OCI registry,
	// a local archive.
	repo := chartsrc.NewHTTPRepoFromFiles(t, chartsrc.Auth{},
		chartsrc.RealChart(t, corpus, "metrics-server", "3.13.1"),
		chartsrc.RealChart(t, corpus, "gatekeeper", "3.17.0"),
		chartsrc.RealChart(t, corpus, "gatekeeper", "3.23.1"))
	reg := chartsrc.NewOCIRegistry(t, chartsrc.Auth{})
	reg.PushFile(t, chartsrc.RealChart(t, corpus, "kyverno", "3.3.6"))

	p := &platform{t: t, bin: citest.Khook(t), home: t.TempDir(), proxy: apiproxy.Start(t, kube.RESTConfig), vars: map[string]string{
		"P":                  prefix,
		"REPO":               repo.URL,
		"OCI":                reg.URL(),
		"SEALED_SECRETS_TGZ": chartsrc.RealChart(t, corpus, "sealed-secrets", "2.16.0"),
		"GK_VERSION":         "3.17.0",
	}}
	// Last registered, so first to run: the APIService must go before the
	// namespaces, whose deletion it blocks cluster-wide (discovery of
	// metrics.k8s.io fails, so the namespace controller cannot finish).
	t.Cleanup(func() { cleanup(t) })

	// 1. Fresh apply.
	p.mustRun(0, "apply")
	writes, _ := p.proxy.Writes()
	t.Logf("fresh apply: %d writes", len(writes))
	revs := helmRevisions(t)
	t.Logf("releases after the fresh apply: %v", revs)
	for _, r := range []string{"kyverno", "sealed-secrets", "gatekeeper", "metrics-server"} {
		if revs[r] != 1 {
			t.Errorf("release %s at revision %d after the fresh apply, want 1", r, revs[r])
		}
	}
	// The APIService exists and is not Available: discovery is partial from
	// here on, and every later run must cope.
	if _, err := kube.Client.Discovery().ServerResourcesForGroupVersion("metrics.k8s.io/v1beta1"); err == nil {
		t.Errorf("metrics.k8s.io/v1beta1 is served; the test expects its APIService to be unavailable")
	}

	// gatekeeper's CRD-upgrade and namespace-label Jobs ran as pre-install
	// and post-install hooks and are gone (hook-delete-policy: hook-succeeded).
	var hookJobs []string
	for _, name := range gatekeeperHookJobs {
		if slices.ContainsFunc(writes, func(w string) bool { return strings.HasSuffix(w, "/jobs/"+name) }) {
			hookJobs = append(hookJobs, name)
		}
	}
	jobs, err := kube.Client.BatchV1().Jobs(prefix+"-gatekeeper").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, j := range jobs.Items {
		if slices.Contains(gatekeeperHookJobs, j.Name) {
			left = append(left, j.Name)
		}
	}
	t.Logf("gatekeeper hook Jobs written: %v, left after install: %v", hookJobs, left)
	if len(hookJobs) != len(gatekeeperHookJobs) || len(left) != 0 {
		t.Errorf("gatekeeper hook Jobs: %v written (want %v), %v left (want none)", hookJobs, gatekeeperHookJobs, left)
	}
	caBundle := apiServiceCABundle(t)

	// 2. Converged re-run: no write but the job's, no new revision.
	p.mustRun(0, "apply")
	writes, _ = p.proxy.Writes()
	var other []string
	for _, w := range writes {
		if !strings.Contains(w, "/jobs") && !strings.Contains(w, "/pods") {
			other = append(other, w)
		}
	}
	after := helmRevisions(t)
	t.Logf("converged re-run: %d writes %v, %d outside jobs %v; Helm revisions %v -> %v", len(writes), writes, len(other), other, revs, after)
	if len(other) != 0 {
		t.Errorf("converged re-run wrote outside jobs: %v", other)
	}
	if fmt.Sprint(after) != fmt.Sprint(revs) {
		t.Errorf("converged re-run made new Helm revisions: %v -> %v", revs, after)
	}

	// 3. plan and the CI drift job see no drift on the converged cluster.
	p.mustRun(0, "plan", "--diff", "--detailed-exitcode")
	p.drift(t, false)

	// 4. An out-of-band edit to an object of each chart: plan and drift
	// report it, apply repairs it.
	edits := outOfBandEdits(t)
	out := p.mustRun(2, "plan", "--diff", "--detailed-exitcode")
	for _, e := range edits {
		if !strings.Contains(out, e.step) || !strings.Contains(out, e.object) {
			t.Errorf("plan does not report the edit of %s (step %s):\n%s", e.object, e.step, out)
		}
	}
	p.drift(t, true, edits...)
	p.mustRun(0, "apply")
	p.mustRun(0, "plan", "--diff", "--detailed-exitcode")
	revs = helmRevisions(t)
	t.Logf("releases after the repair: %v", revs)

	// 5. A chart version bump upgrades that release alone.
	p.vars["GK_VERSION"] = "3.23.1"
	out = p.mustRun(2, "plan", "--diff", "--detailed-exitcode")
	// The plan renders every chart with lookup, as apply does: the
	// certificate metrics-server's chart generated and reuses is not shown
	// as changing while another release upgrades.
	if !regexp.MustCompile(`(?m)^upgrade +gatekeeper \(helm\)$`).MatchString(out) || strings.Contains(out, "+  caBundle:") {
		t.Errorf("the upgrade plan: want gatekeeper to upgrade and no generated certificate changing:\n%s", out)
	}
	p.mustRun(0, "apply")
	bumped := helmRevisions(t)
	t.Logf("releases after the gatekeeper bump: %v", bumped)
	for r, v := range revs {
		want := v
		if r == "gatekeeper" {
			want = v + 1
		}
		if bumped[r] != want {
			t.Errorf("release %s at revision %d after the bump, want %d", r, bumped[r], want)
		}
	}
	p.mustRun(0, "plan", "--detailed-exitcode")

	// The generated certificate survived the repair and the upgrade: the
	// chart reuses it through lookup, and khook compares against the
	// release's stored manifest instead of a fresh render.
	if got := apiServiceCABundle(t); got != caBundle {
		t.Errorf("the metrics-server APIService's caBundle changed across re-runs, a repair and an upgrade")
	}
	// Nothing left the machine: the API server's calls to the webhook and
	// to the aggregated API were refused by the harness's egress proxy.
	if n, dests, ok := kube.RefusedEgress(); ok {
		t.Logf("egress proxy refused %d connections, recently to %v", n, uniq(dests))
		if !slices.ContainsFunc(dests, func(d string) bool { return strings.HasPrefix(d, "10.96.") }) {
			t.Errorf("the API server never tried a ClusterIP; refused: %v", dests)
		}
	}

	// A values change of a chart whose CRDs come from a dependency: plan
	// renders the chart whole (a release stores it without its subcharts)
	// and shows the one CRD the change drops, not all of them.
	p.vars["GLOBAL_CONTEXT"] = "false"
	out = p.mustRun(2, "plan", "--diff", "--detailed-exitcode")
	if !strings.Contains(out, "globalcontextentries.kyverno.io") || strings.Contains(out, "clusterpolicies.kyverno.io") {
		t.Errorf("plan of disabling one CRD of kyverno's crds subchart:\n%s", out)
	}
	delete(p.vars, "GLOBAL_CONTEXT")

	// 6. destroy removes everything but the CRDs; a second destroy is green.
	p.mustRun(0, "destroy")
	if left := helmRevisions(t); len(left) != 0 {
		t.Errorf("releases left after destroy: %v", left)
	}
	if _, err := kube.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, gatekeeperWebhook, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the gatekeeper webhook configuration is still there after destroy (%v)", err)
	}
	if _, err := dyn(t).Resource(apiServices).Get(ctx, "v1beta1.metrics.k8s.io", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the metrics-server APIService is still there after destroy (%v)", err)
	}
	for _, crd := range []string{"clusterpolicies.kyverno.io", "sealedsecrets.bitnami.com", "constrainttemplates.templates.gatekeeper.sh"} {
		if _, err := dyn(t).Resource(crds).Get(ctx, crd, metav1.GetOptions{}); err != nil {
			t.Errorf("CRD %s after destroy: %v (destroy keeps CRDs)", crd, err)
		}
	}
	p.mustRun(0, "destroy")
	t.Logf("platform bootstrap test took %s", time.Since(started).Round(time.Second))
}

// drift runs `khook ci` with command drift, as a nightly GitHub job does.
func (p *platform) drift(t *testing.T, wantDrift bool, edits ...edit) {
	t.Helper()
	kubeconfig, err := os.ReadFile(p.proxy.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	var vars strings.Builder
	for _, k := range sortedKeys(p.vars) {
		vars.WriteString(k + "=" + p.vars[k] + "\n")
	}
	srv := githubtest.New()
	defer srv.Close()
	g := citest.NewGitHub(t, srv.URL, 1, map[string]string{
		"command": "drift", "file": spec(), "kubeconfig": string(kubeconfig), "vars": vars.String(),
		"github-token": "ghs_realcharts_t0ken", "diff": "false", "comment": "never",
		"identifier": "", "var-file": "", "context": "",
	})
	g.Set("TMPDIR="+t.TempDir(), "HOME="+p.home)
	res := citest.Run(t, g.Workspace, g.Environ)
	outs, _ := gha.ParseKeyValues(g.Read(t, "output"))
	t.Logf("khook ci (command drift): exit %d, drift=%s", res.Code, outs["drift"])
	if !wantDrift {
		if res.Code != 0 || outs["drift"] != "false" {
			t.Fatalf("drift on the converged cluster: exit %d outputs %v\n%s\n%s", res.Code, outs, res.Stdout, res.Stderr)
		}
		return
	}
	if res.Code != 1 || outs["drift"] != "true" || outs["failure-reason"] != "drift" {
		t.Fatalf("drift after out-of-band edits: exit %d outputs %v\n%s\n%s", res.Code, outs, res.Stdout, res.Stderr)
	}
	for _, e := range edits {
		if !strings.Contains(res.Stdout, "step "+e.step+" would") {
			t.Errorf("drift does not name step %s:\n%s", e.step, res.Stdout)
		}
	}
}

// gatekeeper's hook Jobs (pre-install CRD upgrade, post-install namespace
// label) and its validating webhook configuration.
var gatekeeperHookJobs = []string{"gatekeeper-update-crds-hook", "gatekeeper-update-namespace-label"}

const gatekeeperWebhook = "gatekeeper-validating-webhook-configuration"

var (
	apiServices = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	crds        = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")
)

func dyn(t *testing.T) dynamic.Interface {
	t.Helper()
	d, err := dynamic.NewForConfig(kube.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// apiServiceCABundle is the caBundle metrics-server's chart generated.
func apiServiceCABundle(t *testing.T) string {
	t.Helper()
	u, err := dyn(t).Resource(apiServices).Get(t.Context(), "v1beta1.metrics.k8s.io", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ca, _, _ := unstructured.NestedString(u.Object, "spec", "caBundle")
	if ca == "" {
		t.Fatal("the metrics-server APIService has no caBundle; the test sets tls.type helm for one")
	}
	return ca
}

func uniq(ss []string) []string {
	out := slices.Clone(ss)
	slices.Sort(out)
	return slices.Compact(out)
}

// helmRevisions maps each release to its newest revision, from Helm's
// release Secrets (label owner=helm) in every namespace.
func helmRevisions(t *testing.T) map[string]int {
	t.Helper()
	secrets, err := kube.Client.CoreV1().Secrets("").List(t.Context(), metav1.ListOptions{LabelSelector: "owner=helm"})
	if err != nil {
		t.Fatal(err)
	}
	revs := map[string]int{}
	for _, s := range secrets.Items {
		var v int
		fmt.Sscan(s.Labels["version"], &v)
		if v > revs[s.Labels["name"]] {
			revs[s.Labels["name"]] = v
		}
	}
	return revs
}

// cleanup removes what a failed run may have left: the APIService first.
func cleanup(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := dynamic.NewForConfig(kube.RESTConfig)
	if err != nil {
		return
	}
	_ = d.Resource(apiServices).Delete(ctx, "v1beta1.metrics.k8s.io", metav1.DeleteOptions{})
	_ = kube.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, gatekeeperWebhook, metav1.DeleteOptions{})
	_ = kube.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, "gatekeeper-mutating-webhook-configuration", metav1.DeleteOptions{})
	for _, ns := range []string{"policy", "secrets", "gatekeeper", "metrics"} {
		_ = kube.Client.CoreV1().Namespaces().Delete(ctx, prefix+"-"+ns, metav1.DeleteOptions{})
	}
}

// edit is an out-of-band change to an object a chart made: what kubectl
// edit by a person on call would do.
type edit struct {
	step   string // the spec step whose release owns the object
	object string // as plan prints it, e.g. "Deployment platform-metrics/metrics-server"
}

// outOfBandEdits changes one field each chart sets, in an object of each
// chart, behind khook's back.
func outOfBandEdits(t *testing.T) []edit {
	t.Helper()
	ctx := t.Context()
	d := dyn(t)
	patch := func(gvr schema.GroupVersionResource, ns, name string, pt types.PatchType, body string) {
		t.Helper()
		var err error
		if ns == "" {
			_, err = d.Resource(gvr).Patch(ctx, name, pt, []byte(body), metav1.PatchOptions{FieldManager: "kubectl-edit"})
		} else {
			_, err = d.Resource(gvr).Namespace(ns).Patch(ctx, name, pt, []byte(body), metav1.PatchOptions{FieldManager: "kubectl-edit"})
		}
		if err != nil {
			t.Fatalf("out-of-band edit of %s %s/%s: %v", gvr.Resource, ns, name, err)
		}
	}
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	services := schema.GroupVersionResource{Version: "v1", Resource: "services"}
	patch(crds, "", "clusterpolicies.kyverno.io", types.MergePatchType, `{"metadata":{"annotations":{"controller-gen.kubebuilder.io/version":"v0.0.1"}}}`)
	patch(services, prefix+"-secrets", "sealed-secrets-controller", types.JSONPatchType, `[{"op":"replace","path":"/spec/ports/0/targetPort","value":9999}]`)
	patch(deployments, prefix+"-gatekeeper", "gatekeeper-controller-manager", types.MergePatchType, `{"spec":{"replicas":2}}`)
	patch(deployments, prefix+"-metrics", "metrics-server", types.MergePatchType, `{"spec":{"replicas":3}}`)
	return []edit{
		{"kyverno", "clusterpolicies.kyverno.io"},
		{"sealed-secrets", "sealed-secrets-controller"},
		{"gatekeeper", "gatekeeper-controller-manager"},
		{"metrics-server", prefix + "-metrics/metrics-server"},
	}
}
