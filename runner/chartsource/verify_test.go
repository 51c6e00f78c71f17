package chartsource

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/spec"
	"github.com/khook/khook/test/chartsrc"
)

// signedSource is the demo chart packaged and signed (helm package --sign),
// as a fetched local .tgz with its .prov.
func signedSource(t testing.TB) (*Fetcher, *chartsrc.Signer, string) {
	t.Helper()
	signer := chartsrc.NewSigner(t, "Chart Signer")
	dir := t.TempDir()
	tgz := chartsrc.Package(t, "demo", dir)
	signer.Sign(t, tgz)
	return New(nil, dir, nil, Options{}), signer, "./" + filepath.Base(tgz)
}

// Verification is cached by the chart's digest within a run: the second
// fetch of the same bytes does not verify again; other bytes do.
func TestProvenanceCachedByDigest(t *testing.T) {
	e, signer, chart := signedSource(t)
	h := &spec.Helm{Chart: chart, Verify: &spec.Verify{Provenance: &spec.Provenance{Keyring: signer.PublicRing}}}
	for range 2 {
		src, err := e.localChart(&spec.Helm{Chart: chart}, true)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.verify(context.Background(), h, src); err != nil || !strings.Contains(src.Signer, signer.Fingerprint) {
			t.Fatalf("verify: %v, signer %q", err, src.Signer)
		}
	}
	n := 0
	e.verified.Range(func(any, any) bool { n++; return true })
	if n != 1 {
		t.Errorf("%d verifications cached for one chart, want 1", n)
	}
	// Cosign on a chart from no registry fails, never passes.
	h.Verify.Cosign = &spec.Cosign{Key: "k"}
	src, _ := e.localChart(&spec.Helm{Chart: chart}, true)
	if err := e.verify(context.Background(), h, src); err == nil || !strings.Contains(err.Error(), "only charts from OCI registries carry one") {
		t.Errorf("cosign: %v", err)
	}
}

// BenchmarkProvenanceVerify is one chart's provenance verification
// (Helm's pkg/provenance over the demo chart), uncached, and a cached hit.
func BenchmarkProvenanceVerify(b *testing.B) {
	e, signer, chart := signedSource(b)
	src, err := e.localChart(&spec.Helm{Chart: chart}, true)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(signer.PublicRing); err != nil {
		b.Fatal(err)
	}
	b.Run("uncached", func(b *testing.B) {
		for b.Loop() {
			if _, err := e.checkProvenance(signer.PublicRing, src); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		for b.Loop() {
			if _, err := e.provenance(signer.PublicRing, src); err != nil {
				b.Fatal(err)
			}
		}
	})
}
