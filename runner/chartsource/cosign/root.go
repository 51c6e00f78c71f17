package cosign

import (
	_ "embed"
	"fmt"
	"sync"

	"github.com/sigstore/sigstore-go/pkg/root"
)

// publicGoodRoot is Sigstore's public-good trusted root (Fulcio CAs, Rekor
// and CT log keys), copied from sigstore-go v1.3.0's module source,
// examples/trusted-root-public-good.json (identical to its
// pkg/testing/data/trusted-roots/public-good.json). It is the default for
// keyless signatures; a policy's TrustedRoot replaces it, e.g. for a
// private Sigstore or log shards newer than this copy.
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
