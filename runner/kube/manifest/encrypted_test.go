package manifest

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/redact"
	"github.com/khook/khook/spec"
)

// A sops file inside a kustomization (here reached through ../base) is
// opened before the run connects, as a manifest file is: without a key the
// run stops at the step's source line; with one its values are registered
// before any step prints.
func TestOpenEncryptedReadsKustomizations(t *testing.T) {
	enc, key := sopsFixture(t)
	t.Setenv("SOPS_AGE_KEY_FILE", "")
	t.Setenv("SOPS_AGE_KEY", "")
	dir := t.TempDir()
	files := map[string]string{
		"base/secret.enc.yaml":       string(enc),
		"base/kustomization.yaml":    "resources: [secret.enc.yaml]\n",
		"overlay/kustomization.yaml": "resources: [../base]\nnamePrefix: prod-\n",
		"khook.yaml": `apiVersion: khook.io/v1
kind: Khook
metadata: {name: enc}
steps:
  - name: creds
    apply:
      namespace: default
      manifests:
        - kustomize: ./overlay
`,
	}
	for name, text := range files {
		writeFile(t, filepath.Join(dir, name), text)
	}
	s, err := spec.Load(spec.LoadOptions{Files: []string{filepath.Join(dir, "khook.yaml")}})
	if err != nil {
		t.Fatal(err)
	}

	problems := OpenEncrypted(s, redact.New())
	if len(problems) != 1 || !strings.Contains(problems.Error(), "khook.yaml:9:") || !strings.Contains(problems.Error(), "secret.enc.yaml") {
		t.Fatalf("without a key: %v; want one problem at the kustomize source's line naming the file", problems)
	}

	t.Setenv("SOPS_AGE_KEY_FILE", key)
	r := redact.New()
	if problems := OpenEncrypted(s, r); len(problems) != 0 {
		t.Fatalf("with the key: %v", problems)
	}
	if got := r.String("password Db-Passw0rd-7c1e"); got != "password ***" {
		t.Errorf("the decrypted value is not registered: %q", got)
	}
}
