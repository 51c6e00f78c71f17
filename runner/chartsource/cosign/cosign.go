// Package cosign verifies Sigstore (cosign) signatures of charts in OCI
// registries before khook renders them (#47): the Sigstore bundle attached
// as an OCI referrer (cosign v3, artifactType
// application/vnd.dev.sigstore.bundle.v0.3+json, found through the
// referrers API or its tag-schema fallback sha256-<hex>) and the older
// tag-based sha256-<hex>.sig simple-signing format. Signatures are
// key-based (PEM public keys) or keyless (a Fulcio certificate whose
// identity is checked, with its transparency-log inclusion verified
// offline from the bundle against a trusted root). Nothing but the
// registry is contacted: no Rekor, Fulcio or TUF call.
//
// Cryptography is github.com/sigstore/sigstore-go, pinned at v1.3.0: v1.4.0
// needs Go 1.27 and khook builds with Go 1.26. The registry is read with
// oras-go, the library under Helm's registry client that
// runner/chartsource pulls charts with.
//
// The caller registers registry credentials with the run's redactor (as
// runner/chartsource does); nothing here prints.
//
// Verify is the one entry point; Policy.Validate checks a policy offline
// (for the spec's validation at its line) and Cache keeps a run's verdicts.
//
// May import: nothing of khook; sigstore-go, oras-go and the OCI specs.
package cosign

import (
	"context"
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/sigstore/sigstore-go/pkg/root"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"
	sigsig "github.com/sigstore/sigstore/pkg/signature"
)

// Policy is what a signature must satisfy. Any one of Keys may sign; an
// identity (Issuer with Subject or SubjectRegExp) admits keyless
// signatures. With both, either kind of signature passes.
type Policy struct {
	// Keys are PEM public keys (ECDSA, RSA or Ed25519). A key is the trust
	// anchor: a transparency-log entry is neither required nor checked, so
	// signatures made with cosign sign --tlog-upload=false verify.
	Keys [][]byte
	// Issuer is the OIDC issuer the Fulcio certificate must name, exactly.
	Issuer string
	// Subject is the certificate's subject (SAN: a workflow URI, an
	// e-mail), exactly; SubjectRegExp a regular expression it must match
	// instead (Go syntax, unanchored unless written with ^...$).
	Subject, SubjectRegExp string
	// TrustedRoot is a Sigstore trusted_root.json for keyless signatures;
	// nil means the public-good root embedded in khook (trusted_root.json).
	TrustedRoot []byte
}

// Target names the repository of an OCI artifact and how to reach it.
type Target struct {
	Host       string // registry host[:port], e.g. ghcr.io or 127.0.0.1:5000
	Repository string // path under Host, e.g. org/charts/cert-manager
	PlainHTTP  bool   // http:// instead of https://
	// Username and Password authenticate to the registry (basic auth or
	// token exchange, as Docker does); empty for anonymous access.
	Username, Password string
	// Transport carries the requests; nil is http.DefaultTransport.
	Transport http.RoundTripper
}

// String is the repository as a user writes it, without credentials.
func (t Target) String() string { return "oci://" + t.Host + "/" + t.Repository }

// Unverified is the error when the artifact carries no signature that
// satisfies the policy. Its sentence names the artifact, what was required
// and what was found; the caller plans the step fail with it. Any other
// error of Verify is the registry's or the policy's.
type Unverified struct {
	Artifact string // oci://host/repo@sha256:...
	Required string // "a signature by key SHA256:..."
	Found    string // "no cosign signature", "a signature by key SHA256:... (the wrong key)"
}

func (e *Unverified) Error() string {
	return fmt.Sprintf("%s is not verified: required %s, found %s", e.Artifact, e.Required, e.Found)
}

// Verify checks that the OCI artifact t@manifestDigest carries a signature
// satisfying p, in either format, and returns who signed it: "key
// SHA256:<fingerprint>" (the unpadded base64 SHA-256 of the key's DER
// SubjectPublicKeyInfo, as ssh-keygen -l prints) or "<subject> issued by
// <issuer>". When no signature satisfies p the error is an *Unverified.
func Verify(ctx context.Context, t Target, manifestDigest string, p Policy) (signer string, err error) {
	pol, err := p.compile()
	if err != nil {
		return "", err
	}
	return verify(ctx, t, manifestDigest, pol)
}

// Validate checks a policy offline: the keys parse, an identity has an
// issuer and one subject form, the regular expression compiles, the
// trusted root parses. Its error is one sentence about the policy.
func (p Policy) Validate() error {
	_, err := p.compile()
	return err
}

// policy is a Policy parsed once.
type policy struct {
	keys     []key
	identity bool
	certID   sgverify.CertificateIdentity
	keyless  *sgverify.Verifier // nil without an identity
	required string             // what it requires, for Unverified
}

// key is one trusted public key.
type key struct {
	verifier       sigsig.Verifier
	bundleVerifier *sgverify.Verifier // the key as sigstore-go's trusted material
	fingerprint    string             // SHA256:<base64>
}

func (p Policy) compile() (*policy, error) {
	out := &policy{}
	var required []string
	for i, k := range p.Keys {
		parsed, err := parseKey(k)
		if err != nil {
			return nil, fmt.Errorf("cosign key %d is not a PEM public key: %w", i+1, err)
		}
		out.keys = append(out.keys, parsed)
		required = append(required, "key "+parsed.fingerprint)
	}
	switch {
	case p.Issuer == "" && p.Subject == "" && p.SubjectRegExp == "":
	case p.Issuer == "":
		return nil, errors.New("the cosign identity has no issuer: write the OIDC issuer the certificate must name (e.g. https://token.actions.githubusercontent.com)")
	case p.Subject == "" && p.SubjectRegExp == "":
		return nil, fmt.Errorf("the cosign identity issued by %s has no subject: write subject or subjectRegExp", p.Issuer)
	case p.Subject != "" && p.SubjectRegExp != "":
		return nil, errors.New("the cosign identity has both subject and subjectRegExp: write one")
	default:
		out.identity = true
		what := p.Subject
		if p.SubjectRegExp != "" {
			if _, err := regexp.Compile(p.SubjectRegExp); err != nil { // sigstore-go's error names no field
				return nil, fmt.Errorf("the cosign identity's subjectRegExp %q does not compile: %w", p.SubjectRegExp, err)
			}
			what = "a subject matching " + p.SubjectRegExp
		}
		if err := out.keylessVerifier(p); err != nil {
			return nil, err
		}
		required = append(required, what+" issued by "+p.Issuer)
	}
	if len(required) == 0 {
		return nil, errors.New("the cosign policy names neither a key nor an identity: write key, keys or identity")
	}
	out.required = "a signature by " + strings.Join(required, " or by ")
	return out, nil
}

// keylessVerifier sets up the identity and the verifier of keyless
// signatures: the certificate chains to the root's Fulcio CA at a time a
// transparency log (or timestamp authority) of the root vouches for, its
// log entry is included (offline, from the bundle's proof or promise), and
// its SCT is checked when the root lists CT logs (the public-good one does).
func (out *policy) keylessVerifier(p Policy) error {
	id, err := sgverify.NewShortCertificateIdentity(p.Issuer, "", p.Subject, p.SubjectRegExp)
	if err != nil {
		return fmt.Errorf("the cosign identity is not valid: %w", err)
	}
	out.certID = id
	tm, err := trustedRoot(p.TrustedRoot)
	if err != nil {
		return err
	}
	opts := []sgverify.VerifierOption{sgverify.WithTransparencyLog(1), sgverify.WithObserverTimestamps(1)}
	if len(tm.CTLogs()) > 0 {
		opts = append(opts, sgverify.WithSignedCertificateTimestamps(1))
	}
	out.keyless, err = sgverify.NewVerifier(tm, opts...)
	if err != nil {
		return fmt.Errorf("cannot set up keyless verification with the trusted root: %w", err)
	}
	return nil
}

// parseKey reads one PEM public key.
func parseKey(data []byte) (key, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return key{}, errors.New("no PEM block")
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return key{}, err
	}
	v, err := sigsig.LoadVerifier(pub, crypto.SHA256) // as cosign loads a key
	if err != nil {
		return key{}, err
	}
	// The key is the trust anchor: no log entry or timestamp is required.
	material := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) {
		return root.NewExpiringKey(v, time.Time{}, time.Time{}), nil
	})
	bv, err := sgverify.NewVerifier(material, sgverify.WithNoObserverTimestamps())
	if err != nil {
		return key{}, err
	}
	return key{verifier: v, bundleVerifier: bv, fingerprint: fingerprint(block.Bytes)}, nil
}

// fingerprint is SHA256:<unpadded base64> of a key's DER, as ssh-keygen -l.
func fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}
