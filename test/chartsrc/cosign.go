package chartsrc

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/khook/khook/runner/chartsource/cosign"
)

// Cosign signatures of a chart pushed to the harness's registry (#47), as
// cosign writes them: the Sigstore bundle as an OCI referrer (cosign v3) and
// the tag-based sha256-<hex>.sig, signed with a generated key or keylessly
// through an offline virtual Sigstore.

// CosignChart is the demo chart pushed to a registry of the harness, to
// sign as cosign does: where it is and its manifest.
type CosignChart struct {
	Target   cosign.Target
	Manifest ocispec.Descriptor
	Repo     *remote.Repository // to attach signatures
	Reg      *OCIRegistry
}

// Ref is the chart's reference as a helm step names it, without version.
func (c CosignChart) Ref() string { return "oci://" + c.Target.Host + "/" + c.Target.Repository }

// Digest is the chart's manifest digest, what a signature signs.
func (c CosignChart) Digest() string { return c.Manifest.Digest.String() }

// PushCosign starts a registry (with auth, if given), pushes the demo chart
// with Helm's registry client, as users publish charts, and returns it.
func PushCosign(t testing.TB, a Auth) CosignChart {
	t.Helper()
	reg := NewOCIRegistry(t, a)
	data, err := os.ReadFile(Package(t, "demo", t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	res, err := reg.Client(t).Push(data, reg.Host+"/charts/demo:"+Version)
	if err != nil {
		t.Fatal(err)
	}
	target := cosign.Target{Host: reg.Host, Repository: "charts/demo", PlainHTTP: true, Username: a.Username, Password: a.Password}
	repo, err := remote.NewRepository(reg.Host + "/charts/demo")
	if err != nil {
		t.Fatal(err)
	}
	repo.PlainHTTP = true
	if a != (Auth{}) {
		repo.Client = &auth.Client{Credential: auth.StaticCredential(reg.Host, auth.Credential{Username: a.Username, Password: a.Password})}
	}
	desc, err := repo.Resolve(context.Background(), res.Manifest.Digest)
	if err != nil {
		t.Fatal(err)
	}
	return CosignChart{Target: target, Manifest: desc, Repo: repo, Reg: reg}
}

// CosignKey is a generated cosign key pair (ECDSA P-256, as cosign
// generate-key-pair) with its public key as PEM.
type CosignKey struct {
	Priv *ecdsa.PrivateKey
	PEM  []byte
}

// NewCosignKey generates a key pair.
func NewCosignKey(t testing.TB) CosignKey {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	return CosignKey{Priv: priv, PEM: pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})}
}

// Fingerprint is the name khook gives the key as a signer ("SHA256:..."
// over the public key's DER, as ssh-keygen -l prints it), computed here
// independently of the verifier.
func (k CosignKey) Fingerprint() string {
	block, _ := pem.Decode(k.PEM)
	sum := sha256.Sum256(block.Bytes)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}

// Sign signs msg's SHA-256 with the key (ASN.1 ECDSA, as cosign).
func (k CosignKey) Sign(t testing.TB, msg []byte) []byte {
	t.Helper()
	sum := sha256.Sum256(msg)
	sig, err := ecdsa.SignASN1(rand.Reader, k.Priv, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// Statement is the in-toto statement cosign v3 signs for an image.
func Statement(t testing.TB, c CosignChart, signed string) []byte {
	t.Helper()
	hexDigest := strings.TrimPrefix(signed, "sha256:")
	data, err := json.Marshal(map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       []any{map[string]any{"name": c.Target.Host + "/" + c.Target.Repository, "digest": map[string]string{"sha256": hexDigest}}},
		"predicateType": cosign.SignPredicate,
		"predicate":     map[string]any{},
	})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// SimpleSigning is the payload of a tag-based signature.
func SimpleSigning(t testing.TB, c CosignChart, signed string) []byte {
	t.Helper()
	data, err := json.Marshal(map[string]any{
		"critical": map[string]any{
			"identity": map[string]string{"docker-reference": c.Target.Host + "/" + c.Target.Repository},
			"image":    map[string]string{"docker-manifest-digest": signed},
			"type":     "cosign container image signature",
		},
		"optional": nil,
	})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// pae is DSSE's pre-authentication encoding, what a DSSE signature signs.
func pae(payloadType string, payload []byte) []byte {
	return fmt.Appendf(nil, "DSSEv1 %d %s %d %s", len(payloadType), payloadType, len(payload), payload)
}

// KeyBundle is a cosign v3 bundle of signed's statement signed with k (no
// transparency log, as cosign sign --tlog-upload=false).
func KeyBundle(t testing.TB, c CosignChart, k CosignKey, signed string) []byte {
	t.Helper()
	payload := Statement(t, c, signed)
	pb := &protobundle.Bundle{
		MediaType:            "application/vnd.dev.sigstore.bundle.v0.3+json",
		VerificationMaterial: &protobundle.VerificationMaterial{Content: &protobundle.VerificationMaterial_PublicKey{PublicKey: &protocommon.PublicKeyIdentifier{}}},
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{
			Payload: payload, PayloadType: "application/vnd.in-toto+json",
			Signatures: []*protodsse.Signature{{Sig: k.Sign(t, pae("application/vnd.in-toto+json", payload))}},
		}},
	}
	return marshalBundle(t, pb)
}

func marshalBundle(t testing.TB, pb *protobundle.Bundle) []byte {
	t.Helper()
	b, err := bundle.NewBundle(pb)
	if err != nil {
		t.Fatal(err)
	}
	data, err := b.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// AttachBundle attaches a bundle to the chart as cosign v3 does: a manifest
// of artifactType BundleArtifactType whose subject is the chart (oras-go
// keeps the sha256-<hex> referrers tag when the registry lacks the API).
func AttachBundle(t testing.TB, c CosignChart, data []byte) {
	t.Helper()
	ctx := context.Background()
	layer, err := oras.PushBytes(ctx, c.Repo, cosign.BundleArtifactType, data)
	if err != nil {
		t.Fatal(err)
	}
	_, err = oras.PackManifest(ctx, c.Repo, oras.PackManifestVersion1_1, cosign.BundleArtifactType, oras.PackManifestOptions{
		Subject: &c.Manifest, Layers: []ocispec.Descriptor{layer},
		ManifestAnnotations: map[string]string{"dev.sigstore.bundle.predicateType": cosign.SignPredicate},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// AttachTagged writes the tag-based signature sha256-<hex>.sig: one layer,
// the payload, with the signature (and any keyless material) annotated.
func AttachTagged(t testing.TB, c CosignChart, payload, sig []byte, extra map[string]string) {
	t.Helper()
	ctx := context.Background()
	annotations := map[string]string{cosign.SignatureAnnotation: base64.StdEncoding.EncodeToString(sig)}
	for k, v := range extra {
		annotations[k] = v
	}
	layer, err := oras.PushBytes(ctx, c.Repo, "application/vnd.dev.cosign.simplesigning.v1+json", payload)
	if err != nil {
		t.Fatal(err)
	}
	layer.Annotations = annotations
	config, err := oras.PushBytes(ctx, c.Repo, ocispec.MediaTypeImageConfig, []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := json.Marshal(ocispec.Manifest{Versioned: specsV2, MediaType: ocispec.MediaTypeImageManifest, Config: config, Layers: []ocispec.Descriptor{layer}})
	if err != nil {
		t.Fatal(err)
	}
	tag := "sha256-" + c.Manifest.Digest.Encoded() + ".sig"
	if _, err := oras.TagBytes(ctx, c.Repo, ocispec.MediaTypeImageManifest, m, tag); err != nil {
		t.Fatal(err)
	}
}

// Sigstore is an offline Sigstore (Fulcio CA, Rekor, TSA: sigstore-go's
// virtual Sigstore) for keyless signatures, and its trusted_root.json.
type Sigstore struct {
	vs   *ca.VirtualSigstore
	Root []byte
}

// NewSigstore starts an offline Sigstore.
func NewSigstore(t testing.TB) Sigstore {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	// The virtual Rekor's ID is its hex text, which would not survive
	// trusted_root.json (raw bytes there): make it the raw log ID.
	logs := vs.RekorLogs()
	for _, l := range logs {
		if l.ID, err = hex.DecodeString(string(l.ID)); err != nil {
			t.Fatal(err)
		}
	}
	// No CT log: the virtual Fulcio embeds no SCTs.
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, vs.FulcioCertificateAuthorities(), nil, vs.TimestampingAuthorities(), logs)
	if err != nil {
		t.Fatal(err)
	}
	data, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return Sigstore{vs: vs, Root: data}
}

// KeylessBundle is a cosign v3 keyless bundle of signed's statement by
// identity, with its Rekor entry's inclusion proof.
func (s Sigstore) KeylessBundle(t testing.TB, c CosignChart, identity, issuer, signed string) []byte {
	t.Helper()
	ent, err := s.vs.AttestAtTime(identity, issuer, Statement(t, c, signed), time.Now().Add(time.Minute), true)
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := ent.VerificationContent()
	sc, _ := ent.SignatureContent()
	env := sc.EnvelopeContent().RawEnvelope()
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := ent.TlogEntries()
	pb := &protobundle.Bundle{
		MediaType: "application/vnd.dev.sigstore.bundle.v0.3+json",
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content:     &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: vc.Certificate().Raw}},
			TlogEntries: []*protorekor.TransparencyLogEntry{s.tle(t, entries[0])},
		},
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{
			Payload: payload, PayloadType: env.PayloadType, Signatures: []*protodsse.Signature{{Sig: sig}},
		}},
	}
	return marshalBundle(t, pb)
}

// tle is a log entry as a bundle carries it: kind and version (which
// tlog.NewEntry leaves out of its proto) and the signed entry timestamp.
func (s Sigstore) tle(t testing.TB, e *tlog.Entry) *protorekor.TransparencyLogEntry {
	t.Helper()
	tle := e.TransparencyLogEntry()
	var kv struct{ Kind, APIVersion string }
	if err := json.Unmarshal(tle.CanonicalizedBody, &kv); err != nil {
		t.Fatal(err)
	}
	tle.KindVersion = &protorekor.KindVersion{Kind: kv.Kind, Version: kv.APIVersion}
	tle.InclusionPromise = &protorekor.InclusionPromise{SignedEntryTimestamp: s.set(t, tle)}
	return tle
}

// set is Rekor's signed entry timestamp over an entry.
func (s Sigstore) set(t testing.TB, tle *protorekor.TransparencyLogEntry) []byte {
	t.Helper()
	set, err := s.vs.RekorSignPayload(tlog.RekorPayload{
		Body: base64.StdEncoding.EncodeToString(tle.CanonicalizedBody), IntegratedTime: tle.IntegratedTime,
		LogIndex: tle.LogIndex, LogID: hex.EncodeToString(tle.LogId.KeyId),
	})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// KeylessTagged writes a keyless tag-based signature as cosign v2 did: the
// certificate and the Rekor bundle (entry and SET) in the layer's annotations.
func (s Sigstore) KeylessTagged(t testing.TB, c CosignChart, identity, issuer, signed string) {
	t.Helper()
	payload := SimpleSigning(t, c, signed)
	ent, err := s.vs.SignAtTime(identity, issuer, payload, time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := ent.VerificationContent()
	sc, _ := ent.SignatureContent()
	entries, _ := ent.TlogEntries()
	tle := entries[0].TransparencyLogEntry()
	rb, err := json.Marshal(map[string]any{
		"SignedEntryTimestamp": s.set(t, tle),
		"Payload": map[string]any{"body": base64.StdEncoding.EncodeToString(tle.CanonicalizedBody),
			"integratedTime": tle.IntegratedTime, "logIndex": tle.LogIndex, "logID": hex.EncodeToString(tle.LogId.KeyId)},
	})
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: vc.Certificate().Raw})
	AttachTagged(t, c, payload, sc.MessageSignatureContent().Signature(), map[string]string{
		cosign.CertificateAnnotation: string(certPEM), cosign.RekorBundleAnnotation: string(rb),
	})
}

var specsV2 = specs.Versioned{SchemaVersion: 2}

// SignTagged signs signed's simple-signing payload with k in the tag-based
// format.
func SignTagged(t testing.TB, c CosignChart, k CosignKey, signed string) {
	t.Helper()
	payload := SimpleSigning(t, c, signed)
	AttachTagged(t, c, payload, k.Sign(t, payload), nil)
}
