package e2e

import (
	"io"
	"log"
	"net"
	"net/http"
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

// countingProxy sits between khook and the API server on a loopback port
// and records every request that would change the cluster.
type countingProxy struct {
	mu      sync.Mutex
	writes  []string // "POST /apis/batch/v1/namespaces/demo/jobs"
	dryRuns []string // writes sent with dryRun=All: they persist nothing
	// Kubeconfig points at the proxy with the cluster's credentials.
	Kubeconfig string
}

// startProxy starts a proxy in front of the cluster for the test's lifetime.
func startProxy(t *testing.T) *countingProxy {
	t.Helper()
	target, err := url.Parse(kc.RESTConfig.Host)
	must(t, err)
	transport, err := rest.TransportFor(kc.RESTConfig)
	must(t, err)
	p := &countingProxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = transport
	rp.FlushInterval = -1                    // watches stream
	rp.ErrorLog = log.New(io.Discard, "", 0) // a watch khook ends is "context canceled"
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.record(r)
		rp.ServeHTTP(w, r)
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })

	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["proxy"] = &clientcmdapi.Cluster{Server: "http://" + l.Addr().String()}
	cfg.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{Token: kc.RESTConfig.BearerToken}
	cfg.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy"}
	cfg.CurrentContext = "proxy"
	p.Kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	must(t, clientcmd.WriteToFile(*cfg, p.Kubeconfig))
	must(t, os.Chmod(p.Kubeconfig, 0o600))
	return p
}

func (p *countingProxy) record(r *http.Request) {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
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

// Writes returns the recorded writes, sorted, and forgets them.
func (p *countingProxy) Writes() (writes, dryRuns []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	writes, dryRuns = p.writes, p.dryRuns
	p.writes, p.dryRuns = nil, nil
	sort.Strings(writes)
	sort.Strings(dryRuns)
	return writes, dryRuns
}
