package faults

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/khook/khook/model"
)

// countingProxy forwards to the API server with the client's own
// credentials and counts requests, and the 401s among them.
type countingProxy struct {
	requests, unauthorized atomic.Int64
	url                    string
	ca                     []byte
}

func newCountingProxy(t *testing.T) *countingProxy {
	t.Helper()
	target, err := url.Parse(kc.RESTConfig.Host)
	if err != nil {
		t.Fatal(err)
	}
	tlsOnly := &rest.Config{Host: kc.RESTConfig.Host, TLSClientConfig: rest.TLSClientConfig{CAData: kc.RESTConfig.CAData, CAFile: kc.RESTConfig.CAFile}}
	transport, err := rest.TransportFor(tlsOnly) // the CA, not the admin token
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = transport
	rp.FlushInterval = -1
	rp.ModifyResponse = func(r *http.Response) error {
		if r.StatusCode == http.StatusUnauthorized {
			p.unauthorized.Add(1)
		}
		return nil
	}
	// TLS: client-go sends a kubeconfig's token only over HTTPS.
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.requests.Add(1)
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	p.ca = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return p
}

// kubeconfig writes a kubeconfig for the proxy with token.
func (p *countingProxy) kubeconfig(t *testing.T, token string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["proxy"] = &clientcmdapi.Cluster{Server: p.url, CertificateAuthorityData: p.ca}
	cfg.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy", Namespace: "default"}
	cfg.CurrentContext = "proxy"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// noStack fails when khook printed a Go stack or panic.
func noStack(t *testing.T, out result) {
	t.Helper()
	for _, s := range []string{"goroutine ", "panic:", ".go:"} {
		if strings.Contains(out.Stdout+out.Stderr, s) {
			t.Errorf("khook printed %q (a stack?)\n%s", s, out.dump())
		}
	}
}

// An expired or revoked token before the run: khook stops at its first
// request with cluster-unreachable and the 401 sentence, exit 1, and sends
// no more requests than that check.
func TestRejectedCredentials(t *testing.T) {
	t.Parallel()
	spec, ns := outageSpec(t)
	p := newCountingProxy(t)
	out := start(t, spec, p.kubeconfig(t, "expired-or-revoked-token"), []string{"NS=" + ns, "RELEASE=false"}).wait(t)
	t.Logf("limit: exit %d after %s, %d requests (%d answered 401); reason %s; error: %s",
		out.Code, out.Took.Round(time.Millisecond), p.requests.Load(), p.unauthorized.Load(), out.Results.FailureReason, out.Results.Error)
	if out.Code != 1 || out.Results.FailureReason != model.ReasonClusterUnreachable {
		t.Errorf("exit %d reason %q; want 1 %q\n%s", out.Code, out.Results.FailureReason, model.ReasonClusterUnreachable, out.dump())
	}
	if !strings.Contains(out.Results.Error, "rejected the credentials (401 Unauthorized)") {
		t.Errorf("error lacks the 401 sentence: %q", out.Results.Error)
	}
	if n := p.requests.Load(); n > 2 {
		t.Errorf("%d requests with rejected credentials; want at most 2 (no retries)", n)
	}
	noStack(t, out)
}

// A token revoked while Helm waits for the release's pods (its
// ServiceAccount deleted): Helm's waiter retries the 401 quietly, so the
// step fails at its timeout (the limit: detection takes the step timeout),
// then with the 401 sentence, exit 1, and the requests after the revocation
// stay few (no retry storm).
func TestCredentialsRevokedMidRun(t *testing.T) {
	t.Parallel()
	spec, ns := outageSpec(t)
	ctx := context.Background()
	sa, err := kc.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ci"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "faults-" + ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa.Name, Namespace: ns}},
	}
	if _, err := kc.Client.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kc.Client.RbacV1().ClusterRoleBindings().Delete(context.Background(), crb.Name, metav1.DeleteOptions{})
	})
	tok, err := kc.Client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := newCountingProxy(t)
	r := start(t, spec, p.kubeconfig(t, tok.Status.Token), []string{"NS=" + ns, "READY_AFTER=15s", "TIMEOUT=30s"})
	awaitWaiting(t, r, "release", 2*time.Minute, "Deployment "+ns+"/", ": pod ")
	if err := kc.Client.CoreV1().ServiceAccounts(ns).Delete(ctx, sa.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	before := p.requests.Load()
	out := r.wait(t)
	after := p.requests.Load() - before
	st := out.step(t, "release")
	t.Logf("limit: exit %d %s after the revocation; %d requests after it (%d answered 401); step release %s: %s; run error: %s; release %v",
		out.Code, time.Since(revoked).Round(time.Millisecond), after, p.unauthorized.Load(), st.Status, st.Error, out.Results.Error, releaseStatuses(t, ns, "app"))
	if out.Code != 1 || st.Status != model.StatusFailed {
		t.Fatalf("exit %d, step %s; want 1, failed\n%s", out.Code, st.Status, out.dump())
	}
	if !strings.Contains(st.Error, "rejected the credentials (401 Unauthorized)") {
		t.Errorf("step error lacks the 401: %s", st.Error)
	}
	if after > 50 {
		t.Errorf("%d requests after the revocation; want a handful, not a retry storm", after)
	}
	noStack(t, out)
}
