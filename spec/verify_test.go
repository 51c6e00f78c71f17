package spec

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
)

// writeVerifyKeys writes a real keyring, a cosign public key and a private
// key into dir.
func writeVerifyKeys(t *testing.T, dir string) {
	t.Helper()
	ent, err := openpgp.NewEntity("Chart Signer", "", "signer@example.com", nil)
	if err != nil {
		t.Fatal(err)
	}
	var ring bytes.Buffer
	if err := ent.Serialize(&ring); err != nil {
		t.Fatal(err)
	}
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	pub, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	priv, _ := x509.MarshalECPrivateKey(k)
	for name, data := range map[string][]byte{
		"pubring.gpg": ring.Bytes(),
		"cosign.pub":  pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}),
		"cosign.key":  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: priv}),
		"notkeys.txt": []byte("just some text\n"),
		"root.json":   []byte(`{"mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1"}`),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

const verifyHead = "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: m}\nsteps:\n"

func TestVerifyAccepted(t *testing.T) {
	dir := t.TempDir()
	writeVerifyKeys(t, dir)
	spec := verifyHead + `  - name: http
    helm:
      chart: demo
      repo: https://charts.example
      version: 1.0.0
      verify:
        provenance: {keyring: ./pubring.gpg}
  - name: oci
    helm:
      chart: oci://registry.example/charts/demo:1.0.0
      verify:
        provenance: {keyring: ./pubring.gpg}
        cosign: {key: ./cosign.pub, trustedRoot: ./root.json}
  - name: keyless
    helm:
      chart: oci://registry.example/charts/demo:1.0.0
      verify:
        cosign:
          identity: {issuer: https://token.actions.githubusercontent.com, subjectRegExp: "^https://github.com/org/"}
  - name: tgz
    helm:
      chart: ./demo-1.0.0.tgz
      verify: {provenance: {keyring: ./pubring.gpg}}
`
	f := filepath.Join(dir, "khook.yaml")
	os.WriteFile(f, []byte(spec), 0o644)
	s, err := Load(LoadOptions{Files: []string{f}})
	if err != nil {
		t.Fatal(err)
	}
	if v := s.Steps[1].Helm.Verify; v.Cosign.Key != "./cosign.pub" || v.Provenance.Keyring != "./pubring.gpg" {
		t.Errorf("verify decoded as %+v", v)
	}
}

// Every problem of every verify: block at once, each one sentence at its line.
func TestVerifyRefused(t *testing.T) {
	dir := t.TempDir()
	writeVerifyKeys(t, dir)
	spec := verifyHead + `  - name: a
    helm:
      chart: oci://registry.example/charts/demo:1.0.0
      verify:
        provenance: {keyring: ./notkeys.txt}
        cosign:
          key: ./cosign.key
  - name: b
    helm:
      chart: oci://registry.example/charts/demo:1.0.0
      verify:
        cosign:
          identity: {subject: me@example.com}
  - name: c
    helm:
      chart: ./charts/demo
      verify: {provenance: {keyring: ./pubring.gpg}}
  - name: d
    helm:
      chart: demo
      repo: https://charts.example
      verify:
        cosign: {keys: [./notkeys.txt]}
  - name: e
    helm:
      chart: oci://registry.example/charts/demo:1.0.0
      verify: {}
`
	f := filepath.Join(dir, "khook.yaml")
	os.WriteFile(f, []byte(spec), 0o644)
	_, err := Load(LoadOptions{Files: []string{f}})
	var probs Problems
	if !errors.As(err, &probs) {
		t.Fatalf("want problems, got %v", err)
	}
	got := probs.Error()
	t.Log(got)
	for _, want := range []string{
		"khook.yaml:9:31: steps.0.helm.verify.provenance.keyring: ./notkeys.txt is not an OpenPGP keyring",
		"khook.yaml:11:16: steps.0.helm.verify.cosign.key: ./cosign.key holds a PEM block of type EC PRIVATE KEY, not PUBLIC KEY",
		"khook.yaml:17:11: steps.1.helm.verify.cosign.identity.issuer: an identity needs issuer:",
		"khook.yaml:21:7: steps.2.helm.verify: a local chart directory ./charts/demo has no signature to verify",
		"khook.yaml:27:9: steps.3.helm.verify.cosign: cosign signatures are verified for oci:// charts only",
		"steps.3.helm.verify.cosign.keys.0: ./notkeys.txt is not PEM",
		"khook.yaml:31:7: steps.4.helm.verify: says nothing to verify",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q", want)
		}
	}
}

func TestRequireVerifiedCharts(t *testing.T) {
	dir := t.TempDir()
	writeVerifyKeys(t, dir)
	spec := verifyHead + `  - name: bare
    helm: {chart: demo, repo: https://charts.example, version: 1.0.0}
  - name: signed
    helm: {chart: oci://r.example/c/demo:1.0.0, verify: {provenance: {keyring: ./pubring.gpg}}}
  - name: local
    helm: {chart: ./charts/demo}
`
	f := filepath.Join(dir, "khook.yaml")
	os.WriteFile(f, []byte(spec), 0o644)
	if _, err := Load(LoadOptions{Files: []string{f}}); err != nil {
		t.Fatalf("without the option: %v", err)
	}
	_, err := Load(LoadOptions{Files: []string{f}, RequireVerifiedCharts: true})
	var probs Problems
	if !errors.As(err, &probs) || len(probs) != 1 || !strings.Contains(probs[0].String(), "khook.yaml:6:19: steps.0.helm.chart: step bare installs demo unverified") {
		t.Errorf("want one problem for step bare, got %v", err)
	}
}
