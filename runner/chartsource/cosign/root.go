package cosign

import (
	_ "embed"
	"fmt"
	"sync"

	"github.com/sigstore/sigstore-go/pkg/root"
)

// publicGoodRoot is Sigstore's public-good trusted root (Fulcio CAs, the
// Rekor v1 log, CT logs, the timestamp authority), copied from sigstore-go
// v1.3.0's module source, examples/trusted-root-public-good.json (the same
// bytes as its pkg/testing/data/trusted-roots/public-good.json, as in
// v1.4.0, and as sigstore/sigstore v1.10.8's embedded TUF target). It is
// the default for keyless signatures. It names no Rekor v2 log shard: a
// signature logged there needs a current trusted_root.json as the policy's
// TrustedRoot (from Sigstore's TUF repository, or a private Sigstore's).
//
//go:embed trusted_root.json
var publicGoodRoot []byte

var (
	publicGoodOnce   sync.Once
	publicGoodParsed *root.TrustedRoot
	publicGoodErr    error
)

// trustedRoot parses a trusted_root.json; nil is the embedded public-good
// root, parsed once per process.
func trustedRoot(data []byte) (root.TrustedMaterial, error) {
	if data == nil {
		publicGoodOnce.Do(func() { publicGoodParsed, publicGoodErr = root.NewTrustedRootFromJSON(publicGoodRoot) })
		if publicGoodErr != nil {
			return nil, fmt.Errorf("khook's embedded Sigstore trusted root does not parse: %w", publicGoodErr)
		}
		return publicGoodParsed, nil
	}
	tr, err := root.NewTrustedRootFromJSON(data)
	if err != nil {
		return nil, fmt.Errorf("the cosign trustedRoot is not a Sigstore trusted_root.json: %w", err)
	}
	return tr, nil
}
