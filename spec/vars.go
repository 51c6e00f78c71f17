package spec

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/khook/khook/redact"
)

// Default environment prefixes for variables and secrets.
const (
	DefaultVarPrefix    = "KHOOK_VAR_"
	DefaultSecretPrefix = "KHOOK_SECRET_"
)

// varSet is the merged variable map, with which names came from secrets.
type varSet struct {
	vals      map[string]string
	secret    map[string]bool
	varPrefix string
	redactor  *redact.Redactor
	decrypt   func(file string, data []byte, r *redact.Redactor) ([]byte, bool, error)
}

func (v *varSet) lookup(name string) (string, bool) {
	s, ok := v.vals[name]
	return s, ok
}

// gatherVars merges the variable sources, lowest precedence first, so that a
// later source overwrites: KHOOK_VAR_* < KHOOK_SECRET_* < --var-file < --set.
// Secret values are registered with the redactor before anything can quote them.
func gatherVars(opts LoadOptions) (*varSet, Problems) {
	vs := &varSet{vals: map[string]string{}, secret: map[string]bool{}, varPrefix: opts.VarPrefix, redactor: opts.Redactor, decrypt: opts.Decrypt}
	var probs Problems
	fromEnv := func(prefix string, secret bool) {
		for _, kv := range opts.Environ {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || !strings.HasPrefix(k, prefix) || len(k) == len(prefix) {
				continue
			}
			name := k[len(prefix):]
			if secret {
				opts.Redactor.Add(v)
			}
			vs.vals[name] = v
			vs.secret[name] = secret
		}
	}
	fromEnv(opts.VarPrefix, false)
	if opts.SecretPrefix != opts.VarPrefix {
		fromEnv(opts.SecretPrefix, true)
	}
	for _, f := range opts.VarFiles {
		probs = append(probs, readVarFile(f, vs)...)
	}
	for _, kv := range opts.Set {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !varName.MatchString(k) {
			probs = append(probs, Problem{Message: fmt.Sprintf("--set %q: expected NAME=value with NAME made of letters, digits and _", kv)})
			continue
		}
		vs.vals[k] = v
		vs.secret[k] = false
	}
	return vs, probs
}

// maxVarFile bounds a --var-file; it is a flat map, not a document tree.
const maxVarFile = 1 << 20

// readVarFile reads a flat NAME: value map. Values are scalars; they are used
// as written (the scalar's text), so `port: 08080` stays "08080".
func readVarFile(path string, vs *varSet) Problems {
	data, err := os.ReadFile(path)
	if err != nil {
		return Problems{{Pos: Pos{File: path}, Message: fmt.Sprintf("cannot read var file: %v", err)}}
	}
	if len(data) > maxVarFile {
		return Problems{{Pos: Pos{File: path}, Message: fmt.Sprintf("var file is %d bytes; the limit is %d MiB", len(data), maxVarFile>>20)}}
	}
	// A sops-encrypted var file is decrypted in memory; its variables are
	// secrets, as if they came from KHOOK_SECRET_.
	encrypted := false
	if vs.decrypt != nil {
		plain, enc, err := vs.decrypt(path, data, vs.redactor)
		if err != nil {
			return Problems{{Pos: Pos{File: path}, Message: err.Error()}}
		}
		data, encrypted = plain, enc
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if err.Error() == "EOF" {
			return nil
		}
		return Problems{yamlProblem(err, nil, path)}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		return Problems{{Pos: Pos{File: path, Line: root.Line, Col: root.Column}, Message: "a var file must be a flat map of NAME: value"}}
	}
	var probs Problems
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		pos := Pos{File: path, Line: k.Line, Col: k.Column}
		if k.Kind != yaml.ScalarNode || !varName.MatchString(k.Value) {
			probs = append(probs, Problem{Pos: pos, Message: fmt.Sprintf("%q is not a variable name (letters, digits and _, not starting with a digit)", k.Value)})
			continue
		}
		if v.Kind != yaml.ScalarNode {
			probs = append(probs, Problem{Pos: Pos{File: path, Line: v.Line, Col: v.Column}, Message: fmt.Sprintf("variable %s must be a scalar value, not a list or map", k.Value)})
			continue
		}
		val := v.Value
		if v.Tag == "!!null" {
			val = ""
		}
		vs.vals[k.Value] = val
		vs.secret[k.Value] = encrypted
	}
	return probs
}
