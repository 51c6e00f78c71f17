// Package apiproxy is a write-counting reverse proxy for tests: it stands in
// front of a test cluster's API server on a loopback port and records every
// request that would change the cluster, so a test can assert that a
// converged re-run sends none (or exactly the ones it expects).
package apiproxy

import (
	"io"
	"log"
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
)

// Proxy forwards to the API server and counts writes.
type Proxy struct {
	// URL is the proxy's plain-HTTP loopback address.
	URL string
	// Kubeconfig is a kubeconfig file for URL with the upstream's token.
	Kubeconfig string

	mu      sync.Mutex
	writes  []string // "POST /apis/batch/v1/namespaces/demo/jobs"
	dryRuns []string // writes sent with dryRun=All: they persist nothing
	holds   []*holdRule
	held    []string // requests held until their client gave up (see Hold)
	counts  Counts   // every request forwarded, by verb (see Requests)
}

// Start runs a proxy in front of upstream (a bearer-token config, as the
// test cluster's) until the test ends.
func Start(tb testing.TB, upstream *rest.Config) *Proxy {
	tb.Helper()
	target, err := url.Parse(upstream.Host)
	if err != nil {
		tb.Fatal(err)
	}
	transport, err := rest.TransportFor(upstream) // TLS and the token
	if err != nil {
		tb.Fatal(err)
	}
	p := &Proxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = transport
	rp.FlushInterval = -1                    // watches stream
	rp.ErrorLog = log.New(io.Discard, "", 0) // a watch the client ends is "context canceled"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.hold(r) {
			return // never forwarded: not a write the cluster saw
		}
		p.record(r)
		p.count(r)
		rp.ServeHTTP(w, r)
	}))
	tb.Cleanup(srv.Close)
	p.URL = srv.URL

	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["proxy"] = &clientcmdapi.Cluster{Server: srv.URL}
	cfg.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{Token: upstream.BearerToken}
	cfg.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy"}
	cfg.CurrentContext = "proxy"
	p.Kubeconfig = filepath.Join(tb.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, p.Kubeconfig); err != nil {
		tb.Fatal(err)
	}
	if err := os.Chmod(p.Kubeconfig, 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}

// IsWrite reports whether a request can change the cluster.
func IsWrite(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

func (p *Proxy) record(r *http.Request) {
	if !IsWrite(r) {
		return
	}
	line := r.Method + " " + r.URL.Path
	p.mu.Lock()
	defer p.mu.Unlock()
	if strings.Contains(r.URL.RawQuery, "dryRun=All") {
		p.dryRuns = append(p.dryRuns, line)
		return
	}
	p.writes = append(p.writes, line)
}

// Writes returns the writes recorded so far, sorted, and the dry runs
// separately, and forgets them.
func (p *Proxy) Writes() (writes, dryRuns []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	writes, dryRuns = p.writes, p.dryRuns
	p.writes, p.dryRuns = nil, nil
	sort.Strings(writes)
	sort.Strings(dryRuns)
	return writes, dryRuns
}
