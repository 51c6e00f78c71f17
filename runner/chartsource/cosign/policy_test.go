package cosign_test

import (
	"strings"
	"testing"

	"github.com/khook/khook/runner/chartsource/cosign"
)

// TestPolicyValidate: each bad policy is refused offline with a sentence
// naming the field, as spec validation reports it at the step's line.
func TestPolicyValidate(t *testing.T) {
	good := newKey(t)
	tests := []struct {
		name   string
		policy cosign.Policy
		want   string // in the error; "" for a valid policy
	}{
		{"key", cosign.Policy{Keys: [][]byte{good.pem}}, ""},
		{"identity, public-good root", cosign.Policy{Issuer: issuer, Subject: workflow}, ""},
		{"identity by regexp", cosign.Policy{Issuer: issuer, SubjectRegExp: "^https://github.com/org/"}, ""},
		{"nothing", cosign.Policy{}, "names neither a key nor an identity"},
		{"not PEM", cosign.Policy{Keys: [][]byte{good.pem, []byte("ssh-ed25519 AAAA")}}, "cosign key 2 is not a PEM public key"},
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
