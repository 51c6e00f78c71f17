package cosign_test

import (
	"strings"
	"testing"

	"github.com/khook/khook/runner/chartsource/cosign"
	"github.com/khook/khook/test/chartsrc"
)

// The signing itself is test/chartsrc's (cosign.go): the e2e tests sign
// the same way through the khook binary.

// authNone is a registry without authentication.
var authNone = chartsrc.Auth{}

// otherDigest is a manifest digest that is not the chart's.
var otherDigest = "sha256:" + strings.Repeat("ab", 32)

// signers are the keys and the offline Sigstore a test signs with, and
// the policies that trust good and the workflow identity.
type signers struct {
	good, bad       chartsrc.CosignKey
	store           chartsrc.Sigstore
	byKey, identity cosign.Policy
}

func newSigners(tb testing.TB) signers {
	s := signers{good: chartsrc.NewCosignKey(tb), bad: chartsrc.NewCosignKey(tb), store: chartsrc.NewSigstore(tb)}
	s.byKey = cosign.Policy{Keys: [][]byte{s.good.PEM}}
	s.identity = cosign.Policy{Issuer: issuer, Subject: workflow, TrustedRoot: s.store.Root}
	return s
}
