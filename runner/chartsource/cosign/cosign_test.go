package cosign_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/khook/khook/runner/chartsource/cosign"
	"github.com/khook/khook/test/chartsrc"
)

const (
	issuer   = "https://token.actions.githubusercontent.com"
	workflow = "https://github.com/org/charts/.github/workflows/release.yaml@refs/heads/main"
	intruder = "https://github.com/evil/charts/.github/workflows/release.yaml@refs/heads/main"
)

// TestVerify signs a chart pushed to the harness's registry in each format,
// with a generated key and keylessly through an offline virtual Sigstore,
// and verifies it against a policy: the good signature names its signer,
// anything else is an *Unverified saying what was required and found.
func TestVerify(t *testing.T) {
	s := newSigners(t)
	good, bad, store, byKey, identity := s.good, s.bad, s.store, s.byKey, s.identity
	tests := []struct {
		name   string
		auth   chartsrc.Auth
		sign   func(t *testing.T, c chartsrc.CosignChart)
		policy cosign.Policy
		signer string // the verified signer; "" when verification fails
		found  string // in the Unverified's Found
	}{
		{name: "key bundle", policy: byKey, signer: "key " + good.Fingerprint(),
			sign: func(t *testing.T, c chartsrc.CosignChart) {
				chartsrc.AttachBundle(t, c, chartsrc.KeyBundle(t, c, good, c.Digest()))
			}},
		{name: "key tag", policy: byKey, signer: "key " + good.Fingerprint(),
			sign: func(t *testing.T, c chartsrc.CosignChart) { chartsrc.SignTagged(t, c, good, c.Digest()) }},
		{name: "key bundle behind registry auth", auth: chartsrc.Auth{Username: "ci", Password: "c0sign-s3cret"}, policy: byKey,
			signer: "key " + good.Fingerprint(),
			sign: func(t *testing.T, c chartsrc.CosignChart) {
				chartsrc.AttachBundle(t, c, chartsrc.KeyBundle(t, c, good, c.Digest()))
			}},
		{name: "second of two keys", policy: cosign.Policy{Keys: [][]byte{bad.PEM, good.PEM}}, signer: "key " + good.Fingerprint(),
			sign: func(t *testing.T, c chartsrc.CosignChart) { chartsrc.SignTagged(t, c, good, c.Digest()) }},
		{name: "keyless bundle", policy: identity, signer: workflow + " issued by " + issuer,
			sign: func(t *testing.T, c chartsrc.CosignChart) {
				chartsrc.AttachBundle(t, c, store.KeylessBundle(t, c, workflow, issuer, c.Digest()))
			}},
		{name: "keyless tag", policy: identity, signer: workflow + " issued by " + issuer,
			sign: func(t *testing.T, c chartsrc.CosignChart) { store.KeylessTagged(t, c, workflow, issuer, c.Digest()) }},
		{name: "keyless subjectRegExp", signer: workflow + " issued by " + issuer,
			policy: cosign.Policy{Issuer: issuer, SubjectRegExp: `^https://github\.com/org/charts/`, TrustedRoot: store.Root},
			sign: func(t *testing.T, c chartsrc.CosignChart) {
				chartsrc.AttachBundle(t, c, store.KeylessBundle(t, c, workflow, issuer, c.Digest()))
			}},
		{name: "key or identity, signed keylessly", policy: cosign.Policy{Keys: [][]byte{good.PEM}, Issuer: issuer, Subject: workflow, TrustedRoot: store.Root},
			signer: workflow + " issued by " + issuer,
			sign:   func(t *testing.T, c chartsrc.CosignChart) { store.KeylessTagged(t, c, workflow, issuer, c.Digest()) }},

		{name: "unsigned", policy: byKey, found: "no cosign signature", sign: func(*testing.T, chartsrc.CosignChart) {}},
		{name: "wrong key bundle", policy: byKey, found: "none of the required keys verifies",
			sign: func(t *testing.T, c chartsrc.CosignChart) {
				chartsrc.AttachBundle(t, c, chartsrc.KeyBundle(t, c, bad, c.Digest()))
			}},
		{name: "wrong key tag", policy: byKey, found: "none of the required keys verifies",
			sign: func(t *testing.T, c chartsrc.CosignChart) { chartsrc.SignTagged(t, c, bad, c.Digest()) }},
		{name: "other identity bundle", policy: identity, found: "a keyless signature by " + intruder + " issued by " + issuer,
			sign: func(t *testing.T, c chartsrc.CosignChart) {
				chartsrc.AttachBundle(t, c, store.KeylessBundle(t, c, intruder, issuer, c.Digest()))
			}},
		{name: "other issuer tag", policy: identity, found: "a keyless signature by " + workflow + " issued by https://accounts.example",
			sign: func(t *testing.T, c chartsrc.CosignChart) {
				store.KeylessTagged(t, c, workflow, "https://accounts.example", c.Digest())
			}},
		{name: "keyless where a key is required", policy: byKey, found: "a keyless signature by " + workflow,
			sign: func(t *testing.T, c chartsrc.CosignChart) {
				chartsrc.AttachBundle(t, c, store.KeylessBundle(t, c, workflow, issuer, c.Digest()))
			}},
		{name: "keyless from another Sigstore", policy: cosign.Policy{Issuer: issuer, Subject: workflow, TrustedRoot: chartsrc.NewSigstore(t).Root},
			found: "a keyless signature by " + workflow + " issued by " + issuer + " that does not verify",
			sign: func(t *testing.T, c chartsrc.CosignChart) {
				chartsrc.AttachBundle(t, c, store.KeylessBundle(t, c, workflow, issuer, c.Digest()))
			}},
		{name: "other digest bundle", policy: byKey, found: "a signature by key " + good.Fingerprint() + " over " + otherDigest,
			sign: func(t *testing.T, c chartsrc.CosignChart) {
				chartsrc.AttachBundle(t, c, chartsrc.KeyBundle(t, c, good, otherDigest))
			}},
		{name: "other digest tag", policy: byKey, found: "a signature by key " + good.Fingerprint() + " over " + otherDigest,
			sign: func(t *testing.T, c chartsrc.CosignChart) { chartsrc.SignTagged(t, c, good, otherDigest) }},
		{name: "other digest keyless", policy: identity, found: "a signature by " + workflow + " issued by " + issuer + " over " + otherDigest,
			sign: func(t *testing.T, c chartsrc.CosignChart) {
				chartsrc.AttachBundle(t, c, store.KeylessBundle(t, c, workflow, issuer, otherDigest))
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := chartsrc.PushCosign(t, tt.auth)
			tt.sign(t, c)
			signer, err := cosign.Verify(context.Background(), c.Target, c.Digest(), tt.policy)
			if tt.signer != "" {
				if err != nil || signer != tt.signer {
					t.Fatalf("Verify = %q, %v; want %q", signer, err, tt.signer)
				}
				return
			}
			var unverified *cosign.Unverified
			if !errors.As(err, &unverified) {
				t.Fatalf("Verify = %q, %v; want an *Unverified", signer, err)
			}
			t.Log(err) // the sentence a user reads
			if !strings.Contains(unverified.Found, tt.found) || unverified.Required == "" ||
				!strings.HasPrefix(err.Error(), c.Target.String()+"@"+c.Digest()+" is not verified: required ") {
				t.Errorf("error %q; want found %q", err, tt.found)
			}
			if tt.auth.Password != "" && strings.Contains(err.Error(), tt.auth.Password) {
				t.Errorf("error %q holds the registry password", err)
			}
		})
	}
}

// TestPolicyValidate: each bad policy is refused offline with a sentence
// naming the field, as spec validation reports it at the step's line.
func TestPolicyValidate(t *testing.T) {
	good := chartsrc.NewCosignKey(t)
	tests := []struct {
		name   string
		policy cosign.Policy
		want   string // in the error; "" for a valid policy
	}{
		{"key", cosign.Policy{Keys: [][]byte{good.PEM}}, ""},
		{"identity, public-good root", cosign.Policy{Issuer: issuer, Subject: workflow}, ""},
		{"identity by regexp", cosign.Policy{Issuer: issuer, SubjectRegExp: "^https://github.com/org/"}, ""},
		{"nothing", cosign.Policy{}, "names neither a key nor an identity"},
		{"not PEM", cosign.Policy{Keys: [][]byte{good.PEM, []byte("ssh-ed25519 AAAA")}}, "cosign key 2 is not a PEM public key"},
		{"PEM that is no key", cosign.Policy{Keys: [][]byte{[]byte("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")}}, "cosign key 1 is not a PEM public key"},
		{"no issuer", cosign.Policy{Subject: workflow}, "has no issuer"},
		{"no subject", cosign.Policy{Issuer: issuer}, "has no subject"},
		{"both subjects", cosign.Policy{Issuer: issuer, Subject: workflow, SubjectRegExp: ".*"}, "both subject and subjectRegExp"},
		{"bad regexp", cosign.Policy{Issuer: issuer, SubjectRegExp: "("}, "subjectRegExp \"(\" does not compile"},
		{"bad trusted root", cosign.Policy{Issuer: issuer, Subject: workflow, TrustedRoot: []byte("{}")}, "trustedRoot is not a Sigstore trusted_root.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.policy.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate = %v; want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Validate = %v; want %q", err, tt.want)
			case err != nil && strings.Count(err.Error(), "\n") > 0:
				t.Fatalf("Validate = %q; want one line", err)
			}
		})
	}
}
