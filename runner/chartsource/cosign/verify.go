package cosign

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"
)

// SignPredicate is the in-toto predicate type of a cosign v3 signature (a
// bundle's DSSE statement); bundles with other predicates are attestations
// (SBOMs, provenance), not signatures.
const SignPredicate = "https://sigstore.dev/cosign/sign/v1"

// verify is Verify with the policy compiled.
func verify(ctx context.Context, t Target, manifestDigest string, pol *policy) (string, error) {
	d, err := digest.Parse(manifestDigest)
	if err != nil || d.Algorithm() != digest.SHA256 {
		return "", fmt.Errorf("%s: %q is not a manifest digest of the form sha256:<64 hex digits>", t, manifestDigest)
	}
	repo, err := repository(t)
	if err != nil {
		return "", err
	}
	art := t.String() + "@" + d.String()
	// Not resolved first: the caller pulled the chart by this digest, and
	// every round trip counts against a remote registry.
	cands, err := signatures(ctx, repo, ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: d})
	if err != nil {
		return "", err
	}
	if len(cands) == 0 {
		return "", &Unverified{Artifact: art, Required: pol.required,
			Found: "no cosign signature (no Sigstore bundle referrer, no " + d.Algorithm().String() + "-" + d.Encoded() + ".sig tag)"}
	}
	var found []string
	for _, c := range cands {
		var signer, why string
		if c.bundle != nil {
			signer, why = pol.checkBundle(c.bundle, d)
		} else {
			signer, why = pol.checkTagged(c, d)
		}
		if why == "" {
			return signer, nil
		}
		found = append(found, why+" in "+c.where)
	}
	return "", &Unverified{Artifact: art, Required: pol.required, Found: strings.Join(found, "; ")}
}

// checkBundle checks a cosign v3 bundle: a DSSE envelope whose in-toto
// statement of the sign predicate names d among its subjects. It returns
// the signer, or what was found instead.
func (pol *policy) checkBundle(data []byte, d digest.Digest) (signer, found string) {
	b := &bundle.Bundle{}
	if err := b.UnmarshalJSON(data); err != nil {
		return "", "a Sigstore bundle that is not valid (" + err.Error() + ")"
	}
	env, err := b.Envelope()
	if err != nil {
		return "", "a Sigstore bundle with a bare message signature, which names no manifest digest"
	}
	stmt, err := env.Statement()
	if err != nil {
		return "", "a Sigstore bundle whose envelope holds no in-toto statement"
	}
	if stmt.GetPredicateType() != SignPredicate {
		return "", "an attestation of " + stmt.GetPredicateType() + ", not a cosign signature"
	}
	var over []string
	claimed := ""
	for _, s := range stmt.GetSubject() {
		if h := s.GetDigest()["sha256"]; h != "" {
			over = append(over, "sha256:"+h)
			if claimed == "" || "sha256:"+h == d.String() {
				claimed = h
			}
		}
	}
	raw, err := hex.DecodeString(claimed)
	if err != nil || claimed == "" {
		return "", "a cosign signature whose statement names no sha256 subject"
	}
	// Verified over the digest it claims, so that a good signature of
	// other bytes is reported as such.
	signer, found = pol.verifyEntity(b, sgverify.WithArtifactDigest("sha256", raw))
	if found != "" {
		return "", found
	}
	if "sha256:"+claimed != d.String() {
		return "", "a signature by " + signer + " over " + strings.Join(over, ", ") + ", not " + d.String()
	}
	return signer, ""
}

// verifyEntity verifies a signed entity's signature over artifact with the
// policy's keys or identity and returns the signer, or what it found.
func (pol *policy) verifyEntity(e sgverify.SignedEntity, artifact sgverify.ArtifactPolicyOption) (signer, found string) {
	vc, err := e.VerificationContent()
	if err != nil {
		return "", "a signature without verification material (" + err.Error() + ")"
	}
	if cert := vc.Certificate(); cert != nil {
		sum, err := certificate.SummarizeCertificate(cert)
		if err != nil {
			return "", "a keyless signature whose certificate names no identity (" + err.Error() + ")"
		}
		who := sum.SubjectAlternativeName + " issued by " + sum.Extensions.Issuer
		// Checked before the chain, so another identity is reported as such.
		if !pol.identity || pol.certID.Verify(sum) != nil {
			return "", "a keyless signature by " + who
		}
		if _, err := pol.keyless.Verify(e, sgverify.NewPolicy(artifact, sgverify.WithCertificateIdentity(pol.certID))); err != nil {
			return "", "a keyless signature by " + who + " that does not verify (" + err.Error() + ")"
		}
		return who, ""
	}
	if len(pol.keys) == 0 {
		return "", onlyIdentity
	}
	for _, k := range pol.keys {
		if _, err := k.bundleVerifier.Verify(e, sgverify.NewPolicy(artifact, sgverify.WithKey())); err == nil {
			return "key " + k.fingerprint, ""
		}
	}
	return "", otherKey
}
