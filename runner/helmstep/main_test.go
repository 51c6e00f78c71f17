package helmstep

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/test/cluster"
)

var testCluster *cluster.Cluster

func TestMain(m *testing.M) { os.Exit(cluster.Main(m, &testCluster)) }

// fixture is one test's executor, namespace and redactor.
type fixture struct {
	t        testing.TB
	ns       string
	clients  *kube.Clients
	redactor *redact.Redactor
	exec     *Executor
	baseDir  string
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	clients, err := kube.NewClientsForConfig(testCluster.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	base, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	r := redact.New()
	e := New(clients, base, r)
	t.Cleanup(func() { _ = e.Close() })
	return &fixture{t: t, ns: testCluster.Namespace(t), clients: clients, redactor: r, exec: e, baseDir: base}
}

// step is a helm: step in the fixture's namespace.
func (f *fixture) step(name string, h spec.Helm) *spec.Step {
	if h.Namespace == "" {
		h.Namespace = f.ns
	}
	return &spec.Step{Name: name, Helm: &h}
}

// run executes a step with a deadline and fails the test on error.
func (f *fixture) run(st *spec.Step, timeout time.Duration) runner.Outcome {
	f.t.Helper()
	out, err := f.try(st, timeout)
	if err != nil {
		f.t.Fatalf("step %s: %v", st.Name, err)
	}
	return out
}

func (f *fixture) try(st *spec.Step, timeout time.Duration) (runner.Outcome, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return f.exec.Execute(kube.WithLiveCache(ctx), st) // each try is one run
}

// revisions returns the release's revisions as Helm stored them.
func (f *fixture) revisions(release string) int {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := testCluster.Client.CoreV1().Secrets(f.ns).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm,name=" + release})
	if err != nil {
		f.t.Fatal(err)
	}
	return len(list.Items)
}

func (f *fixture) configMap(name string) map[string]string {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cm, err := testCluster.Client.CoreV1().ConfigMaps(f.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatalf("ConfigMap %s/%s: %v", f.ns, name, err)
	}
	return cm.Data
}

// demoChart loads testdata/charts/demo, optionally as another version.
func demoChart(t testing.TB, version string) *chartv2.Chart {
	t.Helper()
	ch, err := loader.Load(filepath.Join("testdata", "charts", "demo"))
	if err != nil {
		t.Fatal(err)
	}
	if version != "" {
		ch.Metadata.Version = version
	}
	return ch
}

// packageChart writes name-version.tgz into dir and returns its path.
func packageChart(t testing.TB, ch *chartv2.Chart, dir string) string {
	t.Helper()
	p, err := chartutil.Save(ch, dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustContain(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s = %q, want it to contain %q", what, got, w)
		}
	}
}

func mustNotContain(t *testing.T, what, got string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(got, s) {
			t.Errorf("%s leaks %q: %s", what, s, got)
		}
	}
}
