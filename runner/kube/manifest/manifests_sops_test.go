package manifest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/redact"
	"github.com/khook/khook/spec"
)

// The Secret of test/e2e/testdata/sops (only stringData encrypted, for its
// TEST-ONLY age key), as a file and as a kustomization's resource: decrypted
// in memory with a redactor, its values registered; without one (readers
// that want kinds and names) the values stay encrypted.
func TestLoadManifestsOpensSopsFiles(t *testing.T) {
	enc, key := sopsFixture(t)
	t.Setenv("SOPS_AGE_KEY_FILE", key)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "secret.enc.yaml"), string(enc))
	writeFile(t, filepath.Join(dir, "k/secret.enc.yaml"), string(enc))
	writeFile(t, filepath.Join(dir, "k/kustomization.yaml"), "resources: [secret.enc.yaml]\nnamePrefix: k-\n")
	sources := []spec.Source{{File: "secret.enc.yaml"}, {Kustomize: "./k"}}

	r := redact.New()
	objs, err := LoadManifests(context.Background(), dir, sources, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[1].GetName() != "k-db-credentials" {
		t.Fatalf("objects: %d", len(objs))
	}
	for _, o := range objs {
		v, _, _ := unstructured.NestedString(o.Object, "stringData", "password")
		if v != "Db-Passw0rd-7c1e" {
			t.Errorf("%s: password %q; want the decrypted value", o.GetName(), v)
		}
		if _, ok := o.Object["sops"]; ok {
			t.Errorf("%s keeps the sops metadata", o.GetName())
		}
	}
	if got := r.String("Db-Passw0rd-7c1e db-credentials"); got != "*** db-credentials" {
		t.Errorf("masked: %q", got)
	}

	objs, err = LoadManifests(context.Background(), dir, sources[:1], nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(objs[0].Object, "stringData", "password"); len(v) < 4 || v[:4] != "ENC[" {
		t.Errorf("without a redactor the value is %q; want it encrypted", v)
	}
}

// sopsFixture is the encrypted Secret of test/e2e/testdata/sops and the
// path of its TEST-ONLY age key, with an empty HOME so that no key of the
// machine's opens it.
func sopsFixture(t *testing.T) (enc []byte, key string) {
	t.Helper()
	fixtures := filepath.Join("..", "..", "..", "test", "e2e", "testdata", "sops")
	enc, err := os.ReadFile(filepath.Join(fixtures, "secret.enc.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	key, _ = filepath.Abs(filepath.Join(fixtures, "TEST-ONLY-age.key"))
	t.Setenv("HOME", t.TempDir())
	return enc, key
}
