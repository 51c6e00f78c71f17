package helmfile

import (
	"bytes"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/khook/khook/internal/importer"
)

// secretRead is a file the helmfile read (readFile, a set file:) whose
// content is a secret. The content decides first, whatever the file's
// name: a PEM private key is a secret, and a file of nothing but
// certificates and public keys (wire-server's elasticsearch-ca.pem, a CA
// bundle) is not (trial 46m's D4). Else: a registry's docker config (its
// "auths" hold credentials), a file named like a secret (tls.key, token,
// id_rsa, id_ed25519, ca.pem, …; not id_rsa.pub, a public key), or one set
// under a secret-looking name (pullSecret.data).
func secretRead(rd *fileRead) bool {
	if strings.Contains(rd.text, "PRIVATE KEY-----") {
		return true
	}
	if publicPEM(rd.text) {
		return false
	}
	base := filepath.Base(rd.path)
	return rd.secret || strings.Contains(rd.text, `"auths"`) || importer.SecretLooking(base) ||
		strings.HasPrefix(base, "id_") && !strings.HasSuffix(base, ".pub") || strings.HasSuffix(base, ".pem") || strings.HasSuffix(base, ".p12")
}

// publicPEM says whether text is one or more PEM blocks that are all
// certificates or public keys (CERTIFICATE, TRUSTED CERTIFICATE, PUBLIC
// KEY, RSA PUBLIC KEY), with nothing between and around them but blank
// lines and # comments (a CA bundle's): public by its content.
func publicPEM(text string) bool {
	rest, n := []byte(text), 0
	for {
		block, after := pem.Decode(rest)
		if block == nil {
			break
		}
		if !strings.HasSuffix(block.Type, "CERTIFICATE") && !strings.HasSuffix(block.Type, "PUBLIC KEY") {
			return false
		}
		// What pem.Decode skipped before the block must be blank or comments.
		if !blankOrComments(string(rest[:bytes.Index(rest, []byte("-----BEGIN"))])) {
			return false
		}
		rest, n = after, n+1
	}
	return n > 0 && blankOrComments(string(rest))
}

func blankOrComments(s string) bool {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}

// camelWords splits a camelCase key into words (pullSecret → pull_Secret)
// for SecretLooking, which splits on what is not a letter or digit.
func camelWords(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' && s[i-1] >= 'a' && s[i-1] <= 'z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// secretReads writes the content of each secret file the helmfile read
// into a release's values as ${NAME}, a secret variable the run sets
// (KHOOK_SECRET_NAME): the key itself never lands in the spec.
func (c *converter) secretReads() {
	for _, rd := range c.r.reads {
		text := strings.TrimSpace(rd.text)
		if !secretRead(rd) || len(text) < 4 {
			continue
		}
		name := varName(filepath.Base(rd.path))
		used := false
		for _, r := range c.rels {
			for _, st := range r.steps() {
				if st.Helm != nil && st.Helm.Values != nil {
					st.Helm.Values = replaceSub(st.Helm.Values, text, "${"+name+"}", &used).(map[string]any)
				}
			}
		}
		if !used || declared(c.res.Vars, name) {
			continue
		}
		shown := c.l.display(rd.path)
		c.res.Vars = append(c.res.Vars, &importer.Var{Name: name, Secret: true, From: importer.Loc{File: c.top},
			Description: "the content of " + shown + ", a secret the helmfile reads (set KHOOK_SECRET_" + name + ")"})
		c.res.Info = append(c.res.Info, Note{Loc: importer.Loc{File: shown}, What: "readFile " + shown,
			Why: "a secret: written as the secret variable " + name + " (KHOOK_SECRET_" + name + "), never its content"})
	}
}

// varName is a file name as a variable name: tls.key → TLS_KEY.
func varName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else if b.Len() > 0 {
			b.WriteRune('_')
		}
	}
	return strings.Trim(b.String(), "_")
}

// leaked fails closed: no secret the import read — a decrypted
// environment secret, a secret-looking environment variable's value, a
// secret file's content — is in the spec or a file beside it.
func (c *converter) leaked(doc []byte) error {
	type secret struct{ value, from, fix string }
	var secrets []secret
	for value, file := range c.l.secrets {
		secrets = append(secrets, secret{value, "a value of the environment's secrets file " + file, "put it in a sops-encrypted values file the release lists under secrets:"})
	}
	for _, e := range c.r.vars() {
		if e.set && len(e.value) >= 4 && importer.SecretLooking(e.name) {
			secrets = append(secrets, secret{e.value, "the value of the environment variable " + e.name, "use it where the import can write ${" + e.name + "} (a values entry of its own)"})
		}
	}
	for _, rd := range c.r.reads {
		if text := strings.TrimSpace(rd.text); secretRead(rd) && len(text) >= 4 {
			from, fix := "the content of "+c.l.display(rd.path), "read it in a values entry of its own, or from a sops-encrypted values file"
			secrets = append(secrets, secret{text, from, fix})
			if text != rd.text { // b64enc of the file as read, newline and all
				secrets = append(secrets, secret{base64.StdEncoding.EncodeToString([]byte(rd.text)), from + " (base64-encoded)", fix})
			}
		}
	}
	for value, name := range c.derived {
		secrets = append(secrets, secret{value, "a value derived from a secret environment variable (the secret variable " + name + ")", "read it in a values entry of its own"})
	}
	for _, s := range secrets {
		for _, f := range append([]File{{Path: "the spec", Data: doc}}, c.files...) {
			for _, needle := range needles(s.value) {
				if bytes.Contains(f.Data, []byte(needle)) {
					return fmt.Errorf("%s: %s would be written in plaintext into %s; %s, nothing written", c.top, s.from, f.Path, s.fix)
				}
			}
		}
	}
	return nil
}

// needles are what of a secret value would show in YAML: the value, its
// base64 (b64enc, a Secret's data), and each line of a multi-line one (a
// block scalar indents them), PEM armour lines aside.
func needles(v string) []string {
	out := []string{v, base64.StdEncoding.EncodeToString([]byte(v))}
	if !strings.Contains(v, "\n") {
		return out
	}
	for _, l := range strings.Split(v, "\n") {
		if l = strings.TrimSpace(l); len(l) >= 12 && !strings.HasPrefix(l, "-----") {
			out = append(out, l)
		}
	}
	return out
}
