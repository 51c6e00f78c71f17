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
	good, other := chartsrc.NewCosignKey(t), chartsrc.NewCosignKey(t)
	c := chartsrc.PushCosign(t, chartsrc.Auth{})
	chartsrc.AttachBundle(t, c, chartsrc.KeyBundle(t, c, good, c.Digest()))
	d := c.Digest()
	var cache cosign.Cache

	before := c.Reg.Requests()
	first, err := cache.Verify(ctx, c.Target, d, cosign.Policy{Keys: [][]byte{good.PEM}})
	if err != nil {
		t.Fatal(err)
	}
	asked := c.Reg.Requests()
	if asked == before {
		t.Fatal("the first Verify asked nothing of the registry")
	}
	again, err := cache.Verify(ctx, c.Target, d, cosign.Policy{Keys: [][]byte{good.PEM}})
	if err != nil || again != first || c.Reg.Requests() != asked {
		t.Fatalf("second Verify = %q, %v after %d more requests; want %q from the cache", again, err, c.Reg.Requests()-asked, first)
	}

	// Another policy is another verdict; its failure is kept too.
	var unverified *cosign.Unverified
	for range 2 {
		if _, err := cache.Verify(ctx, c.Target, d, cosign.Policy{Keys: [][]byte{other.PEM}}); !errors.As(err, &unverified) {
			t.Fatalf("Verify with another key = %v; want an *Unverified", err)
		}
	}
	if n := c.Reg.Requests() - asked; n == 0 {
		t.Fatal("another policy was answered from the first policy's verdict")
	}
	asked = c.Reg.Requests()
	if _, err := cache.Verify(ctx, c.Target, d, cosign.Policy{Keys: [][]byte{other.PEM}}); !errors.As(err, &unverified) || c.Reg.Requests() != asked {
		t.Fatalf("the kept failure was asked again (%d requests) or changed: %v", c.Reg.Requests()-asked, err)
	}

	// A registry that refuses is no verdict: asked again each time.
	var trips atomic.Int64
	down := c.Target
	down.Transport = roundTripper(func(*http.Request) (*http.Response, error) {
		trips.Add(1)
		return nil, errors.New("connection refused")
	})
	for i := range 2 {
		if _, err := cache.Verify(ctx, down, otherDigest, cosign.Policy{Keys: [][]byte{good.PEM}}); err == nil || errors.As(err, &unverified) {
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
// through a warm Cache (#47: < 50 ms per chartsrc.CosignChart).
func BenchmarkVerify(b *testing.B) {
	s := newSigners(b)
	key := func(c chartsrc.CosignChart) {
		chartsrc.AttachBundle(b, c, chartsrc.KeyBundle(b, c, s.good, c.Digest()))
	}
	keyTag := func(c chartsrc.CosignChart) { chartsrc.SignTagged(b, c, s.good, c.Digest()) }
	keyless := func(c chartsrc.CosignChart) {
		chartsrc.AttachBundle(b, c, s.store.KeylessBundle(b, c, workflow, issuer, c.Digest()))
	}
	keylessTag := func(c chartsrc.CosignChart) { s.store.KeylessTagged(b, c, workflow, issuer, c.Digest()) }
	cases := []struct {
		name   string
		policy cosign.Policy
		sign   func(c chartsrc.CosignChart)
	}{{"key bundle", s.byKey, key}, {"key tag", s.byKey, keyTag}, {"keyless bundle", s.identity, keyless}, {"keyless tag", s.identity, keylessTag}}
	for _, tc := range cases {
		c := chartsrc.PushCosign(b, chartsrc.Auth{})
		tc.sign(c)
		d := c.Digest()
		b.Run(tc.name, func(b *testing.B) {
			before := c.Reg.Requests()
			for b.Loop() {
				if _, err := cosign.Verify(context.Background(), c.Target, d, tc.policy); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.Reg.Requests()-before)/float64(b.N), "requests/op")
		})
		b.Run(tc.name+" cached", func(b *testing.B) {
			var cache cosign.Cache
			if _, err := cache.Verify(context.Background(), c.Target, d, tc.policy); err != nil {
				b.Fatal(err)
			}
			for b.Loop() { // the timer starts here, after the verdict is kept
				if _, err := cache.Verify(context.Background(), c.Target, d, tc.policy); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
