package realcharts

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/model"
	"github.com/khook/khook/test/chartsrc"
	"github.com/khook/khook/test/ci/citest"
	"github.com/khook/khook/test/e2e/apiproxy"
	"github.com/khook/khook/test/helmcli"
)

// corpusChart is one public chart of the corpus test (the table in
// docs/real-charts.md): installed unedited, with the values a team would
// set, by khook and by plain helm.
type corpusChart struct {
	name    string // folder and chart name in test/testdata/real-charts
	version string
	// values are what a team sets; each entry of the table says why.
	values string
	// upgrade is a later released version: the chart is then upgraded to
	// it, planned first.
	upgrade string
	// serial charts change the whole cluster while installed (a webhook
	// on every Job, say) and run alone, before the parallel ones.
	serial bool
	// nodes and storage are what the chart needs of the harness to become
	// ready: that many schedulable nodes, a default StorageClass.
	nodes   int
	storage bool
	// fails, when set, says why neither tool can install the chart here.
	fails *chartFailure
	// required is a value the chart refuses to render without (a
	// `required` in its templates, or its values schema): the plan without
	// it must say fail, naming it.
	required string
	// crds are CRDs from the chart's crds/ that change between version
	// and upgrade: after the upgrade each carries upgrade's copy.
	crds []string
	// adopt is part of the refusal both tools give an upgrade whose chart
	// now templates objects the release does not own (CRDs that moved from
	// crds/ to templates): the plan must say fail, and the upgrade then
	// goes through with takeOwnership (helm --take-ownership).
	adopt string
}

// chartFailure is an install neither tool can finish, and what both say.
type chartFailure struct {
	// reason is part of both tools' error.
	reason string
	// predicted: khook's plan says fail before anything is written.
	// Otherwise unpredictable says why no plan can (a pod that never
	// schedules, a volume that never binds: the cluster decides later).
	predicted     bool
	unpredictable string
	// pending is a scheduler reason khook's failed apply must print
	// beside the Pending pod (the diagnosis).
	pending string
}

// corpus is the public-chart corpus (test/testdata/real-charts/SOURCES.md);
// gatekeeper, kyverno and metrics-server run in TestPlatformBootstrap.
var corpus = []corpusChart{
	{name: "cert-manager", version: "v1.21.2",
		// The chart's CRDs, rendered as templates, with its keep policy.
		values: `crds: {enabled: true}`},
	{name: "trust-manager", version: "v0.25.0",
		// Its webhook's certificate is a cert-manager Certificate: without
		// cert-manager's CRDs (installed on its own, as the chart says),
		// no tool can install it. Run before cert-manager installs them.
		serial: true,
		fails:  &chartFailure{reason: "Certificate", predicted: true}},
	{name: "external-dns", version: "1.22.0",
		// Its values schema requires the sync policy to be chosen.
		values: `policy: upsert-only`, required: "policy"},
	{name: "metallb", version: "0.15.2", upgrade: "0.16.2"},
	{name: "descheduler", version: "0.35.0"},
	{name: "local-path-provisioner", version: "0.0.30",
		// Not the harness's own class name.
		values: `storageClass: {name: corpus-local-path}`},
	{name: "kueue", version: "0.17.0",
		// Its webhook on every Job outside kube-system cannot be reached
		// on a simulated node and fails closed: alone, so no other chart's
		// hook Job meets it.
		serial: true},
	{name: "karpenter", version: "1.13.0", upgrade: "1.14.1",
		// Two replicas, required anti-affinity per node, spread over zones.
		nodes:    3,
		values:   `settings: {clusterName: corpus}`,
		required: "settings.clusterName"},
	{name: "vertical-pod-autoscaler", version: "0.9.0", upgrade: "0.13.0",
		// 0.13.0 templates the CRDs 0.9.0 shipped in crds/.
		adopt: "exists and cannot be imported into the current release"},
	{name: "flagger", version: "1.36.1"},
	{name: "podinfo", version: "6.1.3",
		// This copy's HorizontalPodAutoscaler writes autoscaling/v2 with
		// v2beta1's field names: the API server's schema refuses it.
		fails: &chartFailure{reason: "targetAverageUtilization", predicted: true}},
	{name: "flannel", version: "v0.28.10"},
	{name: "cilium", version: "1.15.19",
		// Two operator replicas with required anti-affinity per node.
		nodes: 3},
	{name: "dapr", version: "1.14.0",
		// The scheduler's StatefulSet claims a volume of the default class.
		storage: true},
	{name: "loki", version: "6.55.0",
		// The module's chart declares minio, grafana-agent-operator and
		// rollout-operator from HTTP repositories and vendors none: Helm
		// refuses it, khook builds them and cannot reach the repositories
		// (nothing leaves the machine).
		values: `deploymentMode: SingleBinary
loki: {storage: {type: filesystem}, commonConfig: {replication_factor: 1}, schemaConfig: {configs: [{from: "2024-01-01", store: tsdb, object_store: filesystem, schema: v13, index: {prefix: index_, period: 24h}}]}}
singleBinary: {replicas: 1}
read: {replicas: 0}
write: {replicas: 0}
backend: {replicas: 0}`,
		fails: &chartFailure{reason: "minio", predicted: true}},
	{name: "kro", version: "0.9.3", upgrade: "0.9.4",
		crds: []string{"graphrevisions.internal.kro.run"}},
	{name: "sealed-secrets", version: "2.16.0", upgrade: "2.19.3",
		values: `fullnameOverride: corpus-sealed-secrets`,
		crds:   []string{"sealedsecrets.bitnami.com"}},
}

// provoked are real charts made to fail the way real clusters make them
// fail: each must fail in both tools, and khook must say why (the Pending
// pod and the scheduler's reason) within its own step timeout, shorter than
// the --timeout helm is given.
var provoked = []corpusChart{
	{name: "karpenter", version: "1.13.0", nodes: 3,
		// Four replicas on three nodes, one per node required (its zone
		// spread alone would place them).
		values: `{settings: {clusterName: corpus}, replicas: 4}`,
		fails: &chartFailure{reason: "karpenter", pending: "didn't match pod anti-affinity rules",
			unpredictable: "a pod that never schedules: the scheduler decides once the Deployment exists, on the nodes there are then"}},
	{name: "cilium", version: "1.15.19",
		// Four operator replicas: on host network, each wants the node's
		// ports, which the scheduler checks before the anti-affinity.
		values: `operator: {replicas: 4}`,
		fails: &chartFailure{reason: "cilium-operator", pending: "didn't have free ports for the requested pod ports",
			unpredictable: "a pod that never schedules: the scheduler decides once the Deployment exists, on the nodes there are then"}},
	{name: "dapr", version: "1.14.0",
		// A claim of a class nobody serves, with or without a default one.
		values: `dapr_scheduler: {cluster: {storageClassName: corpus-no-such-class}}`,
		fails: &chartFailure{reason: "dapr-scheduler-server", pending: "unbound immediate PersistentVolumeClaims",
			unpredictable: "a volume that never binds: a class can be created, or a provisioner start, at any time"}},
}

const (
	// stepTimeout is khook's step timeout; helmTimeout the control's. A
	// provoked failure runs khook with provokedTimeout, shorter than
	// provokedHelmTimeout, so khook's own timeout ends the wait.
	stepTimeout     = "4m"
	helmTimeout     = "4m"
	provokedTimeout = "60s"
	// provokedHelmTimeout is helm's --timeout on a provoked failure.
	provokedHelmTimeout = "2m"
)

func TestCorpus(t *testing.T) {
	kube.DumpLogsOnFailure(t)
	started := time.Now()
	dir := chartsrc.RealChartsDir(t)
	bin, helm := citest.Khook(t), helmcli.Binary(t)
	h := harnessOf(t)
	t.Logf("harness: %d schedulable nodes, default StorageClass %q", h.nodes, h.defaultClass)
	for _, c := range corpus {
		t.Run(c.name, func(t *testing.T) {
			if !c.serial {
				t.Parallel()
			}
			r := newChartRun(t, c, dir, bin, helm)
			if why := h.lacks(c); why != "" {
				t.Fatalf("%s %s needs %s; this harness has %d schedulable nodes and default StorageClass %q: test/cluster provides both, a connected cluster must too", c.name, c.version, why, h.nodes, h.defaultClass)
			}
			r.control()
			r.khook()
		})
	}
	t.Cleanup(func() { t.Logf("corpus test took %s", time.Since(started).Round(time.Second)) })
}

func TestCorpusProvokedFailures(t *testing.T) {
	kube.DumpLogsOnFailure(t)
	dir := chartsrc.RealChartsDir(t)
	bin, helm := citest.Khook(t), helmcli.Binary(t)
	h := harnessOf(t)
	for _, c := range provoked {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if why := h.lacks(c); why != "" {
				t.Fatalf("%s %s: the failure is provoked on a harness with %s; this one has %d schedulable nodes and default StorageClass %q: test/cluster provides both, a connected cluster must too", c.name, c.version, why, h.nodes, h.defaultClass)
			}
			r := newChartRun(t, c, dir, bin, helm)
			r.timeout, r.helmTimeout = provokedTimeout, provokedHelmTimeout
			r.control()
			r.khook()
		})
	}
}

// clusterScoped are the kinds a failed or finished chart run may leave
// cluster-wide that would change later runs: CRDs (destroy and cert-manager's
// keep policy leave them), and webhooks and APIServices (a test that failed
// half-way), which act on every namespace.
var clusterScoped = []schema.GroupVersionResource{
	crds, apiServices,
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"},
}

// removeClusterScoped deletes what the release's chart made of
// clusterScoped, by Helm's release annotation, and the chart's crds/ CRDs
// (which carry none): objects this test made.
func removeClusterScoped(t *testing.T, release string, crdNames []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d := dyn(t)
	for _, name := range crdNames {
		_ = d.Resource(crds).Delete(ctx, name, metav1.DeleteOptions{})
	}
	// Await them gone: the next run of the chart creates the same names.
	for _, name := range crdNames {
		_ = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			_, err := d.Resource(crds).Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
	}
	for _, gvr := range clusterScoped {
		list, err := d.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		for _, o := range list.Items {
			if o.GetAnnotations()["meta.helm.sh/release-name"] == release {
				_ = d.Resource(gvr).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			}
		}
	}
}

// removeOrphanClusterRoles deletes the ClusterRoles named after release
// that carry no Helm release annotation, and returns their names.
func removeOrphanClusterRoles(t *testing.T, release string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := kube.Client.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var names []string
	for _, cr := range list.Items {
		if strings.HasPrefix(cr.Name, release+"-") && cr.Annotations["meta.helm.sh/release-name"] == "" {
			if kube.Client.RbacV1().ClusterRoles().Delete(ctx, cr.Name, metav1.DeleteOptions{}) == nil {
				names = append(names, cr.Name)
			}
		}
	}
	return names
}

// harness is what the test cluster offers charts.
type harness struct {
	nodes        int
	defaultClass string
}

func harnessOf(t *testing.T) harness {
	t.Helper()
	nodes, err := kube.Client.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var h harness
	for _, n := range nodes.Items {
		if !n.Spec.Unschedulable {
			h.nodes++
		}
	}
	classes, err := kube.Client.StorageV1().StorageClasses().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range classes.Items {
		if sc.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" {
			h.defaultClass = sc.Name
		}
	}
	return h
}

// lacks says what c needs that the harness does not have ("" for nothing).
// A chart the harness cannot serve fails its test: a skip would let a run
// that checked less pass as the whole corpus.
func (h harness) lacks(c corpusChart) string {
	var why []string
	if c.nodes > h.nodes {
		why = append(why, fmt.Sprintf("%d schedulable nodes", c.nodes))
	}
	if c.storage && h.defaultClass == "" {
		why = append(why, "a default StorageClass with a provisioner")
	}
	return strings.Join(why, " and ")
}

// chartRun is one chart through helm (the control) and through khook.
type chartRun struct {
	t        *testing.T
	c        corpusChart
	dir      string
	khookBin string
	helmBin  string
	home     string
	env      []string
	// ns is the release namespace of both tools, one after the other: a
	// CRD helm's uninstall keeps (cert-manager's) then belongs to the
	// same release and namespace, as it would for a team moving to khook.
	ns      string
	release string
	// timeout is khook's step timeout, helmTimeout helm's --timeout.
	helmTimeout string
	// takeOwnership is the spec's helm takeOwnership.
	takeOwnership bool
	timeout       string
	helmOK        bool
	helmError     string
	// helmUpgrade is what plain helm's upgrade to c.upgrade said.
	helmUpgrade string
	// crdNames are the CRDs of the chart's versions (crds/ and templates).
	crdNames []string
}

func newChartRun(t *testing.T, c corpusChart, dir, khookBin, helmBin string) *chartRun {
	home := t.TempDir()
	release := "corpus-" + c.name
	var crdNames []string
	for _, v := range []string{c.version, c.upgrade} {
		if v != "" {
			crdNames = append(crdNames, chartsrc.CRDNames(t, chartsrc.RealChart(t, dir, c.name, v))...)
		}
	}
	t.Cleanup(func() {
		removeClusterScoped(t, release, crdNames)
		removeOrphanClusterRoles(t, release)
	})
	return &chartRun{t: t, c: c, dir: dir, khookBin: khookBin, helmBin: helmBin, home: home, ns: kube.Namespace(t), release: release, timeout: stepTimeout, helmTimeout: helmTimeout, crdNames: crdNames,
		env: []string{
			"PATH=" + os.Getenv("PATH"), "HOME=" + home, "NO_COLOR=1", "TERM=dumb",
			"XDG_CACHE_HOME=" + filepath.Join(home, "cache"), "XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "XDG_DATA_HOME=" + filepath.Join(home, "data"),
			// Nothing leaves the machine: a chart dependency from a public
			// repository (loki's) goes to a proxy that refuses it; the
			// cluster and the harness's servers are on loopback, which Go
			// never proxies.
			"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9",
		}}
}

func (r *chartRun) tgz(version string) string {
	return chartsrc.RealChart(r.t, r.dir, r.c.name, version)
}

// exec runs a command with the run's environment and returns its exit code
// and combined output.
func (r *chartRun) exec(limit time.Duration, bin string, args ...string) (int, string) {
	r.t.Helper()
	code, stdout, stderr := r.exec3(limit, bin, args...)
	return code, stdout + stderr
}

// exec3 is exec with stdout and stderr apart.
func (r *chartRun) exec3(limit time.Duration, bin string, args ...string) (int, string, string) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = r.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		r.t.Fatalf("cannot run %s %s: %v", filepath.Base(bin), strings.Join(args, " "), err)
	}
	r.t.Logf("%s %s: exit %d in %s", filepath.Base(bin), args[0], code, time.Since(start).Round(100*time.Millisecond))
	return code, out.String(), errOut.String()
}

// valuesFile writes the chart's values for helm -f.
func (r *chartRun) valuesFile() string {
	path := filepath.Join(r.home, "values.yaml")
	if err := os.WriteFile(path, []byte(r.c.values+"\n"), 0o644); err != nil {
		r.t.Fatal(err)
	}
	return path
}

// control installs the chart with plain helm (upgrade --install --wait),
// records what happened and uninstalls it.
func (r *chartRun) control() {
	t, ns := r.t, r.ns
	kubeconfig := apiproxy.Start(t, kube.RESTConfig).Kubeconfig
	code, out := r.exec(10*time.Minute, r.helmBin, "upgrade", "--install", r.release, r.tgz(r.c.version),
		"--namespace", ns, "--wait", "--timeout", r.helmTimeout, "-f", r.valuesFile(), "--kubeconfig", kubeconfig)
	r.helmOK = code == 0
	r.helmError = out
	t.Logf("helm upgrade --install %s %s: exit %d\n%s", r.c.name, r.c.version, code, tail(out, 12))
	if r.helmOK && r.c.upgrade != "" {
		// Plain helm's upgrade, for the table: it never touches crds/.
		c, o := r.exec(10*time.Minute, r.helmBin, "upgrade", r.release, r.tgz(r.c.upgrade),
			"--namespace", ns, "--wait", "--timeout", r.helmTimeout, "-f", r.valuesFile(), "--kubeconfig", kubeconfig)
		r.helmUpgrade = "upgraded"
		if c != 0 {
			r.helmUpgrade = "failed: " + lastLine(o)
			if r.c.adopt != "" && strings.Contains(o, r.c.adopt) {
				c, o = r.exec(10*time.Minute, r.helmBin, "upgrade", r.release, r.tgz(r.c.upgrade), "--take-ownership",
					"--namespace", ns, "--wait", "--timeout", r.helmTimeout, "-f", r.valuesFile(), "--kubeconfig", kubeconfig)
				r.helmUpgrade += "; with --take-ownership: exit " + fmt.Sprint(c)
			}
		}
		t.Logf("helm upgrade %s %s -> %s: %s", r.c.name, r.c.version, r.c.upgrade, r.helmUpgrade)
	}
	// Uninstall what helm made, failed or not: cluster-scoped objects of
	// the same names come next from khook.
	if c, o := r.exec(5*time.Minute, r.helmBin, "uninstall", r.release, "--namespace", ns, "--wait", "--timeout", "1m", "--kubeconfig", kubeconfig); c != 0 && !strings.Contains(o, "not found") {
		t.Logf("helm uninstall %s: exit %d\n%s", r.release, c, tail(o, 6))
	}
	// Helm waits by name for what it deleted; the clusterrole-aggregation
	// controller re-creates an aggregated ClusterRole it was updating (by
	// server-side apply, without Helm's labels), so helm uninstall of
	// kueue times out and leaves objects that block the next install of
	// the chart, by any tool (docs/real-charts.md).
	if orphans := removeOrphanClusterRoles(t, r.release); len(orphans) > 0 {
		t.Logf("helm uninstall %s left %d ClusterRoles re-created without Helm's labels: %v", r.release, len(orphans), orphans)
	}
	if r.c.adopt != "" {
		// The CRDs helm's take-ownership upgrade left carry the release's
		// ownership: khook's upgrade would adopt them. Its own run starts
		// without them, as a release khook installed meets the upgrade.
		removeClusterScoped(t, r.release, r.crdNames)
	}
	// khook's arm starts only once helm's is gone: an uninstall that timed
	// out leaves CRDs Terminating that khook's upgrade would wait on (#50).
	awaitArmGone(t, r.release, ns, r.crdNames)
	switch f := r.c.fails; {
	case f == nil && !r.helmOK:
		t.Fatalf("plain helm cannot install %s %s here; the corpus says it can:\n%s", r.c.name, r.c.version, tail(out, 20))
	case f != nil && r.helmOK:
		t.Errorf("plain helm installed %s %s; the corpus says no tool can (%s)", r.c.name, r.c.version, f.reason)
	case f != nil && !strings.Contains(out, f.reason):
		t.Errorf("plain helm failed on %s %s without naming %q:\n%s", r.c.name, r.c.version, f.reason, tail(out, 20))
	}
}

// spec writes khook's one-step spec for the chart at version.
func (r *chartRun) spec(ns, version, values string) string {
	t := r.t
	var v map[string]any
	if err := yaml.Unmarshal([]byte(values), &v); err != nil {
		t.Fatalf("the corpus values of %s: %v", r.c.name, err)
	}
	if v == nil {
		v = map[string]any{}
	}
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf(`apiVersion: khook.io/v1
kind: Khook
metadata: {name: corpus-%s}
steps:
- name: %s
  timeout: %s
  helm:
    chart: %s
    release: %s
    namespace: %s
    wait: true
    takeOwnership: %t
    values: %s
`, r.c.name, r.c.name, r.timeout, r.tgz(version), r.release, ns, r.takeOwnership, js)
	path := filepath.Join(r.home, "khook.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// khookCmd runs khook through proxy on spec; khookJSON with -o json,
// decoding stdout into v.
func (r *chartRun) khookCmd(proxy *apiproxy.Proxy, spec string, args ...string) (int, string) {
	r.t.Helper()
	return r.exec(10*time.Minute, r.khookBin, append(args, "-f", spec, "--kubeconfig", proxy.Kubeconfig)...)
}

func (r *chartRun) khookJSON(proxy *apiproxy.Proxy, spec string, v any, args ...string) int {
	r.t.Helper()
	code, stdout, stderr := r.exec3(10*time.Minute, r.khookBin, append(args, "-o", "json", "-f", spec, "--kubeconfig", proxy.Kubeconfig)...)
	if err := json.Unmarshal([]byte(stdout), v); err != nil {
		r.t.Fatalf("khook %s -o json of %s: exit %d, %v\nstdout:\n%s\nstderr:\n%s", args[0], r.c.name, code, err, tail(stdout, 20), tail(stderr, 20))
	}
	return code
}

// khook runs the chart's life with khook: plan, apply, converged apply,
// plan, the upgrade when the chart has one, destroy.
func (r *chartRun) khook() {
	t, ns := r.t, r.ns
	proxy := apiproxy.Start(t, kube.RESTConfig)
	spec := r.spec(ns, r.c.version, r.c.values)

	if r.c.required != "" {
		// Without the value the chart says it needs, the plan fails at
		// render, naming it.
		bare := r.spec(ns, r.c.version, "")
		code, out := r.khookCmd(proxy, bare, "plan", "--detailed-exitcode")
		if code != 1 || !strings.Contains(out, r.c.required) {
			t.Errorf("plan of %s without %s: exit %d, want 1 (branch gates) and the value named:\n%s", r.c.name, r.c.required, code, tail(out, 20))
		}
		spec = r.spec(ns, r.c.version, r.c.values)
	}

	plan := r.plan(proxy, spec)
	if f := r.c.fails; f != nil {
		r.khookFails(proxy, spec, ns, plan)
		return
	}
	if plan.Steps[0].Action != model.ActionInstall {
		t.Errorf("fresh plan of %s: %s (%s), want install", r.c.name, plan.Steps[0].Action, plan.Steps[0].Reason)
	}
	if code, out := r.khookCmd(proxy, spec, "apply"); code != 0 {
		t.Fatalf("khook apply of %s %s: exit %d; plain helm: %s\n%s", r.c.name, r.c.version, code, r.helmVerdict(), tail(out, 30))
	}
	proxy.Writes()
	revs := helmRevisionsIn(t, ns)

	// Converged: no write outside jobs, no new revision.
	if code, out := r.khookCmd(proxy, spec, "apply"); code != 0 {
		t.Fatalf("converged khook apply of %s: exit %d\n%s", r.c.name, code, tail(out, 30))
	}
	writes, _ := proxy.Writes()
	if other := outsideJobs(writes); len(other) != 0 {
		t.Errorf("converged apply of %s wrote outside jobs: %v", r.c.name, other)
	}
	if after := helmRevisionsIn(t, ns); fmt.Sprint(after) != fmt.Sprint(revs) {
		t.Errorf("converged apply of %s made new Helm revisions: %v -> %v", r.c.name, revs, after)
	}
	if code, out := r.khookCmd(proxy, spec, "plan", "--diff", "--detailed-exitcode"); code != 0 {
		t.Errorf("plan after the converged apply of %s: exit %d, want 0\n%s", r.c.name, code, tail(out, 40))
	}

	if r.c.upgrade != "" {
		r.upgradeTo(proxy, ns)
		spec = r.spec(ns, r.c.upgrade, r.c.values)
	}

	if code, out := r.khookCmd(proxy, spec, "destroy"); code != 0 {
		t.Errorf("khook destroy of %s: exit %d\n%s", r.c.name, code, tail(out, 30))
	}
	if left := helmRevisionsIn(t, ns); len(left) != 0 {
		t.Errorf("releases left after destroying %s: %v", r.c.name, left)
	}
	if code, out := r.khookCmd(proxy, spec, "destroy"); code != 0 {
		t.Errorf("second khook destroy of %s: exit %d\n%s", r.c.name, code, tail(out, 30))
	}
}

// plan runs plan -o json --diff and returns its one step's plan.
func (r *chartRun) plan(proxy *apiproxy.Proxy, spec string) *model.Plan {
	r.t.Helper()
	var p model.Plan
	code := r.khookJSON(proxy, spec, &p, "plan", "--diff")
	if len(p.Steps) != 1 {
		r.t.Fatalf("plan -o json of %s: exit %d, %d steps, want 1", r.c.name, code, len(p.Steps))
	}
	return &p
}

// khookFails asserts khook fails where helm failed, with the reason, and
// that its plan said so first unless the failure cannot be predicted.
func (r *chartRun) khookFails(proxy *apiproxy.Proxy, spec, ns string, plan *model.Plan) {
	t, f := r.t, r.c.fails
	step := plan.Steps[0]
	if f.predicted {
		if step.Action != model.ActionFail || !strings.Contains(step.Reason, f.reason) {
			t.Errorf("plan of %s: %s (%s), want fail naming %q: plain helm fails (%s)", r.c.name, step.Action, step.Reason, f.reason, r.helmVerdict())
		}
		if code, out := r.khookCmd(proxy, spec, "plan", "--detailed-exitcode"); code != 1 {
			t.Errorf("plan --detailed-exitcode of %s: exit %d, want 1 for a plan that says fail (branch gates)\n%s", r.c.name, code, tail(out, 20))
		}
	} else {
		t.Logf("%s: the plan cannot predict this failure (%s); it says %s", r.c.name, f.unpredictable, step.Action)
	}
	start := time.Now()
	code, out := r.khookCmd(proxy, spec, "apply")
	took := time.Since(start)
	if code == 0 {
		t.Fatalf("khook apply of %s succeeded; plain helm failed (%s)", r.c.name, r.helmVerdict())
	}
	if !strings.Contains(out, f.reason) {
		t.Errorf("khook apply of %s failed without naming %q:\n%s", r.c.name, f.reason, tail(out, 40))
	}
	if f.pending != "" {
		// The diagnosis: the Pending pod, with the scheduler's reason,
		// after khook's own timeout (shorter than helm's) ended the wait.
		if !strings.Contains(out, "Pending") || !strings.Contains(out, f.pending) {
			t.Errorf("khook apply of %s: the failure does not show the Pending pod and %q (branch harness: Pending pods' reasons in the diagnosis):\n%s", r.c.name, f.pending, tail(out, 60))
		}
		limit, _ := time.ParseDuration(r.helmTimeout)
		if took >= limit {
			t.Errorf("khook apply of %s took %s, not ended by its step timeout %s (helm's is %s)", r.c.name, took.Round(time.Second), r.timeout, r.helmTimeout)
		}
	}
	if code, out := r.khookCmd(proxy, spec, "destroy"); code != 0 {
		t.Errorf("khook destroy of the failed %s: exit %d\n%s", r.c.name, code, tail(out, 30))
	}
}

func (r *chartRun) helmVerdict() string {
	if r.helmOK {
		return "installed"
	}
	return "failed: " + lastLine(r.helmError)
}

// upgradeTo plans the chart's upgrade, applies it and checks the plan told
// the truth: the objects it named are the ones the upgrade changed, the
// crds/ CRDs carry the new version, and the next plan is clean.
func (r *chartRun) upgradeTo(proxy *apiproxy.Proxy, ns string) {
	t := r.t
	spec := r.spec(ns, r.c.upgrade, r.c.values)
	plan := r.plan(proxy, spec)
	step := plan.Steps[0]
	if r.c.adopt != "" {
		// Both tools refuse; the plan says so before anything is written.
		if step.Action != model.ActionFail || !strings.Contains(step.Reason, r.c.adopt) {
			t.Errorf("plan of %s %s -> %s: %s (%s), want fail naming %q (plain helm: %s)", r.c.name, r.c.version, r.c.upgrade, step.Action, step.Reason, r.c.adopt, r.helmUpgrade)
		}
		r.takeOwnership = true
		spec = r.spec(ns, r.c.upgrade, r.c.values)
		plan = r.plan(proxy, spec)
		step = plan.Steps[0]
	}
	if step.Action != model.ActionUpgrade {
		t.Fatalf("plan of %s %s -> %s: %s (%s), want upgrade", r.c.name, r.c.version, r.c.upgrade, step.Action, step.Reason)
	}
	if step.Diff == "" {
		t.Errorf("plan --diff of the %s upgrade shows no diff (%s)", r.c.name, step.DiffNote)
	}
	planned := map[string]string{}
	for _, o := range step.Objects {
		switch o.Action {
		case model.ActionCreate, model.ActionConfigure, model.ActionDelete:
			planned[objectKey(o.Kind, o.Namespace, o.Name)] = string(o.Action)
			// The diff shows each object the plan names.
			if !strings.Contains(step.Diff, o.Name) {
				t.Errorf("the plan of the %s upgrade names %s %s %s and its diff does not show it", r.c.name, o.Action, o.Kind, o.Name)
			}
		}
	}
	// What the upgrade did, object by object: every object the plan's
	// server dry runs named or the apply wrote, read before and after.
	_, dryRuns := proxy.Writes()
	before := liveStates(t, dryRuns)
	var res model.Results
	if code := r.khookJSON(proxy, spec, &res, "apply"); code != 0 || len(res.Steps) != 1 {
		why := res.Error
		if len(res.Steps) == 1 {
			why = res.Steps[0].Error
		}
		t.Fatalf("khook apply of the %s upgrade: exit %d: %s", r.c.name, code, why)
	}
	writes, _ := proxy.Writes()
	after := liveStates(t, append(dryRuns, writes...))
	// An object the upgrade deletes has no dry run to read it by before;
	// its DELETE is the record (a hook the upgrade ran and deleted was read
	// absent before, and is not counted).
	var deletes []string
	for _, w := range writes {
		if strings.HasPrefix(w, "DELETE ") {
			deletes = append(deletes, w)
		}
	}
	deleted := map[string]bool{}
	for key := range liveStates(t, deletes) {
		deleted[key] = true
	}
	done := map[string]string{}
	for key, a := range after {
		b, had := before[key]
		if a.hook || b.hook {
			continue
		}
		switch {
		case (!had || !b.exists) && a.exists:
			done[key] = string(model.ActionCreate)
		case (had && b.exists || !had && deleted[key]) && !a.exists:
			done[key] = string(model.ActionDelete)
		case had && b.exists && a.exists && b.version != a.version:
			done[key] = string(model.ActionConfigure)
		}
	}
	t.Logf("upgrade %s %s -> %s: planned %d object changes, did %d", r.c.name, r.c.version, r.c.upgrade, len(planned), len(done))
	if fmt.Sprint(planned) != fmt.Sprint(done) {
		var states []string
		for _, k := range append(diffKeys(planned, done), diffKeys(done, planned)...) {
			_, key, _ := strings.Cut(k, " ")
			b, had := before[key]
			states = append(states, fmt.Sprintf("%s: before %t (read %t), after %t", key, b.exists, had, after[key].exists))
		}
		t.Errorf("the %s upgrade did not do what its plan said:\nplanned, not done: %v\ndone, not planned: %v\nlive: %v", r.c.name, diffKeys(planned, done), diffKeys(done, planned), states)
	}
	for _, name := range r.c.crds {
		r.crdFromChart(name, r.c.upgrade)
	}
	if code, out := r.khookCmd(proxy, spec, "plan", "--diff", "--detailed-exitcode"); code != 0 {
		t.Errorf("plan after the %s upgrade: exit %d, want 0\n%s", r.c.name, code, tail(out, 40))
	}
}

// crdFromChart checks the live CRD name is the one in version's crds/
// (Helm never upgrades those; khook does, branch crds).
func (r *chartRun) crdFromChart(name, version string) {
	t := r.t
	want := chartsrc.CRDFromChart(t, r.tgz(version), name)
	live, err := dyn(t).Resource(crds).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Errorf("CRD %s after the %s upgrade: %v", name, r.c.name, err)
		return
	}
	got, _ := json.Marshal(live.Object["spec"])
	exp, _ := json.Marshal(want["spec"])
	// The server defaults fields the file leaves out; compare what the
	// file says, version by version.
	if !containsJSON(got, exp) {
		t.Errorf("CRD %s after the %s upgrade to %s is not the chart's crds/ copy (branch crds: khook upgrades crds/ CRDs)", name, r.c.name, version)
	}
}

// liveState is an object as the upgrade check reads it: whether it exists
// and a digest of what a write changes (everything but its status and the
// server's bookkeeping, which controllers move on their own).
type liveState struct {
	exists  bool
	version string
	// hook: a Helm hook, which runs beside the release and is not planned.
	hook bool
}

func digestOf(u *unstructured.Unstructured) string {
	obj := u.DeepCopy().Object
	delete(obj, "status")
	for _, f := range []string{"managedFields", "resourceVersion", "generation"} {
		unstructured.RemoveNestedField(obj, "metadata", f)
	}
	b, _ := json.Marshal(obj)
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

// liveStates reads the objects named by request lines ("PATCH
// /apis/apps/v1/namespaces/x/deployments/y"), keyed as plans name them
// ("Deployment x/y"). Helm's release records and hook objects are not the
// chart's objects.
func liveStates(t *testing.T, requests []string) map[string]liveState {
	t.Helper()
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(kube.Client.Discovery()))
	out := map[string]liveState{}
	for _, req := range requests {
		_, path, _ := strings.Cut(req, " ")
		gvr, ns, name, ok := parseObjectPath(path)
		if !ok || (gvr.Resource == "secrets" && strings.HasPrefix(name, "sh.helm.release.")) {
			continue
		}
		kind, err := mapper.KindFor(gvr)
		if err != nil {
			continue
		}
		key := objectKey(kind.Kind, ns, name)
		if _, seen := out[key]; seen {
			continue
		}
		var st liveState
		var u *unstructured.Unstructured
		if ns == "" {
			u, err = dyn(t).Resource(gvr).Get(t.Context(), name, metav1.GetOptions{})
		} else {
			u, err = dyn(t).Resource(gvr).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
		}
		if err == nil {
			if _, hook := u.GetAnnotations()["helm.sh/hook"]; hook {
				out[key] = liveState{hook: true}
				continue
			}
			st = liveState{exists: true, version: digestOf(u)}
		}
		out[key] = st
	}
	return out
}

// parseObjectPath splits an API path naming one object.
func parseObjectPath(path string) (gvr schema.GroupVersionResource, ns, name string, ok bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) > 0 && parts[0] == "api":
		gvr.Version, parts = parts[1], parts[2:]
	case len(parts) > 2 && parts[0] == "apis":
		gvr.Group, gvr.Version, parts = parts[1], parts[2], parts[3:]
	default:
		return gvr, "", "", false
	}
	if len(parts) == 4 && parts[0] == "namespaces" {
		ns, parts = parts[1], parts[2:]
	}
	if len(parts) != 2 {
		return gvr, "", "", false
	}
	gvr.Resource, name = parts[0], parts[1]
	return gvr, ns, name, true
}

func objectKey(kind, ns, name string) string {
	if ns == "" {
		return kind + " " + name
	}
	return kind + " " + ns + "/" + name
}

// diffKeys lists the entries of a that b does not have the same.
func diffKeys(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if b[k] != v {
			out = append(out, v+" "+k)
		}
	}
	slices.Sort(out)
	return out
}

// containsJSON reports whether every field of want is in got with the same
// value (got may have more: server defaults).
func containsJSON(got, want []byte) bool {
	var g, w any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil {
		return false
	}
	return contains(g, w)
}

func contains(got, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			if !contains(g[k], v) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !contains(g[i], w[i]) {
				return false
			}
		}
		return true
	default:
		return fmt.Sprint(got) == fmt.Sprint(want)
	}
}

// outsideJobs drops the writes a job step makes on every run.
func outsideJobs(writes []string) []string {
	var other []string
	for _, w := range writes {
		if !strings.Contains(w, "/jobs") && !strings.Contains(w, "/pods") {
			other = append(other, w)
		}
	}
	return other
}

// helmRevisionsIn maps each release in ns to its newest revision.
func helmRevisionsIn(t *testing.T, ns string) map[string]int {
	t.Helper()
	secrets, err := kube.Client.CoreV1().Secrets(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "owner=helm"})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	revs := map[string]int{}
	for _, s := range secrets.Items {
		var v int
		fmt.Sscan(s.Labels["version"], &v)
		revs[s.Labels["name"]] = max(revs[s.Labels["name"]], v)
	}
	return revs
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func lastLine(s string) string { return tail(s, 1) }
