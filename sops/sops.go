// Package sops opens sops-encrypted files in memory: the values files,
// manifests and var-files khook reads. A file is recognised by its sops
// metadata, never by its name; every value decryption yields is registered
// with the run's redactor before the plaintext leaves this package, and the
// plaintext is never written anywhere.
//
// May import: redact and the sops library. spec does not import it: its
// callers pass Open as spec.LoadOptions.Decrypt.
package sops

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	gosops "github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	"github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/config"
	"github.com/getsops/sops/v3/keyservice"
	"github.com/getsops/sops/v3/logging"
	"github.com/getsops/sops/v3/pgp"
	"github.com/getsops/sops/v3/stores/dotenv"
	"github.com/getsops/sops/v3/stores/ini"
	"github.com/getsops/sops/v3/stores/json"
	"github.com/getsops/sops/v3/stores/yaml"
	"github.com/sirupsen/logrus"
	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/khook/khook/redact"
)

func init() {
	// sops logs to stderr on its own; khook's output goes through the
	// redactor only, and every failure comes back as an error.
	logging.SetLevel(logrus.PanicLevel)
}

// Format is the sops store of a file.
type Format string

const (
	YAML   Format = "yaml"
	JSON   Format = "json"
	Dotenv Format = "dotenv"
	INI    Format = "ini"
)

type store interface {
	LoadEncryptedFile(in []byte) (gosops.Tree, error)
	EmitPlainFile(branches gosops.TreeBranches) ([]byte, error)
}

func storeFor(f Format) store {
	switch f {
	case JSON:
		return json.NewStore(&config.JSONStoreConfig{})
	case Dotenv:
		return dotenv.NewStore(&config.DotenvStoreConfig{})
	case INI:
		return ini.NewStore(&config.INIStoreConfig{})
	}
	return yaml.NewStore(&config.YAMLStoreConfig{})
}

// Detect says whether data is a sops-encrypted file, and in which format:
// a top-level sops: map holding a mac (YAML, JSON; any document of a
// multi-document YAML file), a sops_mac= line (dotenv) or a [sops] section
// with a mac (INI).
func Detect(data []byte) (Format, bool) {
	if !bytes.Contains(data, []byte("sops")) {
		return "", false
	}
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			break
		}
		if m, ok := doc["sops"].(map[string]any); ok {
			if _, ok := m["mac"]; ok {
				if bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
					return JSON, true
				}
				return YAML, true
			}
		}
	}
	inSops := false
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "sops_mac="):
			return Dotenv, true
		case strings.HasPrefix(line, "["):
			inSops = line == "[sops]"
		case inSops && (strings.HasPrefix(line, "mac=") || strings.HasPrefix(line, "mac =")):
			return INI, true
		}
	}
	return "", false
}

// File says whether the file at path (relative to baseDir) is
// sops-encrypted; a file that cannot be read is not, and is left to its
// reader to report.
func File(baseDir, path string) bool {
	if !filepath.IsAbs(path) {
		path = filepath.Join(baseDir, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	_, ok := Detect(data)
	return ok
}

// Open is Decrypt that also says whether data was encrypted, as
// spec.LoadOptions.Decrypt asks.
func Open(file string, data []byte, r *redact.Redactor) (plain []byte, encrypted bool, err error) {
	if _, ok := Detect(data); !ok {
		return data, false, nil
	}
	plain, err = Decrypt(file, data, r)
	return plain, true, err
}

// Decrypt returns the plaintext of a sops-encrypted file, in its own
// format, or data as it is when it is not encrypted. Each value decryption
// yields is registered with r first. file names the file in errors: a key
// that opens it is missing (the sentence names the recipients it was
// encrypted for), or its MAC does not verify (edited without sops).
func Decrypt(file string, data []byte, r *redact.Redactor) ([]byte, error) {
	f, ok := Detect(data)
	if !ok {
		return data, nil
	}
	if r == nil {
		return nil, fmt.Errorf("%s is sops-encrypted, and this reader has no redactor to mask its values", file)
	}
	st := storeFor(f)
	tree, err := st.LoadEncryptedFile(data)
	if err != nil {
		return nil, fmt.Errorf("%s has sops metadata but is not a valid sops %s file: %v", file, f, err)
	}
	before := leaves(tree.Branches)
	key, err := dataKey(&tree.Metadata)
	if err != nil {
		return nil, fmt.Errorf("cannot decrypt %s: no available key opens it; it was encrypted for %s (give one of their keys: SOPS_AGE_KEY, SOPS_AGE_KEY_FILE, SOPS_AGE_SSH_PRIVATE_KEY_FILE, the PGP keyring, or the cloud KMS credentials)",
			file, strings.Join(Recipients(tree.Metadata), ", "))
	}
	cipher := aes.NewCipher()
	mac, err := tree.Decrypt(key, cipher)
	if err != nil {
		return nil, fmt.Errorf("refusing %s: a value does not decrypt with its data key, so the file was edited without sops (re-create the value with sops edit)", file)
	}
	fileMac, err := cipher.Decrypt(tree.Metadata.MessageAuthenticationCode, key, tree.Metadata.LastModified.Format(time.RFC3339))
	if err != nil || fileMac != mac {
		return nil, fmt.Errorf("refusing %s: its MAC does not verify, so the file was edited without sops (edit it with sops edit, or re-encrypt it)", file)
	}
	after := leaves(tree.Branches)
	for i, v := range after {
		// Only what was encrypted is secret: names and labels a
		// creation rule leaves in clear stay readable in the output.
		if i < len(before) && before[i].encrypted {
			r.Found(v.text)
		}
	}
	out, err := st.EmitPlainFile(tree.Branches)
	if err != nil {
		return nil, fmt.Errorf("cannot re-encode the decrypted %s: %s", file, r.String(err.Error()))
	}
	return out, nil
}

// dataKey asks the file's keys for its data key, the way sops does (the
// age, PGP and cloud KMS key sources read their keys from the environment).
// A blank SOPS_AGE_KEY_CMD makes sops v3.13 panic: it is left out, and any
// other panic in the library is an error, not a crash.
func dataKey(m *gosops.Metadata) (key []byte, err error) {
	if v, ok := os.LookupEnv(age.SopsAgeKeyCmdEnv); ok && strings.TrimSpace(v) == "" {
		os.Unsetenv(age.SopsAgeKeyCmdEnv)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the sops library failed: %v", p)
		}
	}()
	return m.GetDataKeyWithKeyServices([]keyservice.KeyServiceClient{keyservice.NewLocalClient()}, nil)
}

// Info is what a sops file says about itself without a key.
type Info struct {
	Format     Format
	Recipients []string
}

// Check reads a sops-encrypted file's structure without any key: its
// metadata parses and names at least one recipient. It returns the file
// without its sops metadata and with its values still encrypted (enough
// for kinds, names and keys), or data and nil for a file not encrypted.
func Check(file string, data []byte) ([]byte, *Info, error) {
	f, ok := Detect(data)
	if !ok {
		return data, nil, nil
	}
	st := storeFor(f)
	tree, err := st.LoadEncryptedFile(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s has sops metadata but is not a valid sops %s file: %v", file, f, err)
	}
	rs := Recipients(tree.Metadata)
	if len(rs) == 0 {
		return nil, nil, fmt.Errorf("%s has sops metadata but names no key it was encrypted for", file)
	}
	out, err := st.EmitPlainFile(tree.Branches)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot re-encode %s without its sops metadata: %v", file, err)
	}
	return out, &Info{Format: f, Recipients: rs}, nil
}

// Recipients names the keys a file was encrypted for: age recipients, PGP
// fingerprints, and the cloud KMS keys as sops names them.
func Recipients(m gosops.Metadata) []string {
	var out []string
	for _, g := range m.KeyGroups {
		for _, k := range g {
			switch k := k.(type) {
			case *age.MasterKey:
				out = append(out, "age "+k.Recipient)
			case *pgp.MasterKey:
				out = append(out, "PGP "+k.Fingerprint)
			default:
				out = append(out, k.TypeToIdentifier()+" "+k.ToString())
			}
		}
	}
	return out
}

type leaf struct {
	text      string
	encrypted bool
}

// leaves lists a tree's scalar values in walk order, the same order before
// and after decryption, so the two lists line up.
func leaves(bs gosops.TreeBranches) []leaf {
	var out []leaf
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case gosops.TreeBranch:
			for _, it := range v {
				if _, ok := it.Key.(gosops.Comment); ok {
					continue
				}
				walk(it.Value)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		case gosops.Comment:
		case nil:
		default:
			s := fmt.Sprint(v)
			out = append(out, leaf{text: s, encrypted: strings.HasPrefix(s, "ENC[")})
		}
	}
	for _, b := range bs {
		walk(b)
	}
	return out
}
