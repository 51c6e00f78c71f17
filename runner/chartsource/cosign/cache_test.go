package cosign_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/khook/khook/runner/chartsource/cosign"
	"github.com/khook/khook/test/chartsrc"
)

// TestCache: a verdict (a signer or an *Unverified) is asked of the
// registry once per repository, digest and policy; a registry error is not
// kept, so the next call asks again.
func TestCache(t *testing.T) {
	ctx := context.Background()
	good, other := newKey(t), newKey(t)
	c := pushChart(t, chartsrc.Auth{})
	attachBundle(t, c, keyBundle(t, c, good, c.digest.Digest.String()))
	d := c.digest.Digest.String()
	var cache cosign.Cache

	before := c.reg.Requests()
	first, err := cache.Verify(ctx, c.target, d, cosign.Policy{Keys: [][]byte{good.pem}})
	if err != nil {
		t.Fatal(err)
	}
	asked := c.reg.Requests()
	if asked == before {
		t.Fatal("the first Verify asked nothing of the registry")
	}
	again, err := cache.Verify(ctx, c.target, d, cosign.Policy{Keys: [][]byte{good.pem}})
	if err != nil || again != first || c.reg.Requests() != asked {
		t.Fatalf("second Verify = %q, %v after %d more requests; want %q from the cache", again, err, c.reg.Requests()-asked, first)
	}

	// Another policy is another verdict; its failure is kept too.
	var unverified *cosign.Unverified
	for range 2 {
		if _, err := cache.Verify(ctx, c.target, d, cosign.Policy{Keys: [][]byte{other.pem}}); !errors.As(err, &unverified) {
			t.Fatalf("Verify with another key = %v; want an *Unverified", err)
		}
	}
	if n := c.reg.Requests() - asked; n == 0 {
		t.Fatal("another policy was answered from the first policy's verdict")
	}
	asked = c.reg.Requests()
	if _, err := cache.Verify(ctx, c.target, d, cosign.Policy{Keys: [][]byte{other.pem}}); !errors.As(err, &unverified) || c.reg.Requests() != asked {
		t.Fatalf("the kept failure was asked again (%d requests) or changed: %v", c.reg.Requests()-asked, err)
	}

	// A registry that refuses is no verdict: asked again each time.
	var trips atomic.Int64
	down := c.target
	down.Transport = roundTripper(func(*http.Request) (*http.Response, error) {
		trips.Add(1)
		return nil, errors.New("connection refused")
	})
	for i := range 2 {
		if _, err := cache.Verify(ctx, down, otherDigest, cosign.Policy{Keys: [][]byte{good.pem}}); err == nil || errors.As(err, &unverified) {
			t.Fatalf("Verify through a refusing transport = %v; want a registry error", err)
		}
		if trips.Load() <= int64(i) {
			t.Fatalf("call %d did not reach the transport: the registry error was cached", i+1)
		}
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// BenchmarkVerify is one chart's verification, per format and signer, and
// through a warm Cache (#47: < 50 ms per chart).
func BenchmarkVerify(b *testing.B) {
	s := newSigners(b)
	key := func(c chart) { attachBundle(b, c, keyBundle(b, c, s.good, c.digest.Digest.String())) }
	keyTag := func(c chart) { signTagged(b, c, s.good, c.digest.Digest.String()) }
	keyless := func(c chart) {
		attachBundle(b, c, s.store.keylessBundle(b, c, workflow, issuer, c.digest.Digest.String()))
	}
	keylessTag := func(c chart) { s.store.keylessTagged(b, c, workflow, issuer, c.digest.Digest.String()) }
	cases := []struct {
		name   string
		policy cosign.Policy
		sign   func(c chart)
	}{{"key bundle", s.byKey, key}, {"key tag", s.byKey, keyTag}, {"keyless bundle", s.identity, keyless}, {"keyless tag", s.identity, keylessTag}}
	for _, tc := range cases {
		c := pushChart(b, chartsrc.Auth{})
		tc.sign(c)
		d := c.digest.Digest.String()
		b.Run(tc.name, func(b *testing.B) {
			before := c.reg.Requests()
			for b.Loop() {
				if _, err := cosign.Verify(context.Background(), c.target, d, tc.policy); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.reg.Requests()-before)/float64(b.N), "requests/op")
		})
		b.Run(tc.name+" cached", func(b *testing.B) {
			var cache cosign.Cache
			if _, err := cache.Verify(context.Background(), c.target, d, tc.policy); err != nil {
				b.Fatal(err)
			}
			for b.Loop() { // the timer starts here, after the verdict is kept
				if _, err := cache.Verify(context.Background(), c.target, d, tc.policy); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
