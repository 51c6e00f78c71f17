package chartsource

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/clearsign"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"helm.sh/helm/v4/pkg/provenance"

	"github.com/khook/khook/runner/chartsource/cosign"
	"github.com/khook/khook/spec"
)

// verify holds a fetched chart to its step's verify: block before anything
// of it renders: Helm's provenance (.prov, checked by Helm's own provenance
// package) and cosign. It sets src.Signer; an error is the step's one
// sentence: the chart, what was required, what was found.
func (e *Fetcher) verify(ctx context.Context, h *spec.Helm, src *Source) error {
	v := h.Verify
	if v == nil {
		return nil
	}
	var signers []string
	if pv := v.Provenance; pv != nil {
		signer, err := e.provenance(pv.Keyring, src)
		if err != nil {
			return err
		}
		signers = append(signers, signer)
	}
	if c := v.Cosign; c != nil {
		signer, err := e.cosign(ctx, c, src)
		if err != nil {
			return err
		}
		signers = append(signers, signer)
	}
	src.Signer = strings.Join(signers, "; ")
	return nil
}

type verdict struct {
	signer string
	err    error
}

// provenance checks src's .prov against the keyring, once per chart
// digest, .prov and keyring within the run.
func (e *Fetcher) provenance(keyring string, src *Source) (string, error) {
	required := fmt.Sprintf("verify.provenance requires a .prov signed by a key in %s", keyring)
	if src.Archive == nil {
		return "", fmt.Errorf("%s: %s, and a chart directory has none (package and sign it)", src.What, required)
	}
	if src.prov == nil {
		return "", fmt.Errorf("%s: %s, and there is none at %s (the chart is unsigned)", src.What, required, src.provAt)
	}
	provSum := sha256.Sum256(src.prov)
	key := fmt.Sprintf("%s\x00%x\x00%s\x00%s", sha256Digest(src.Archive), provSum, keyring, src.provName)
	if got, ok := e.verified.Load(key); ok {
		v := got.(verdict)
		return v.signer, v.err
	}
	signer, err := e.checkProvenance(keyring, src)
	if err != nil {
		err = fmt.Errorf("%s: %s, and %s", src.What, required, err)
	}
	e.verified.Store(key, verdict{signer, err})
	return signer, err
}

// checkProvenance runs Helm's verification and says what it found.
func (e *Fetcher) checkProvenance(keyring string, src *Source) (string, error) {
	sig, err := e.keyring(keyring)
	if err != nil {
		return "", err
	}
	ver, err := sig.Verify(src.Archive, src.prov, src.provName)
	switch {
	case err == nil:
		return Signer(ver.SignedBy), nil
	case errors.Is(err, pgperrors.ErrUnknownIssuer):
		return "", fmt.Errorf("the .prov at %s is signed by key %s, which is not in the keyring", src.provAt, issuerOf(src.prov))
	case strings.Contains(err.Error(), "sum does not match"):
		return "", fmt.Errorf("the chart's bytes (%s) are not those the .prov at %s signed: the chart was altered after signing", sha256Digest(src.Archive), src.provAt)
	}
	return "", fmt.Errorf("the .prov at %s does not verify: %v", src.provAt, err)
}

// keyring parses a keyring once per run (spec.ReadKeyring: Helm's loader).
func (e *Fetcher) keyring(file string) (*provenance.Signatory, error) {
	if got, ok := e.keyrings.Load(file); ok {
		return got.(*provenance.Signatory), nil
	}
	sig, err := spec.ReadKeyring(e.baseDir, file)
	if err != nil {
		return nil, err
	}
	e.keyrings.Store(file, sig)
	return sig, nil
}

// Signer names a key: its primary identity and fingerprint.
func Signer(ent *openpgp.Entity) string {
	if ent == nil || ent.PrimaryKey == nil {
		return "an unknown key"
	}
	name := ""
	if id := ent.PrimaryIdentity(); id != nil {
		name = id.Name + " "
	}
	return fmt.Sprintf("%s(key %X)", name, ent.PrimaryKey.Fingerprint)
}

// issuerOf is the key a .prov's signature names, for the sentence of a
// signature by a key the keyring does not hold.
func issuerOf(prov []byte) string {
	block, _ := clearsign.Decode(prov)
	if block == nil || block.ArmoredSignature == nil {
		return "unknown"
	}
	p, err := packet.Read(block.ArmoredSignature.Body)
	if err != nil {
		return "unknown"
	}
	if s, ok := p.(*packet.Signature); ok {
		switch {
		case len(s.IssuerFingerprint) > 0:
			return fmt.Sprintf("%X", s.IssuerFingerprint)
		case s.IssuerKeyId != nil:
			return fmt.Sprintf("%016X", *s.IssuerKeyId)
		}
	}
	return "unknown"
}

// Note is what a plan adds to a step's reason about its chart: the digest
// of its bytes, who signed it (verify:) and the dependencies built for it.
func (s *Source) Note() string {
	note := ""
	if s.Digest != "" {
		note = "; chart " + s.Digest
	}
	return note + s.Verified() + DependenciesNote(s.Deps)
}

// Verified is what a plan's and an apply's line add about who signed the
// chart: "; verified: signed by ..." ("" without verify:).
func (s *Source) Verified() string {
	if s == nil || s.Signer == "" {
		return ""
	}
	return "; verified: signed by " + s.Signer
}

// cosign checks an OCI chart's Sigstore signatures (runner/chartsource/cosign)
// against the step's keys or identity, once per manifest digest and policy
// within the run.
func (e *Fetcher) cosign(ctx context.Context, c *spec.Cosign, src *Source) (string, error) {
	if src.registry == nil || src.Digest == "" {
		return "", fmt.Errorf("%s: verify.cosign requires a Sigstore signature, and only charts from OCI registries carry one", src.What)
	}
	pol := cosign.Policy{}
	for _, k := range c.AllKeys() {
		pem, err := spec.ReadPublicKey(e.baseDir, k)
		if err != nil {
			return "", fmt.Errorf("%s: verify.cosign: %w", src.What, err)
		}
		pol.Keys = append(pol.Keys, pem)
	}
	if id := c.Identity; id != nil {
		pol.Issuer, pol.Subject, pol.SubjectRegExp = id.Issuer, id.Subject, id.SubjectRegExp
	}
	if c.TrustedRoot != "" {
		root, err := spec.ReadTrustedRoot(e.baseDir, c.TrustedRoot)
		if err != nil {
			return "", fmt.Errorf("%s: verify.cosign: %w", src.What, err)
		}
		pol.TrustedRoot = root
	}
	key := fmt.Sprintf("cosign\x00%s\x00%s\x00%s", src.registry, src.Digest, policyKey(pol))
	if got, ok := e.verified.Load(key); ok {
		v := got.(verdict)
		return v.signer, v.err
	}
	signer, err := cosign.Verify(ctx, *src.registry, src.Digest, pol)
	if err != nil {
		err = fmt.Errorf("%s: verify.cosign: %s", src.What, e.redactor.String(err.Error()))
	}
	e.verified.Store(key, verdict{signer, err})
	return signer, err
}

// policyKey identifies a policy for the cache.
func policyKey(p cosign.Policy) string {
	h := sha256.New()
	for _, k := range p.Keys {
		h.Write(k)
		h.Write([]byte{0})
	}
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", p.Issuer, p.Subject, p.SubjectRegExp)
	h.Write(p.TrustedRoot)
	return fmt.Sprintf("%x", h.Sum(nil))
}
