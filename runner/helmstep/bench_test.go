package helmstep

import (
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/spec"
)

// BenchmarkConvergedRerun is one helm step on a release that has converged:
// history read, chart fetched from an HTTP repository, values merged, Drift
// over the release's objects (read by collection; a dry run only for what
// may differ); no write. It reports the API requests of one re-run by verb.
func BenchmarkConvergedRerun(b *testing.B) {
	f := newFixture(b)
	var verbs verbCounter
	cfg := rest.CopyConfig(testCluster.RESTConfig)
	cfg.Wrap(verbs.wrap)
	clients, err := kube.NewClientsForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	f.clients, f.exec = clients, New(clients, f.baseDir, f.redactor)
	b.Cleanup(func() { _ = f.exec.Close() })
	repo := serveChartRepo(b, "u", "p", demoChart(b, "0.1.0"))
	st := f.step("bench", spec.Helm{Chart: "demo", Repo: repo.URL, Version: "0.1.0", Auth: &spec.Auth{Username: "u", Password: "p"}})
	if _, err := f.try(st, time.Minute); err != nil {
		b.Fatal(err)
	}
	verbs.reset()
	b.ResetTimer()
	for b.Loop() {
		out, err := f.try(st, time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		if out.Writes != 0 {
			b.Fatalf("converged re-run sent %d writes: %s", out.Writes, out.Detail)
		}
	}
	b.StopTimer()
	counts := verbs.snapshot()
	var keys []string
	for k, n := range counts {
		b.ReportMetric(float64(n)/float64(b.N), k+"/op")
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b.Logf("requests per re-run by verb: %v", keys)
}

// verbCounter counts requests by verb as the audit log names them: LIST
// for a GET of a collection, DRYRUN for a write with dryRun=All.
type verbCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (v *verbCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTrip(func(r *http.Request) (*http.Response, error) {
		verb := r.Method
		switch {
		case r.URL.Query().Get("dryRun") != "":
			verb = "DRYRUN"
		case verb == http.MethodGet && r.URL.Query().Get("watch") == "true":
			verb = "WATCH"
		case verb == http.MethodGet && isCollection(r.URL.Path):
			verb = "LIST"
		}
		v.mu.Lock()
		if v.n == nil {
			v.n = map[string]int{}
		}
		v.n[verb]++
		v.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

// isCollection: /api/v1/namespaces/x/configmaps, /apis/g/v/things (an
// even number of segments after the group version, namespaces counted).
func isCollection(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) > 2 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return false
	}
	return len(parts)%2 == 1
}

func (v *verbCounter) reset() {
	v.mu.Lock()
	v.n = nil
	v.mu.Unlock()
}

func (v *verbCounter) snapshot() map[string]int {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := map[string]int{}
	for k, n := range v.n {
		out[k] = n
	}
	return out
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
