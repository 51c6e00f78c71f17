package kube

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

func TestExplainUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	c, err := NewClientsForConfig(&rest.Config{Host: "https://admin:pw@" + addr})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Ping(context.Background())
	want := "cannot reach the API server at https://***@" + addr + ": connection refused; check --kubeconfig/--context"
	if err == nil || err.Error() != want || !IsUnreachable(err) {
		t.Errorf("got %v (unreachable %v), want %q", err, IsUnreachable(err), want)
	}
}

func TestExplainUnauthorized(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`)
	}))
	defer srv.Close()
	c, err := NewClientsForConfig(&rest.Config{Host: srv.URL, BearerToken: "expired"})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Ping(context.Background())
	if err == nil || !strings.Contains(err.Error(), "rejected the credentials (401 Unauthorized): the token may have expired") || !IsUnreachable(err) {
		t.Errorf("got %v", err)
	}
}

func TestNewClientsBadKubeconfig(t *testing.T) {
	_, err := NewClients(filepath.Join(t.TempDir(), "nope"), "")
	if err == nil || !strings.Contains(err.Error(), "cannot load the cluster configuration") {
		t.Errorf("got %v", err)
	}
}

// TestNewClientsKubeconfigVariableNamesNoFile: client-go skips a KUBECONFIG
// file that does not exist; the error names it rather than client-go's
// KUBERNETES_MASTER hint.
func TestNewClientsKubeconfigVariableNamesNoFile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	t.Setenv("KUBECONFIG", missing)
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // not in a cluster
	_, err := NewClients("", "")
	want := "cannot load the cluster configuration: KUBECONFIG: " + missing + " does not exist, and khook is not running in a cluster; pass --kubeconfig, or set KUBECONFIG to a kubeconfig file"
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}
