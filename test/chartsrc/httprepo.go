package chartsrc

import (
	"crypto/subtle"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// HTTPRepo is a chart repository (index.yaml and packaged charts) on a
// loopback httptest server.
type HTTPRepo struct {
	URL  string // e.g. http://127.0.0.1:PORT, the repository URL for Helm
	Auth Auth   // credentials the server demands, if any

	requests atomic.Int64
	dir      string // served (ServeDir; Reindex)
}

// Requests counts the requests the repository has answered.
func (r *HTTPRepo) Requests() int64 { return r.requests.Load() }

// NewHTTPRepo packages the named test charts and serves them with an index;
// with a non-zero auth every request needs those basic-auth credentials.
func NewHTTPRepo(t testing.TB, auth Auth, charts ...string) *HTTPRepo {
	t.Helper()
	dir := t.TempDir()
	for _, name := range charts {
		Package(t, name, dir)
	}
	return serveRepoDir(t, auth, dir)
}

// serveRepoDir indexes dir's packaged charts and serves them.
func serveRepoDir(t testing.TB, auth Auth, dir string) *HTTPRepo {
	t.Helper()
	// Relative chart URLs: Helm resolves them against the repository URL.
	idx, err := repo.IndexDirectory(dir, "")
	if err != nil {
		t.Fatalf("chartsrc: cannot index %s: %v", dir, err)
	}
	idx.SortEntries()
	if err := idx.WriteFile(filepath.Join(dir, "index.yaml"), 0o644); err != nil {
		t.Fatalf("chartsrc: cannot write index.yaml: %v", err)
	}
	hr := &HTTPRepo{Auth: auth}
	hr.URL = serve(t, auth, &hr.requests, http.FileServer(http.Dir(dir)))
	return hr
}

// serve serves h on a loopback port until the test ends, counting the
// requests; with a non-zero auth every request needs those basic-auth
// credentials. It returns the server's URL.
func serve(t testing.TB, auth Auth, requests *atomic.Int64, h http.Handler) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if auth != (Auth{}) && !basicAuthOK(r, auth) {
			w.Header().Set("WWW-Authenticate", `Basic realm="khook-test"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func basicAuthOK(r *http.Request, want Auth) bool {
	u, p, ok := r.BasicAuth()
	return ok && subtle.ConstantTimeCompare([]byte(u), []byte(want.Username)) == 1 &&
		subtle.ConstantTimeCompare([]byte(p), []byte(want.Password)) == 1
}
