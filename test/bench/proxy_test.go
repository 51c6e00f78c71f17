package bench

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/khook/khook/runner/helmstep"
)

// countingProxy stands in front of the API server on loopback and records
// every request that changes cluster state (helmstep.IsWrite: any verb but
// GET/HEAD/OPTIONS, dry runs excluded). Both tools under comparison get a
// kubeconfig pointing at it, so their writes are counted the same way.
type countingProxy struct {
	URL string

	mu     sync.Mutex
	writes []string // "PATCH /api/v1/namespaces/x/configmaps/y"
}

func newCountingProxy(tb testing.TB, upstream *rest.Config) *countingProxy {
	tb.Helper()
	target, err := url.Parse(upstream.Host)
	if err != nil {
		tb.Fatal(err)
	}
	transport, err := rest.TransportFor(upstream) // TLS and the admin token
	if err != nil {
		tb.Fatal(err)
	}
	p := &countingProxy{}
	rp := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target); r.Out.Host = target.Host },
		Transport:     transport,
		FlushInterval: -1, // watches stream
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if helmstep.IsWrite(r) {
			p.mu.Lock()
			p.writes = append(p.writes, r.Method+" "+r.URL.Path)
			p.mu.Unlock()
		}
		rp.ServeHTTP(w, r)
	}))
	tb.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// take returns the writes recorded since the last take and forgets them.
func (p *countingProxy) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.writes
	p.writes = nil
	return w
}

// kubeconfig writes a credential-less kubeconfig for the proxy.
func (p *countingProxy) kubeconfig(tb testing.TB, dir string) string {
	tb.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["bench"] = &clientcmdapi.Cluster{Server: p.URL}
	cfg.AuthInfos["bench"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["bench"] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: "bench", Namespace: "default"}
	cfg.CurrentContext = "bench"
	path := filepath.Join(dir, "proxy.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		tb.Fatal(err)
	}
	return path
}

// summarize groups writes: "2 × DELETE /apis/batch/v1/namespaces/ns/jobs/bootstrap".
func summarize(writes []string) string {
	counts := map[string]int{}
	for _, w := range writes {
		counts[w]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "    %d × %s\n", counts[k], k)
	}
	return b.String()
}

// The proxy counts writes only, and dry runs are not writes.
func TestCountingProxyCountsWritesOnly(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "{}")
	}))
	defer upstream.Close()
	p := newCountingProxy(t, &rest.Config{Host: upstream.URL})
	for _, req := range []struct{ method, path string }{
		{"GET", "/api/v1/pods"},
		{"POST", "/api/v1/namespaces/a/configmaps"},
		{"PATCH", "/api/v1/namespaces/a/configmaps/x?dryRun=All"},
		{"PATCH", "/api/v1/namespaces/a/configmaps/x?fieldManager=helm"},
		{"DELETE", "/apis/batch/v1/namespaces/a/jobs/j"},
	} {
		r, err := http.NewRequest(req.method, p.URL+req.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	got := p.take()
	want := []string{"POST /api/v1/namespaces/a/configmaps", "PATCH /api/v1/namespaces/a/configmaps/x", "DELETE /apis/batch/v1/namespaces/a/jobs/j"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("writes = %q, want %q", got, want)
	}
	if len(p.take()) != 0 {
		t.Error("take did not forget")
	}
	if _, err := os.Stat(p.kubeconfig(t, t.TempDir())); err != nil {
		t.Error(err)
	}
}
