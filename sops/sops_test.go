package sops

import (
	"os"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	gosops "github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/config"
	"github.com/getsops/sops/v3/stores/yaml"

	"github.com/khook/khook/redact"
)

// encrypt does what `sops encrypt --age R --encrypted-regex X` does, in
// process (the e2e tests use the real sops CLI).
func encrypt(t *testing.T, plain, recipient, regex string) []byte {
	t.Helper()
	st := yaml.NewStore(&config.YAMLStoreConfig{})
	branches, err := st.LoadPlainFile([]byte(plain))
	if err != nil {
		t.Fatal(err)
	}
	key, err := sopsage.MasterKeyFromRecipient(recipient)
	if err != nil {
		t.Fatal(err)
	}
	tree := gosops.Tree{Branches: branches, Metadata: gosops.Metadata{
		KeyGroups: []gosops.KeyGroup{{key}}, EncryptedRegex: regex, Version: "3.13.3"}}
	dataKey, errs := tree.GenerateDataKey()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	c := aes.NewCipher()
	mac, err := tree.Encrypt(dataKey, c)
	if err != nil {
		t.Fatal(err)
	}
	tree.Metadata.LastModified = time.Now().UTC()
	if tree.Metadata.MessageAuthenticationCode, err = c.Encrypt(mac, dataKey, tree.Metadata.LastModified.Format(time.RFC3339)); err != nil {
		t.Fatal(err)
	}
	out, err := st.EmitEncryptedFile(tree)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func identity(t *testing.T) *age.X25519Identity {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// isolate keeps sops from the machine's keys (~/.config/sops/age, gpg).
func isolate(t *testing.T) {
	home := t.TempDir()
	for _, k := range []string{"HOME", "XDG_CONFIG_HOME", "GNUPGHOME"} {
		t.Setenv(k, home)
	}
	for _, k := range []string{"SOPS_AGE_KEY", "SOPS_AGE_KEY_FILE", "SOPS_AGE_SSH_PRIVATE_KEY_FILE", "SOPS_AGE_KEY_CMD"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
}

const secretYAML = `apiVersion: v1
kind: Secret
metadata:
  name: db
stringData:
  password: s3cr3t-Pa55word
  port: "on"
`

func TestDecryptRegistersOnlyEncryptedValues(t *testing.T) {
	isolate(t)
	id := identity(t)
	enc := encrypt(t, secretYAML, id.Recipient().String(), "^(data|stringData)$")
	if f, ok := Detect(enc); !ok || f != YAML {
		t.Fatalf("Detect = %q, %v; want yaml", f, ok)
	}
	if strings.Contains(string(enc), "s3cr3t") {
		t.Fatalf("not encrypted:\n%s", enc)
	}
	t.Setenv("SOPS_AGE_KEY", id.String())
	r := redact.New()
	plain, err := Decrypt("secret.enc.yaml", enc, r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(plain), "password: s3cr3t-Pa55word") || strings.Contains(string(plain), "sops:") {
		t.Errorf("plaintext:\n%s", plain)
	}
	if got := r.String("password s3cr3t-Pa55word name db"); got != "password *** name db" {
		t.Errorf("masked: %q (only the encrypted values are secrets, a short flag is not)", got)
	}
}

func TestDecryptFailures(t *testing.T) {
	isolate(t)
	id := identity(t)
	enc := encrypt(t, secretYAML, id.Recipient().String(), "^(data|stringData)$")

	_, err := Decrypt("secret.enc.yaml", enc, redact.New())
	if err == nil || !strings.Contains(err.Error(), "cannot decrypt secret.enc.yaml: no available key opens it; it was encrypted for age "+id.Recipient().String()) {
		t.Errorf("no key: %v", err)
	}
	t.Setenv("SOPS_AGE_KEY", identity(t).String())
	if _, err := Decrypt("secret.enc.yaml", enc, redact.New()); err == nil || !strings.Contains(err.Error(), "no available key opens it") {
		t.Errorf("wrong key: %v", err)
	}
	t.Setenv("SOPS_AGE_KEY", id.String())
	tampered := strings.Replace(string(enc), "name: db", "name: other", 1)
	if _, err := Decrypt("secret.enc.yaml", []byte(tampered), redact.New()); err == nil || !strings.Contains(err.Error(), "refusing secret.enc.yaml: its MAC does not verify") {
		t.Errorf("tampered: %v", err)
	}
}

func TestCheckWithoutKey(t *testing.T) {
	isolate(t)
	id := identity(t)
	enc := encrypt(t, secretYAML, id.Recipient().String(), "^(data|stringData)$")
	out, info, err := Check("secret.enc.yaml", enc)
	if err != nil || info == nil || info.Recipients[0] != "age "+id.Recipient().String() {
		t.Fatalf("Check: %v %+v", err, info)
	}
	if strings.Contains(string(out), "sops:") || !strings.Contains(string(out), "name: db") || !strings.Contains(string(out), "ENC[") {
		t.Errorf("structure:\n%s", out)
	}
	plain := []byte("a: 1\nsops: not-metadata\n")
	if _, ok := Detect(plain); ok {
		t.Error("a key named sops without a mac is not sops metadata")
	}
	if f, ok := Detect([]byte("A=ENC[x]\nsops_mac=ENC[y]\n")); !ok || f != Dotenv {
		t.Errorf("dotenv: %q %v", f, ok)
	}
	if f, ok := Detect([]byte("[x]\na = 1\n[sops]\nmac = ENC[y]\n")); !ok || f != INI {
		t.Errorf("ini: %q %v", f, ok)
	}
}
