package chartsrc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/registry"
	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// Signer is an OpenPGP key made in the test: its secret keyring signs
// charts as `helm package --sign` does, its public keyring is what a
// verify.provenance.keyring names.
type Signer struct {
	Name                   string
	Entity                 *openpgp.Entity
	SecretRing, PublicRing string // files
	Fingerprint            string // upper-case hex, as khook names a signer
}

// NewSigner makes a key named name (an unencrypted key, so signing needs no
// passphrase) and writes its keyrings into a temp dir.
func NewSigner(t testing.TB, name string) *Signer {
	t.Helper()
	ent, err := openpgp.NewEntity(name, "test", "signer@example.com", nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s := &Signer{Name: name, Entity: ent, SecretRing: filepath.Join(dir, "secring.gpg"), PublicRing: filepath.Join(dir, "pubring.gpg"),
		Fingerprint: fmt.Sprintf("%X", ent.PrimaryKey.Fingerprint)}
	var sec, pub bytes.Buffer
	if err := ent.SerializePrivate(&sec, nil); err != nil {
		t.Fatal(err)
	}
	if err := ent.Serialize(&pub); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.SecretRing, sec.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.PublicRing, pub.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

// Sign writes tgz.prov with Helm's own signing (action.Package.Clearsign,
// what helm package --sign runs) and returns the .prov's path.
func (s *Signer) Sign(t testing.TB, tgz string) string {
	t.Helper()
	p := &action.Package{Keyring: s.SecretRing, Key: s.Name}
	if err := p.Clearsign(tgz); err != nil {
		t.Fatalf("chartsrc: cannot sign %s: %v", tgz, err)
	}
	return tgz + ".prov"
}

// ServeDir serves dir's packaged charts (and any .prov beside them) as a
// repository with an index.
func ServeDir(t testing.TB, auth Auth, dir string) *HTTPRepo {
	t.Helper()
	r := serveRepoDir(t, auth, dir)
	r.dir = dir
	return r
}

// Dir is the directory a ServeDir repository serves.
func (r *HTTPRepo) Dir() string { return r.dir }

// Reindex writes the repository's index.yaml again from its directory: a
// chart re-published with other bytes under the same version.
func (r *HTTPRepo) Reindex(t testing.TB) {
	t.Helper()
	idx, err := repo.IndexDirectory(r.dir, "")
	if err != nil {
		t.Fatalf("chartsrc: cannot index %s: %v", r.dir, err)
	}
	idx.SortEntries()
	if err := idx.WriteFile(filepath.Join(r.dir, "index.yaml"), 0o644); err != nil {
		t.Fatalf("chartsrc: cannot write index.yaml: %v", err)
	}
}

// PushSigned pushes a packaged chart with its .prov as the manifest's
// provenance layer (helm push of a signed package) and returns the
// reference without version.
func (r *OCIRegistry) PushSigned(t testing.TB, tgz, prov string) string {
	t.Helper()
	data, err := os.ReadFile(tgz)
	if err != nil {
		t.Fatal(err)
	}
	provData, err := os.ReadFile(prov)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := loader.Load(tgz)
	if err != nil {
		t.Fatalf("chartsrc: cannot load %s: %v", tgz, err)
	}
	ref := fmt.Sprintf("%s/charts/%s:%s", r.Host, ch.Metadata.Name, ch.Metadata.Version)
	if _, err := r.Client(t).Push(data, ref, registry.PushOptProvData(provData)); err != nil {
		t.Fatalf("chartsrc: cannot push %s: %v", ref, err)
	}
	return r.URL() + "/" + ch.Metadata.Name
}
