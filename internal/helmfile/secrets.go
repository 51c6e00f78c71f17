package helmfile

import (
	"bytes"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/khook/khook/internal/importer"
	yaml "go.yaml.in/yaml/v3"
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
	if importer.PrivateKey(rd.text) {
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

// secretReads writes the content of each secret file the helmfile read
// into a release's values as ${NAME}, a secret variable the run sets
// (KHOOK_SECRET_NAME, the file's content): the key itself never lands in
// the spec. khook substitutes variables in the spec only, never in a
// values file (runner/chartsource reads valuesFrom files as they are), so
// what a values file the import generates holds of a secret moves into
// the step's values: first, as deriveSecrets moves a derived value; where
// a later values source of the step sets it too (moved, it would win
// where helm lets the later one win), or where no reference can stand for
// it, it is left out and only that release is partial, at its line.
func (c *converter) secretReads() {
	for _, rd := range c.r.reads {
		text := strings.TrimSpace(rd.text)
		if !secretRead(rd) || len(text) < 4 {
			continue
		}
		sf := secretFile{name: varName(filepath.Base(rd.path)), text: text, read: rd.text}
		shown := c.l.display(rd.path)
		if !c.writeRefs(sf, "the content of "+shown) || declared(c.res.Vars, sf.name) {
			continue
		}
		c.res.Vars = append(c.res.Vars, &importer.Var{Name: sf.name, Secret: true, From: importer.Loc{File: c.top},
			Description: "the content of " + shown + ", a secret the helmfile reads (set KHOOK_SECRET_" + sf.name + ")"})
		c.res.Info = append(c.res.Info, Note{Loc: importer.Loc{File: shown}, What: "readFile " + shown,
			Why: "a secret: written as the secret variable " + sf.name + " (KHOOK_SECRET_" + sf.name + "), never its content"})
	}
}

// writeRefs writes each value that holds sf's secret (what: what it is)
// as a reference to its variable, or leaves it out, partial at its line;
// used says whether a reference was written.
func (c *converter) writeRefs(sf secretFile, what string) (used bool) {
	c.moveSecret(sf, what)
	for _, r := range c.rels {
		for _, st := range r.steps() {
			if st.Helm == nil || st.Helm.Values == nil {
				continue
			}
			for _, path := range sf.refsIn(st.Helm.Values, nil, &used) {
				c.note(r, "values", "values "+dotted(path), "it holds "+what+", a secret, in a form no ${"+sf.name+"} reference can be written as; left out, never written")
			}
		}
	}
	return used
}

// moveSecret moves each value of a generated values file that holds the
// secret file's content into its step's values:, where refsIn then writes
// the reference (wire-server's certs values template, trial 46m's D4).
func (c *converter) moveSecret(sf secretFile, what string) {
	d := &deriver{c: c}
	for i := range c.files {
		f := &c.files[i]
		var m map[string]any
		if yaml.Unmarshal(f.Data, &m) != nil || m == nil {
			continue // not values; leaked still guards it
		}
		paths := leafPaths(m, func(v any, _ []string) bool { return sf.in(v) })
		if len(paths) == 0 {
			continue
		}
		r, h, at := d.owner(f.Path)
		for _, path := range paths {
			value, _ := lookupPath(m, path)
			deletePath(m, path)
			if h == nil {
				continue // read by no step: only left out
			}
			if err := d.later(h, at, path); err != nil {
				c.note(r, "values", "values "+dotted(path)+" (in "+f.Path+")", "it holds "+what+", a secret, which khook substitutes only in the step's values:, where it would win over a later values source ("+strings.TrimPrefix(err.Error(), dotted(path)+": ")+"); left out, never written: write it in values: as ${"+sf.name+"} if the later value is not meant to win")
				continue
			}
			if overridden(h.Values, path) {
				continue // the release's own values: or set: replace it anyway
			}
			if h.Values == nil {
				h.Values = map[string]any{}
			}
			setPath(h.Values, path, value)
		}
		head, _, _ := strings.Cut(string(f.Data), "\n")
		body, err := toYaml(m)
		if err != nil {
			continue
		}
		f.Data = []byte(head + "\n" + body)
	}
}

// leafPaths are the paths of m's values that are not maps (a list is
// one: helm replaces a list whole) for which holds is true.
func leafPaths(m map[string]any, holds func(v any, path []string) bool) [][]string {
	var paths [][]string
	var find func(v any, path []string)
	find = func(v any, path []string) {
		if t, ok := v.(map[string]any); ok {
			for k, x := range t {
				find(x, append(slices.Clone(path), k))
			}
			return
		}
		if holds(v, path) {
			paths = append(paths, path)
		}
	}
	find(m, nil)
	return paths
}

// secretFile is a secret file the helmfile read: its variable's name,
// its content as the variable holds it (trimmed, as "$(cat FILE)" gives
// it) and as read.
type secretFile struct {
	name, text, read string
	whole            bool // only a value that is the secret, not one that holds it
}

// in says whether v (a string, or a list holding one) holds the content or
// its base64 (b64enc of the file as read, or trimmed).
func (s secretFile) in(v any) bool {
	switch t := v.(type) {
	case string:
		if s.whole {
			return t == s.text
		}
		return strings.Contains(t, s.text) || strings.Contains(t, base64.StdEncoding.EncodeToString([]byte(s.read))) ||
			strings.Contains(t, base64.StdEncoding.EncodeToString([]byte(s.text)))
	case []any:
		for _, x := range t {
			if s.in(x) {
				return true
			}
		}
	case map[string]any:
		for _, x := range t {
			if s.in(x) {
				return true
			}
		}
	}
	return false
}

// refsIn writes the secret in every string of values as a reference to
// its variable (used says one was written); a value no reference can
// stand for is deleted, a list whole, and its path returned.
func (s secretFile) refsIn(values map[string]any, path []string, used *bool) (lost [][]string) {
	for k, v := range values {
		p := append(slices.Clone(path), k)
		switch t := v.(type) {
		case map[string]any:
			lost = append(lost, s.refsIn(t, p, used)...)
		case []any, string:
			if !s.in(t) {
				continue
			}
			out, ok := s.refs(t)
			if !ok {
				delete(values, k)
				lost = append(lost, p)
				continue
			}
			values[k], *used = out, true
		}
	}
	return lost
}

func (s secretFile) refs(v any) (any, bool) {
	switch t := v.(type) {
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			y, ok := s.refs(x)
			if !ok {
				return nil, false
			}
			out[i] = y
		}
		return out, true
	case map[string]any:
		var used bool
		if len(s.refsIn(t, nil, &used)) > 0 {
			return nil, false
		}
		return t, true
	case string:
		return s.ref(t)
	}
	return v, true
}

// ref is str with the secret written as a reference to its variable,
// which holds the trimmed content. Its base64 (b64enc of the file as
// read, newline and all) is ${NAME|printf "%s\n"|b64enc}, where it stands.
// The content itself cannot be substituted into a YAML scalar as it is
// (khook substitutes the spec's text before parsing it: a block scalar's
// later lines would lose their indentation, a {"auths": …} would parse as
// a map), so the string as a whole becomes one JSON string, a YAML
// double-quoted scalar: ${NAME|printf "BEFORE%sAFTER"|toJson}; a single
// line that cannot (a } around it) stays ${NAME} where it stands. False
// when no reference can be written (several lines, and the secret twice
// in the string or a } around it).
func (s secretFile) ref(str string) (string, bool) {
	for _, raw := range []string{s.read, s.text} {
		b := base64.StdEncoding.EncodeToString([]byte(raw))
		if !strings.Contains(str, b) {
			continue
		}
		lead, trail, _ := strings.Cut(raw, s.text)
		pipe, ok := pipeline(lead, trail, "b64enc")
		if !ok {
			return "", false
		}
		str = strings.ReplaceAll(str, b, "${"+s.name+pipe+"}")
	}
	if !strings.Contains(str, s.text) {
		return str, true
	}
	if strings.Count(str, s.text) == 1 {
		before, after, _ := strings.Cut(str, s.text)
		if pipe, ok := pipeline(before, after, "toJson"); ok {
			ref := "${" + s.name + pipe + "}"
			// Written as a plain scalar, or the substituted JSON string
			// would be text inside a quoted one.
			if b, err := yaml.Marshal(map[string]string{"k": ref}); err == nil && string(b) == "k: "+ref+"\n" {
				return ref, true
			}
		}
	}
	if strings.Contains(s.text, "\n") {
		return "", false
	}
	return strings.ReplaceAll(str, s.text, "${"+s.name+"}"), true
}

// pipeline is a ${} pipeline that puts before and after around the value
// and then runs fn; false when the spec's pipeline syntax cannot hold them
// (a pipeline cannot contain }, {{ or a line break).
func pipeline(before, after, fn string) (string, bool) {
	pipe := "|" + fn
	if before != "" || after != "" {
		format := strings.ReplaceAll(before, "%", "%%") + "%s" + strings.ReplaceAll(after, "%", "%%")
		pipe = "|printf " + strconv.Quote(format) + pipe
	}
	return pipe, !strings.ContainsAny(pipe, "}\n") && !strings.Contains(pipe, "{{")
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
		if e.set && len(e.value) >= 4 && e.secret() {
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
