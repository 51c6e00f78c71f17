package helmstep

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/distribution/distribution/v3/configuration"
	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd"
	"github.com/distribution/distribution/v3/registry/handlers"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
	"github.com/sirupsen/logrus"
	"golang.org/x/crypto/bcrypt"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/registry"
	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// chartRepo is an HTTP chart repository behind basic auth, serving index.yaml
// and packages under /charts/. The first chart is listed with a relative URL,
// the others with absolute ones.
type chartRepo struct {
	URL        string // without credentials
	User, Pass string
}

func serveChartRepo(t testing.TB, user, pass string, charts ...*chartv2.Chart) *chartRepo {
	t.Helper()
	dir := t.TempDir()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String() + "/charts"
	idx := repo.NewIndexFile()
	for i, ch := range charts {
		p := packageChart(t, ch, dir)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		url := ""
		if i > 0 {
			url = base
		}
		if err := idx.MustAdd(ch.Metadata, filepath.Base(p), url, "sha256:"+hex.EncodeToString(sum[:])); err != nil {
			t.Fatal(err)
		}
	}
	idx.SortEntries()
	if err := idx.WriteFile(filepath.Join(dir, "index.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := http.StripPrefix("/charts/", http.FileServer(http.Dir(dir)))
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
			w.Header().Set("WWW-Authenticate", `Basic realm="charts"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		files.ServeHTTP(w, r)
	})
	srv.Start()
	t.Cleanup(srv.Close)
	return &chartRepo{URL: base, User: user, Pass: pass}
}

// ociRegistry is an in-process CNCF Distribution registry with htpasswd auth
// on a loopback port (plain HTTP).
type ociRegistry struct {
	Host       string
	User, Pass string
	client     *registry.Client
}

func serveRegistry(t testing.TB, user, pass string) *ociRegistry {
	t.Helper()
	dir := t.TempDir()
	hash, err := bcrypt.GenerateFromPassword([]byte(pass), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	htpasswd := filepath.Join(dir, "htpasswd")
	if err := os.WriteFile(htpasswd, fmt.Appendf(nil, "%s:%s\n", user, hash), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := &configuration.Configuration{}
	cfg.Log.Level = "error"
	cfg.Log.AccessLog.Disabled = true
	cfg.Storage = configuration.Storage{"inmemory": configuration.Parameters{}}
	cfg.Auth = configuration.Auth{"htpasswd": configuration.Parameters{"realm": "khook-test", "path": htpasswd}}
	logrus.SetOutput(io.Discard) // the registry logs every request
	app := handlers.NewApp(context.Background(), cfg)
	srv := httptest.NewServer(app)
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	client, err := registry.NewClient(
		registry.ClientOptBasicAuth(user, pass),
		registry.ClientOptPlainHTTP(),
		registry.ClientOptCredentialsFile(filepath.Join(dir, "config.json")),
	)
	if err != nil {
		t.Fatal(err)
	}
	r := &ociRegistry{Host: addr, User: user, Pass: pass, client: client}
	return r
}

// push uploads a chart as <host>/charts/<name>:<version> and returns its
// manifest digest.
func (r *ociRegistry) push(t testing.TB, ch *chartv2.Chart) string {
	t.Helper()
	p := packageChart(t, ch, t.TempDir())
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	ref := fmt.Sprintf("%s/charts/%s:%s", r.Host, ch.Name(), ch.Metadata.Version)
	res, err := r.client.Push(data, ref, registry.PushOptStrictMode(true))
	if err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	return res.Manifest.Digest
}
