package spec

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"helm.sh/helm/v4/pkg/provenance"
)

// Verify is a helm step's verify: block: the signatures its chart must
// carry (docs/supply-chain.md). Both may be given; each must hold.
type Verify struct {
	// Provenance is Helm's .prov (OpenPGP) beside the chart: an HTTP
	// repository's, an OCI manifest's .prov layer, a local .tgz's.
	Provenance *Provenance `json:"provenance,omitempty"`
	// Cosign is a Sigstore signature of an OCI chart.
	Cosign *Cosign `json:"cosign,omitempty"`
}

// Provenance names the OpenPGP keyring a chart's .prov must verify with.
type Provenance struct {
	Keyring string `json:"keyring"` // a file: binary, armored or keybox
}

// Cosign is key-based (Key or Keys, PEM public keys, inline or files) or
// keyless (Identity) Sigstore verification.
type Cosign struct {
	Key      string          `json:"key,omitempty"`
	Keys     []string        `json:"keys,omitempty"`
	Identity *CosignIdentity `json:"identity,omitempty"`
	// TrustedRoot is a trusted_root.json; empty: the Sigstore public-good
	// root shipped in khook.
	TrustedRoot string `json:"trustedRoot,omitempty"`
}

// CosignIdentity is the certificate identity of a keyless signature.
type CosignIdentity struct {
	Issuer        string `json:"issuer"`
	Subject       string `json:"subject,omitempty"`
	SubjectRegExp string `json:"subjectRegExp,omitempty"`
}

// AllKeys is Key and Keys as one list.
func (c *Cosign) AllKeys() []string {
	if c.Key == "" {
		return c.Keys
	}
	return append([]string{c.Key}, c.Keys...)
}

// IsInlinePEM: a key: value that is the PEM text itself, not a file.
func IsInlinePEM(s string) bool { return strings.Contains(s, "-----BEGIN ") }

// ReadKeyring reads and parses a keyring with Helm's own loader (binary,
// armored or keybox), relative to baseDir; one sentence on failure.
func ReadKeyring(baseDir, file string) (*provenance.Signatory, error) {
	p := inBase(baseDir, file)
	if _, err := os.Stat(p); err != nil {
		return nil, fmt.Errorf("keyring %s cannot be read: %v", file, unwrapPath(err))
	}
	sig, err := provenance.NewFromKeyring(p, "")
	if err != nil {
		return nil, fmt.Errorf("%s is not an OpenPGP keyring (gpg --export > pubring.gpg, or --armor): %v", file, err)
	}
	if len(sig.KeyRing) == 0 {
		return nil, fmt.Errorf("%s is not an OpenPGP keyring: it holds no keys (export them with gpg --export)", file)
	}
	return sig, nil
}

// ReadPublicKey returns the PEM of a cosign key: (inline PEM or a file
// relative to baseDir), checked to be a public key.
func ReadPublicKey(baseDir, key string) ([]byte, error) {
	data, what := []byte(key), "the inline PEM"
	if !IsInlinePEM(key) {
		var err error
		what = key
		if data, err = os.ReadFile(inBase(baseDir, key)); err != nil {
			return nil, fmt.Errorf("key file %s cannot be read: %v", key, unwrapPath(err))
		}
	}
	block, _ := pem.Decode(data)
	switch {
	case block == nil:
		return nil, fmt.Errorf("%s is not PEM: a cosign public key starts with -----BEGIN PUBLIC KEY-----", what)
	case block.Type != "PUBLIC KEY":
		return nil, fmt.Errorf("%s holds a PEM block of type %s, not PUBLIC KEY (give cosign.pub, never the private key)", what, block.Type)
	}
	if _, err := x509.ParsePKIXPublicKey(block.Bytes); err != nil {
		return nil, fmt.Errorf("%s is not a valid public key: %v", what, err)
	}
	return data, nil
}

// ReadTrustedRoot reads a trustedRoot: file and checks it is JSON.
func ReadTrustedRoot(baseDir, file string) ([]byte, error) {
	data, err := os.ReadFile(inBase(baseDir, file))
	if err != nil {
		return nil, fmt.Errorf("trusted root %s cannot be read: %v", file, unwrapPath(err))
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("trusted root %s is not a Sigstore trusted_root.json: %v", file, err)
	}
	return data, nil
}

func inBase(baseDir, p string) string {
	if filepath.IsAbs(p) || baseDir == "" {
		return p
	}
	return filepath.Join(baseDir, p)
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// verify checks a verify: block's shape (its files are read by
// verifyMaterial, once the spec's folder is known).
func (v *validator) verify(p string, h *Helm) {
	vf := h.Verify
	if vf == nil {
		return
	}
	if vf.Provenance == nil && vf.Cosign == nil {
		v.errorf(p, "write provenance: {keyring: ...} or cosign: {...}", "says nothing to verify")
		return
	}
	ref := ParseChart(h.Chart)
	if ref.Kind == ChartLocal && !strings.HasSuffix(ref.Name, ".tgz") {
		v.errorf(p, "remove verify:, or sign the chart with helm package --sign and point chart: at the .tgz", "a local chart directory %s has no signature to verify", h.Chart)
		return
	}
	if vf.Provenance != nil && IsGitRepo(h.Repo) {
		v.errorf(p+".provenance", "remove verify:; a git chart is pinned by its commit: write ?ref=<full commit hash> in repo:", "a chart read from git (%s) has no .prov to verify", h.Repo)
		return
	}
	if pv := vf.Provenance; pv != nil {
		v.required(p+".provenance.keyring", pv.Keyring, "the OpenPGP keyring holding the signers' public keys, e.g. ./keys/pubring.gpg")
	}
	if c := vf.Cosign; c != nil {
		if ref.Kind != ChartOCI {
			v.errorf(p+".cosign", "use provenance: for charts outside OCI registries", "cosign signatures are verified for oci:// charts only, and %s is not one", h.Chart)
		}
		v.cosign(p+".cosign", c)
	}
}

func (v *validator) cosign(p string, c *Cosign) {
	n := 0
	for _, set := range []bool{c.Key != "", len(c.Keys) > 0, c.Identity != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		v.errorf(p, "key: or keys: for key-based signatures, identity: for keyless ones", "needs exactly one of key, keys, identity (found %d)", n)
	}
	if id := c.Identity; id != nil {
		if id.Issuer == "" {
			v.errorf(p+".identity.issuer", "the OIDC issuer of the signing certificate, e.g. https://token.actions.githubusercontent.com", "an identity needs issuer:")
		}
		switch {
		case id.Subject != "" && id.SubjectRegExp != "":
			v.errorf(p+".identity.subjectRegExp", "keep one of them", "an identity has subject: or subjectRegExp:, not both")
		case id.Subject == "" && id.SubjectRegExp == "":
			v.errorf(p+".identity", "the signer's identity, e.g. the workflow URL of a GitHub release", "an identity needs subject: or subjectRegExp:")
		case id.SubjectRegExp != "":
			if _, err := regexp.Compile(id.SubjectRegExp); err != nil {
				v.errorf(p+".identity.subjectRegExp", "", "%q is not a regular expression: %v", id.SubjectRegExp, err)
			}
		}
	}
}

// verifyMaterial reads every key, keyring and trusted root a verify:
// block names, so a file that is not what it should be is refused at its
// line before anything is fetched.
func verifyMaterial(s *Spec) Problems {
	v := &validator{s: s, bad: map[string]bool{}, typos: map[string]bool{}}
	for _, st := range s.Steps {
		if st.Helm == nil || st.Helm.Verify == nil {
			continue
		}
		p, vf := st.Path+".helm.verify", st.Helm.Verify
		if pv := vf.Provenance; pv != nil && pv.Keyring != "" {
			if _, err := ReadKeyring(s.BaseDir, pv.Keyring); err != nil {
				v.errorf(p+".provenance.keyring", "", "%v", err)
			}
		}
		c := vf.Cosign
		if c == nil {
			continue
		}
		if c.Key != "" {
			if _, err := ReadPublicKey(s.BaseDir, c.Key); err != nil {
				v.errorf(p+".cosign.key", "", "%v", err)
			}
		}
		for i, k := range c.Keys {
			if _, err := ReadPublicKey(s.BaseDir, k); err != nil {
				v.errorf(fmt.Sprintf("%s.cosign.keys.%d", p, i), "", "%v", err)
			}
		}
		if c.TrustedRoot != "" {
			if _, err := ReadTrustedRoot(s.BaseDir, c.TrustedRoot); err != nil {
				v.errorf(p+".cosign.trustedRoot", "", "%v", err)
			}
		}
	}
	return v.probs
}

// unverifiedCharts is --require-verified-charts: every helm step with a
// remote chart (repository, OCI or a packaged .tgz) must carry verify:.
func unverifiedCharts(s *Spec) Problems {
	v := &validator{s: s, bad: map[string]bool{}, typos: map[string]bool{}}
	for _, st := range s.Steps {
		h := st.Helm
		if h == nil || h.Verify != nil || h.ChartKind() == ChartLocal {
			continue
		}
		if IsGitRepo(h.Repo) {
			// A commit hash names the chart's bytes for ever: it is the
			// pin a git chart can have.
			if g, err := ParseGitRepo(h.Repo); err == nil && !g.PinsCommit() {
				v.errorf(st.Path+".helm.repo", "write ?ref=<full commit hash> (git rev-parse "+g.Ref+"^{commit})",
					"step %s reads its chart from git at %s, which can move, and --require-verified-charts wants every remote chart pinned", st.Name, g.Ref)
			}
			continue
		}
		v.errorf(st.Path+".helm.chart", "add verify: with provenance: {keyring: ...} or cosign:, see docs/supply-chain.md",
			"step %s installs %s unverified, and --require-verified-charts wants every remote chart verified", st.Name, h.Chart)
	}
	return v.probs
}
