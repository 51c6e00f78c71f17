package cosign

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/opencontainers/go-digest"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"
)

// What a signature by a key is, when the policy wants something else.
const (
	onlyIdentity = "a signature by a key, where only a keyless identity is trusted"
	otherKey     = "a signature that none of the required keys verifies"
)

// checkTagged checks a tag-based signature: a signature of the
// simple-signing payload (by a key, or by a Fulcio certificate with its
// Rekor entry in the annotations) whose docker-manifest-digest is d.
func (pol *policy) checkTagged(c candidate, d digest.Digest) (signer, found string) {
	sig, err := base64.StdEncoding.DecodeString(c.signature)
	if err != nil {
		return "", "a signature annotation that is not base64"
	}
	claimed, err := payloadDigest(c.payload)
	if err != nil {
		return "", err.Error()
	}
	if c.annotations[CertificateAnnotation] != "" {
		b, err := legacyBundle(c, sig)
		if err != nil {
			return "", "a keyless signature " + err.Error()
		}
		signer, found = pol.verifyEntity(b, sgverify.WithArtifact(bytes.NewReader(c.payload)))
	} else {
		signer, found = pol.verifyKeySignature(sig, c.payload)
	}
	if found != "" {
		return "", found
	}
	if claimed != d.String() {
		return "", "a signature by " + signer + " over " + claimed + ", not " + d.String()
	}
	return signer, ""
}

// verifyKeySignature verifies a bare signature with the policy's keys, as
// cosign verify --key does with a tag-based signature.
func (pol *policy) verifyKeySignature(sig, payload []byte) (signer, found string) {
	if len(pol.keys) == 0 {
		return "", onlyIdentity
	}
	for _, k := range pol.keys {
		if k.verifier.VerifySignature(bytes.NewReader(sig), bytes.NewReader(payload)) == nil {
			return "key " + k.fingerprint, ""
		}
	}
	return "", otherKey
}

// payloadDigest is the docker-manifest-digest a simple-signing payload signs.
func payloadDigest(payload []byte) (string, error) {
	var ss struct {
		Critical struct {
			Image struct {
				Digest string `json:"docker-manifest-digest"`
			} `json:"image"`
		} `json:"critical"`
	}
	if err := json.Unmarshal(payload, &ss); err != nil {
		return "", errors.New("a signature whose payload is not simple-signing JSON")
	}
	if ss.Critical.Image.Digest == "" {
		return "", errors.New("a signature whose payload has no critical.image.docker-manifest-digest")
	}
	return ss.Critical.Image.Digest, nil
}

// rekorBundle is the dev.sigstore.cosign/bundle annotation: a Rekor entry
// with the log's signed entry timestamp (its inclusion promise).
type rekorBundle struct {
	SignedEntryTimestamp []byte
	Payload              struct {
		Body           string `json:"body"`
		IntegratedTime int64  `json:"integratedTime"`
		LogIndex       int64  `json:"logIndex"`
		LogID          string `json:"logID"`
	}
}

// legacyBundle carries a keyless tag-based signature into a Sigstore bundle
// (v0.1, which admits an inclusion promise) so that sigstore-go verifies it
// as it verifies cosign v3's: chain, log entry, identity.
func legacyBundle(c candidate, sig []byte) (*bundle.Bundle, error) {
	var certs []*protocommon.X509Certificate
	rest := []byte(c.annotations[CertificateAnnotation] + "\n" + c.annotations[ChainAnnotation])
	for {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		certs = append(certs, &protocommon.X509Certificate{RawBytes: block.Bytes})
	}
	if len(certs) == 0 {
		return nil, errors.New("whose certificate annotation holds no PEM certificate")
	}
	raw := c.annotations[RekorBundleAnnotation]
	if raw == "" {
		return nil, errors.New("without a transparency-log entry (no " + RekorBundleAnnotation + " annotation)")
	}
	var rb rekorBundle
	if err := json.Unmarshal([]byte(raw), &rb); err != nil {
		return nil, fmt.Errorf("whose %s annotation is not a Rekor bundle: %w", RekorBundleAnnotation, err)
	}
	body, err := base64.StdEncoding.DecodeString(rb.Payload.Body)
	if err != nil {
		return nil, errors.New("whose Rekor entry body is not base64")
	}
	var kv struct{ Kind, APIVersion string }
	logID, err := hex.DecodeString(rb.Payload.LogID)
	if err != nil || json.Unmarshal(body, &kv) != nil {
		return nil, errors.New("whose Rekor entry has no log ID or kind")
	}
	sum := sha256.Sum256(c.payload)
	pb := &protobundle.Bundle{
		MediaType: "application/vnd.dev.sigstore.bundle+json;version=0.1",
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content: &protobundle.VerificationMaterial_X509CertificateChain{X509CertificateChain: &protocommon.X509CertificateChain{Certificates: certs}},
			TlogEntries: []*protorekor.TransparencyLogEntry{{
				LogIndex: rb.Payload.LogIndex, LogId: &protocommon.LogId{KeyId: logID},
				KindVersion:    &protorekor.KindVersion{Kind: kv.Kind, Version: kv.APIVersion},
				IntegratedTime: rb.Payload.IntegratedTime, CanonicalizedBody: body,
				InclusionPromise: &protorekor.InclusionPromise{SignedEntryTimestamp: rb.SignedEntryTimestamp},
			}},
		},
		Content: &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
			MessageDigest: &protocommon.HashOutput{Algorithm: protocommon.HashAlgorithm_SHA2_256, Digest: sum[:]},
			Signature:     sig,
		}},
	}
	b, err := bundle.NewBundle(pb)
	if err != nil {
		return nil, fmt.Errorf("that does not form a valid Sigstore bundle: %w", err)
	}
	return b, nil
}
