package chartsrc

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	"github.com/sirupsen/logrus"
	"golang.org/x/crypto/bcrypt"
	"helm.sh/helm/v4/pkg/registry"

	// The registry's in-memory storage and htpasswd auth register themselves.
	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
)

// The registry logs every request through the global logrus logger; nothing
// else in khook's tests uses logrus.
var quietRegistry sync.Once

// OCIRegistry is a CNCF Distribution registry running in-process with
// in-memory storage on a loopback httptest server (plain HTTP).
type OCIRegistry struct {
	Host string // 127.0.0.1:PORT
	Auth Auth   // credentials the registry demands (htpasswd), if any

	requests *atomic.Int64
}

// Requests counts the requests the registry has answered (pushes too).
func (r *OCIRegistry) Requests() int64 { return r.requests.Load() }

// NewOCIRegistry starts a registry; with a non-zero auth it demands those
// credentials.
func NewOCIRegistry(t testing.TB, auth Auth) *OCIRegistry {
	t.Helper()
	config := &configuration.Configuration{}
	config.Storage = configuration.Storage{
		"inmemory":    configuration.Parameters{},
		"maintenance": configuration.Parameters{"uploadpurging": map[any]any{"enabled": false}},
	}
	config.Log.AccessLog.Disabled = true
	if auth != (Auth{}) {
		hash, err := bcrypt.GenerateFromPassword([]byte(auth.Password), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "htpasswd")
		if err := os.WriteFile(path, fmt.Appendf(nil, "%s:%s\n", auth.Username, hash), 0o600); err != nil {
			t.Fatal(err)
		}
		config.Auth = configuration.Auth{"htpasswd": configuration.Parameters{"realm": "khook-test", "path": path}}
	}
	quietRegistry.Do(func() { logrus.SetOutput(io.Discard) })
	ctx, cancel := context.WithCancel(context.Background())
	app := handlers.NewApp(ctx, config)
	requests := new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		requests.Add(1)
		app.ServeHTTP(w, req)
	}))
	t.Cleanup(func() {
		srv.Close()
		_ = app.Shutdown()
		cancel()
	})
	return &OCIRegistry{Host: strings.TrimPrefix(srv.URL, "http://"), Auth: auth, requests: requests}
}

// URL returns the oci:// base under which Push stores charts.
func (r *OCIRegistry) URL() string { return "oci://" + r.Host + "/charts" }

// Client returns a Helm registry client for this registry (plain HTTP, its
// credentials, a credentials file in a temporary directory).
func (r *OCIRegistry) Client(t testing.TB) *registry.Client {
	t.Helper()
	opts := []registry.ClientOption{
		registry.ClientOptPlainHTTP(),
		registry.ClientOptWriter(io.Discard),
		registry.ClientOptCredentialsFile(filepath.Join(t.TempDir(), "registry.json")),
	}
	if r.Auth != (Auth{}) {
		opts = append(opts, registry.ClientOptBasicAuth(r.Auth.Username, r.Auth.Password))
	}
	c, err := registry.NewClient(opts...)
	if err != nil {
		t.Fatalf("chartsrc: cannot create a registry client: %v", err)
	}
	return c
}

// Push packages the test chart called name and pushes it with the Helm SDK.
// It returns the chart's reference without version, URL()+"/"+name.
func (r *OCIRegistry) Push(t testing.TB, name string) string {
	t.Helper()
	data, err := os.ReadFile(Package(t, name, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	ref := fmt.Sprintf("%s/charts/%s:%s", r.Host, name, Version)
	if _, err := r.Client(t).Push(data, ref); err != nil {
		t.Fatalf("chartsrc: cannot push %s: %v", ref, err)
	}
	return r.URL() + "/" + name
}
