package cosign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
)

// The formats' names in the registry.
const (
	// BundleArtifactType is the artifactType of a cosign v3 signature: a
	// Sigstore bundle in a manifest whose subject is the signed artifact.
	BundleArtifactType = "application/vnd.dev.sigstore.bundle.v0.3+json"
	// SignatureAnnotation holds the base64 signature of a tag-based
	// (sha256-<hex>.sig) signature layer, whose blob is the payload.
	SignatureAnnotation = "dev.cosignproject.cosign/signature"
	// Keyless tag-based signatures carry the Fulcio certificate, its chain
	// and the Rekor entry with its signed entry timestamp.
	CertificateAnnotation = "dev.sigstore.cosign/certificate"
	ChainAnnotation       = "dev.sigstore.cosign/chain"
	RekorBundleAnnotation = "dev.sigstore.cosign/bundle"
)

// maxSignatureBlob bounds what a registry may make khook read per blob.
const maxSignatureBlob = 4 << 20

// candidate is one signature found on the artifact, in either format.
type candidate struct {
	where string // where it was found, for Unverified
	// the bundle format
	bundle []byte
	// the tag-based format
	payload     []byte
	signature   string // base64
	annotations map[string]string
}

// repository opens t with oras-go, as Helm's registry client does.
func repository(t Target) (*remote.Repository, error) {
	repo, err := remote.NewRepository(t.Host + "/" + t.Repository)
	if err != nil {
		return nil, fmt.Errorf("%s is not a valid OCI repository: %w", t, err)
	}
	repo.PlainHTTP = t.PlainHTTP
	client := &auth.Client{Client: &http.Client{Transport: t.Transport}, Cache: auth.NewCache()}
	if t.Username != "" || t.Password != "" {
		client.Credential = auth.StaticCredential(t.Host, auth.Credential{Username: t.Username, Password: t.Password})
	}
	repo.Client = client
	return repo, nil
}

// signatures lists the signatures attached to subject in both formats,
// the two looked up at once.
func signatures(ctx context.Context, repo *remote.Repository, subject ocispec.Descriptor) ([]candidate, error) {
	var (
		wg          sync.WaitGroup
		tagged      []candidate
		taggedError error
	)
	wg.Go(func() { tagged, taggedError = tagSignatures(ctx, repo, subject.Digest) })
	out, err := bundleReferrers(ctx, repo, subject)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if taggedError != nil {
		return nil, taggedError
	}
	return append(out, tagged...), nil
}

// bundleReferrers reads the Sigstore bundles referring to subject; oras-go
// falls back to the sha256-<hex> tag index when the registry has no
// referrers API.
func bundleReferrers(ctx context.Context, repo *remote.Repository, subject ocispec.Descriptor) ([]candidate, error) {
	var refs []ocispec.Descriptor
	err := repo.Referrers(ctx, subject, BundleArtifactType, func(page []ocispec.Descriptor) error {
		refs = append(refs, page...)
		return nil
	})
	if err != nil && !errors.Is(err, errdef.ErrNotFound) {
		return nil, fmt.Errorf("cannot list the referrers of %s@%s: %w", repo.Reference.Registry+"/"+repo.Reference.Repository, subject.Digest, err)
	}
	var out []candidate
	for _, ref := range refs {
		m, err := fetchManifest(ctx, repo, ref)
		if err != nil {
			return nil, err
		}
		for _, layer := range m.Layers {
			if !strings.HasPrefix(layer.MediaType, "application/vnd.dev.sigstore.bundle") {
				continue
			}
			data, err := fetchBlob(ctx, repo, layer)
			if err != nil {
				return nil, err
			}
			out = append(out, candidate{where: "the bundle referrer " + ref.Digest.String(), bundle: data})
		}
	}
	return out, nil
}

// tagSignatures reads the tag-based signatures under sha256-<hex>.sig.
func tagSignatures(ctx context.Context, repo *remote.Repository, subject digest.Digest) ([]candidate, error) {
	tag := subject.Algorithm().String() + "-" + subject.Encoded() + ".sig"
	// One GET for the tag and its manifest.
	desc, rc, err := repo.FetchReference(ctx, tag)
	if errors.Is(err, errdef.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the signature tag %s of %s: %w", tag, repo.Reference.Registry+"/"+repo.Reference.Repository, err)
	}
	defer rc.Close()
	data, err := content.ReadAll(rc, desc)
	if err != nil {
		return nil, fmt.Errorf("cannot read the signature tag %s of %s: %w", tag, repo.Reference.Registry+"/"+repo.Reference.Repository, err)
	}
	m, err := parseManifest(data, desc)
	if err != nil {
		return nil, err
	}
	var out []candidate
	for i, layer := range m.Layers {
		sig, ok := layer.Annotations[SignatureAnnotation]
		if !ok {
			continue
		}
		payload, err := fetchBlob(ctx, repo, layer)
		if err != nil {
			return nil, err
		}
		out = append(out, candidate{where: fmt.Sprintf("layer %d of the tag %s", i+1, tag),
			payload: payload, signature: sig, annotations: layer.Annotations})
	}
	return out, nil
}

func fetchManifest(ctx context.Context, repo *remote.Repository, desc ocispec.Descriptor) (*ocispec.Manifest, error) {
	data, err := fetchBlob(ctx, repo, desc)
	if err != nil {
		return nil, err
	}
	return parseManifest(data, desc)
}

func parseManifest(data []byte, desc ocispec.Descriptor) (*ocispec.Manifest, error) {
	var m ocispec.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("the signature manifest %s is not an OCI manifest: %w", desc.Digest, err)
	}
	return &m, nil
}

// fetchBlob reads a manifest or blob, its size and digest checked.
func fetchBlob(ctx context.Context, repo *remote.Repository, desc ocispec.Descriptor) ([]byte, error) {
	if desc.Size > maxSignatureBlob {
		return nil, fmt.Errorf("the signature object %s is %d bytes, more than the %d khook reads", desc.Digest, desc.Size, maxSignatureBlob)
	}
	data, err := content.FetchAll(ctx, repo, desc)
	if err != nil {
		return nil, fmt.Errorf("cannot read the signature object %s from %s: %w", desc.Digest, repo.Reference.Registry+"/"+repo.Reference.Repository, err)
	}
	return data, nil
}
