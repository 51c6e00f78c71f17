package steps

import (
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/test/cluster"
)

// testCluster is the package's one control plane (test/cluster).
var testCluster *cluster.Cluster

func TestMain(m *testing.M) { os.Exit(cluster.Main(m, &testCluster)) }

// writeCounter counts the write requests (POST, PUT, PATCH, DELETE) sent
// through a rest.Config, so tests can check what an executor claims in
// Outcome.Writes.
type writeCounter struct{ n atomic.Int64 }

func (w *writeCounter) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			switch req.Method {
			case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
				// A dry run persists nothing: it is a read.
				if !strings.Contains(req.URL.RawQuery, "dryRun=All") {
					w.n.Add(1)
				}
			}
			return rt.RoundTrip(req)
		})
	})
	return cfg
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// newTestEnv returns an Env on the test cluster whose writes are counted.
func newTestEnv(t *testing.T) (Env, *writeCounter) {
	t.Helper()
	var w writeCounter
	c, err := kube.NewClientsForConfig(w.wrap(testCluster.RESTConfig))
	if err != nil {
		t.Fatal(err)
	}
	return NewEnv(c, t.TempDir(), redact.New()), &w
}
