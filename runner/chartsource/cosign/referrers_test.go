package cosign_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path"
	"strings"
	"sync/atomic"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/errdef"

	"github.com/khook/khook/runner/chartsource/cosign"
	"github.com/khook/khook/test/chartsrc"
)

// TestVerifyReferrersAPI: a registry with the OCI referrers API is asked
// through it, not through the sha256-<hex> tag. The harness's registry
// (Distribution 3.1) has no such API, so TestVerify covers the tag
// fallback; here a proxy in front of it answers the API from the index the
// fallback keeps, and passes every other request to the registry.
func TestVerifyReferrersAPI(t *testing.T) {
	s := newSigners(t)
	tests := []struct {
		name   string
		sign   func(t *testing.T, c chartsrc.CosignChart)
		policy cosign.Policy
		signer string
	}{
		{"key", func(t *testing.T, c chartsrc.CosignChart) {
			chartsrc.AttachBundle(t, c, chartsrc.KeyBundle(t, c, s.good, c.Digest()))
		},
			s.byKey, "key " + s.good.Fingerprint()},
		{"keyless", func(t *testing.T, c chartsrc.CosignChart) {
			chartsrc.AttachBundle(t, c, s.store.KeylessBundle(t, c, workflow, issuer, c.Digest()))
		}, s.identity, workflow + " issued by " + issuer},
		{"unsigned", func(*testing.T, chartsrc.CosignChart) {}, s.byKey, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := chartsrc.PushCosign(t, authNone)
			tt.sign(t, c)
			target, api, fallback := referrersProxy(t, c)
			signer, err := cosign.Verify(context.Background(), target, c.Digest(), tt.policy)
			var unverified *cosign.Unverified
			switch {
			case tt.signer != "" && (err != nil || signer != tt.signer):
				t.Fatalf("Verify = %q, %v; want %q", signer, err, tt.signer)
			case tt.signer == "" && !errors.As(err, &unverified):
				t.Fatalf("Verify = %q, %v; want an *Unverified", signer, err)
			case api.Load() == 0 || fallback.Load() != 0:
				t.Fatalf("%d referrers API requests, %d of the fallback tag; want the API alone", api.Load(), fallback.Load())
			}
		})
	}
}

// referrersProxy serves c's registry with a referrers API and returns the
// target through it and counters of API and fallback-tag requests.
func referrersProxy(t *testing.T, c chartsrc.CosignChart) (cosign.Target, *atomic.Int64, *atomic.Int64) {
	t.Helper()
	api, fallback := new(atomic.Int64), new(atomic.Int64)
	registry := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: c.Target.Host})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		switch {
		case strings.Contains(p, "/referrers/"):
			api.Add(1)
			serveReferrers(w, r, c, path.Base(p))
			return
		case strings.Contains(p, "/manifests/sha256-") && !strings.HasSuffix(p, ".sig"):
			fallback.Add(1)
		}
		registry.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	target := c.Target
	target.Host = strings.TrimPrefix(srv.URL, "http://")
	return target, api, fallback
}

// serveReferrers answers GET /v2/<name>/referrers/<digest> with the image
// index stored under the tag schema (an empty index when there is none).
func serveReferrers(w http.ResponseWriter, r *http.Request, c chartsrc.CosignChart, digest string) {
	w.Header().Set("Content-Type", ocispec.MediaTypeImageIndex)
	_, rc, err := c.Repo.FetchReference(r.Context(), strings.Replace(digest, ":", "-", 1))
	if errors.Is(err, errdef.ErrNotFound) {
		_, _ = io.WriteString(w, `{"schemaVersion":2,"mediaType":"`+ocispec.MediaTypeImageIndex+`","manifests":[]}`)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer rc.Close()
	_, _ = io.Copy(w, rc)
}
