package steps

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner/kube"
)

// requestLog records every request sent through a rest.Config: verb,
// path, start time and status.
type requestLog struct {
	mu   sync.Mutex
	reqs []loggedRequest
}

type loggedRequest struct {
	verb, path string
	start, end time.Time
	status     int
}

func (l *requestLog) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			start := time.Now()
			resp, err := rt.RoundTrip(req)
			r := loggedRequest{verb: req.Method, path: req.URL.Path, start: start, end: time.Now()}
			if resp != nil {
				r.status = resp.StatusCode
			}
			l.mu.Lock()
			l.reqs = append(l.reqs, r)
			l.mu.Unlock()
			return resp, err
		})
	})
	return cfg
}

func (l *requestLog) reset() {
	l.mu.Lock()
	l.reqs = nil
	l.mu.Unlock()
}

func (l *requestLog) all() []loggedRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]loggedRequest(nil), l.reqs...)
}

// discoveryPath matches discovery requests: /api, /apis, /api/v1 and
// /apis/<group>/<version> (no resource after them).
var discoveryPath = regexp.MustCompile(`^/(api|apis)(/v1|/[^/]+/[^/]+)?/?$`)

func (l *requestLog) discovery() []string {
	var out []string
	for _, r := range l.all() {
		if discoveryPath.MatchString(r.path) {
			out = append(out, r.verb+" "+r.path)
		}
	}
	return out
}

func newLoggedEnv(t testing.TB) (Env, *requestLog) {
	t.Helper()
	var l requestLog
	c, err := kube.NewClientsForConfig(l.wrap(testCluster.RESTConfig))
	if err != nil {
		t.Fatal(err)
	}
	return NewEnv(c, t.TempDir(), redact.New()), &l
}

func deleteCRD(t testing.TB, group string) {
	t.Cleanup(func() {
		_ = testCluster.Client.Discovery().RESTClient().Delete().
			AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets." + group).Do(context.Background()).Error()
	})
}

// A custom resource step right after its CRD's step maps the kind from the
// CRD apply saw: no discovery request at all, and it is written.
func TestApplyCRThenCRNoDiscovery(t *testing.T) {
	t.Parallel()
	ns := testCluster.Namespace(t)
	env, log := newLoggedEnv(t)
	x := NewApplyExecutor(env)
	g := groupFor(ns)
	deleteCRD(t, g)
	run(t, x, applyStep(ns, crd(g)))
	log.reset()
	if out := run(t, x, applyStep(ns, widget(g, "w1", "s"))); out.Detail != "created 1 object" {
		t.Errorf("CR step: %q", out.Detail)
	}
	if d := log.discovery(); len(d) != 0 {
		t.Errorf("the CR step sent %d discovery requests, want none: %v", len(d), d)
	}
	// The short name and plural map from the CRD too.
	for _, typ := range []string{"wdg", "widgets." + g, "Widget"} {
		m, err := env.Clients.MappingForType(context.Background(), typ)
		if err != nil || m.Resource.Group != g || m.Resource.Resource != "widgets" || m.Resource.Version != "v1" {
			t.Errorf("MappingForType(%q) = %v, %v", typ, m, err)
		}
	}
	if d := log.discovery(); len(d) != 0 {
		t.Errorf("mapping the CRD's names sent discovery requests: %v", d)
	}
}

// An APIService without a backend (metrics-server under kwok) makes
// discovery of its group fail; applies of other kinds, and mapping a CRD's
// kind through discovery, still work.
func TestApplyWithUnavailableAPIService(t *testing.T) {
	ns := testCluster.Namespace(t)
	ctx := deadline(t, time.Minute)
	apisvc := schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	name := "v1beta1.unavailable.khook.test"
	svc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"group": "unavailable.khook.test", "version": "v1beta1",
			"service":              map[string]any{"namespace": ns, "name": "no-backend", "port": int64(443)},
			"groupPriorityMinimum": int64(100), "versionPriority": int64(100),
			"insecureSkipTLSVerify": true,
		},
	}}
	dyn := dynamic.NewForConfigOrDie(testCluster.RESTConfig)
	if _, err := dyn.Resource(apisvc).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dyn.Resource(apisvc).Delete(context.Background(), name, metav1.DeleteOptions{}) })

	// A CRD created behind khook's back: its kind maps through discovery.
	g := groupFor(ns)
	deleteCRD(t, g)
	setup, _ := newTestEnv(t)
	run(t, NewApplyExecutor(setup), applyStep(ns, crd(g)))

	env, _ := newTestEnv(t) // fresh clients: discovery runs with the APIService present
	x := NewApplyExecutor(env)
	if out := run(t, x, applyStep(ns, configMap("c", "v"), deployment("d", 1, nil))); out.Detail != "created 2 objects" {
		t.Errorf("built-in kinds: %q", out.Detail)
	}
	if out := run(t, x, applyStep(ns, widget(g, "w", "s"))); out.Detail != "created 1 object" {
		t.Errorf("CR through discovery: %q", out.Detail)
	}
}

// BenchmarkCRDToFirstCRWrite measures, per fresh CRD, the time from the
// CRD's Established condition (seen by the benchmark's own watch) to the
// start of the custom resource's successful create, for a CRD step
// followed by a CR step. It reports the median over b.N runs:
//
//	go test ./runner/steps -run '^$' -bench CRDToFirstCRWrite -benchtime 20x
func BenchmarkCRDToFirstCRWrite(b *testing.B) {
	ns := testCluster.Namespace(b)
	var lat, total, answer []time.Duration
	i := 0
	for b.Loop() {
		i++
		env, log := newLoggedEnv(b)
		x := NewApplyExecutor(env)
		g := fmt.Sprintf("b%d.%s", i, groupFor(ns))
		deleteCRD(b, g)
		established := watchEstablished(b, "widgets."+g)
		t0 := time.Now()
		if _, err := x.Execute(deadline(b, time.Minute), applyStep(ns, crd(g))); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := x.Execute(deadline(b, time.Minute), applyStep(ns, widget(g, "w", "s"))); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		at := <-established
		if i == 1 {
			b.Logf("crd step %s, cr step %s, established seen %s after start", t1.Sub(t0), t2.Sub(t1), at.Sub(t0))
			for _, r := range log.all() {
				b.Logf("  %s +%s %s %s %d", r.start.Sub(t0), r.end.Sub(r.start), r.verb, r.path, r.status)
			}
		}
		var crdAt time.Time
		for _, r := range log.all() {
			if r.verb == http.MethodPost && strings.HasSuffix(r.path, "/customresourcedefinitions") && crdAt.IsZero() {
				crdAt = r.start
			}
			if r.verb == http.MethodPost && r.status == http.StatusCreated && strings.HasSuffix(r.path, "/widgets") {
				lat = append(lat, r.start.Sub(at))
				total = append(total, r.start.Sub(crdAt))
				answer = append(answer, r.end.Sub(r.start))
			}
		}
	}
	if len(lat) > 0 {
		b.ReportMetric(float64(median(lat).Microseconds())/1000, "ms-median")
		b.ReportMetric(float64(median(total).Microseconds())/1000, "ms-crd-create-to-cr-median")
		b.ReportMetric(float64(median(answer).Microseconds())/1000, "ms-cr-create-answered-median")
		b.Logf("runs %d; Established -> CR write (ms): %s", len(lat), fmtDurations(lat))
		b.Logf("the API server answered the first CR create after (ms): %s", fmtDurations(answer))
	}
}

// watchEstablished starts a watch on the named CRD before it exists and
// delivers the moment it is first seen Established.
func watchEstablished(b *testing.B, name string) <-chan time.Time {
	dyn := dynamic.NewForConfigOrDie(testCluster.RESTConfig)
	w, err := dyn.Resource(kube.CRDMapping.Resource).Watch(context.Background(), metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		b.Fatal(err)
	}
	out := make(chan time.Time, 1)
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			if u, ok := ev.Object.(*unstructured.Unstructured); ok && ev.Type != watch.Deleted && established(u) {
				out <- time.Now()
				return
			}
		}
	}()
	return out
}

func established(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}
