package helmfilecorpus

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v3"

	"github.com/khook/khook/redact"
)

// secretFileVar is how the import declares the secret variable standing
// for a file the helmfile reads (internal/helmfile secretReads): its
// description names the file, relative to where the import ran.
var secretFileVar = regexp.MustCompile(`^the content of (.+), a secret the helmfile reads`)

// literalVar is how the import declares the secret variable standing for
// a literal credential the helmfile holds in plain text (internal/helmfile
// literalSecrets), or for a value it derives from a secret (derivePassword
// of a master password: deriveSecrets): the user sets it to the value in
// their file, or to what the helmfile derives.
// expandEnv replaces each ${NAME} in str whose NAME env sets.
func expandEnv(str string, env map[string]string) string {
	return varRef.ReplaceAllStringFunc(str, func(ref string) string {
		if v, ok := env[ref[2:len(ref)-1]]; ok {
			return v
		}
		return ref
	})
}

var varRef = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*\}`)

var literalVar = regexp.MustCompile(`^the credential at (release|environment values) .*, in plain text in the helmfile|, which the helmfile derives from the secret `)

// importedSpec is what the comparison reads of the spec the import wrote
// besides what spec.Load gives: its declared variables and, per release,
// where its values refer to a secret one.
type importedSpec struct {
	Vars map[string]struct {
		Secret      bool   `yaml:"secret"`
		Description string `yaml:"description"`
	} `yaml:"vars"`
	Steps []struct {
		Name string `yaml:"name"`
		Helm *struct {
			Release   string         `yaml:"release"`
			Namespace string         `yaml:"namespace"`
			Values    map[string]any `yaml:"values"`
		} `yaml:"helm"`
	} `yaml:"steps"`
}

// secrets is what the comparison gives the imported spec's secret
// variables and keeps out of its log.
type secrets struct {
	// environ sets each secret variable standing for a file to the file's
	// content, as a user would (KHOOK_SECRET_CA_KEY="$(cat ca.key)").
	environ []string
	// redactor holds every secret value known: the entry's secret-looking
	// variables and those files' contents.
	redactor *redact.Redactor
	// paths are, per release (namespace/name, normalized), the values
	// paths whose value the spec takes from a secret variable: a value
	// derived from a secret (derivePassword), whose value only helmfile's
	// side holds, is masked by where it is.
	paths map[string][][]string
	// declared are the spec's variables: secret or not.
	declared map[string]bool
	// literals are, per secret variable standing for a literal credential,
	// where the spec refers to it: release (namespace/name) and path.
	literals map[string]literalRef
}

type literalRef struct {
	release string
	path    []string
	// around is the text a ${NAME|printf "…%s…"|toJson} puts around the
	// value (an environment's credential inside a longer string).
	before, after string
}

// readSecrets reads the spec the import wrote in dir: what H2 and H4 of
// trial 46m ask of the comparison.
func readSecrets(specFile, dir string, env map[string]string, secretLooking func(string) bool) (*secrets, error) {
	s := &secrets{redactor: redact.New(), paths: map[string][][]string{}, declared: map[string]bool{}, literals: map[string]literalRef{}}
	for k, v := range env {
		if secretLooking(k) {
			s.redactor.Add(v)
		}
	}
	data, err := os.ReadFile(specFile)
	if err != nil {
		return nil, err
	}
	var sp importedSpec
	if err := yaml.Unmarshal(data, &sp); err != nil {
		return nil, err
	}
	var secretVars, literals []string
	for name, v := range sp.Vars {
		s.declared[name] = v.Secret
		if !v.Secret {
			continue
		}
		if literalVar.MatchString(v.Description) {
			literals = append(literals, name)
		}
		secretVars = append(secretVars, name)
		m := secretFileVar.FindStringSubmatch(v.Description)
		if m == nil {
			continue
		}
		content, err := os.ReadFile(filepath.Join(dir, m[1]))
		if err != nil {
			return nil, err
		}
		value := strings.TrimSpace(string(content))
		s.environ = append(s.environ, "KHOOK_SECRET_"+name+"="+value)
		s.redactor.Add(value)
		s.redactor.Add(string(content))
	}
	refers := func(str string) bool {
		for _, n := range secretVars {
			if strings.Contains(str, "${"+n+"}") || strings.Contains(str, "${"+n+"|") {
				return true
			}
		}
		return false
	}
	for _, st := range sp.Steps {
		if st.Helm == nil {
			continue
		}
		name, ns := st.Helm.Release, st.Helm.Namespace
		if name == "" {
			name = st.Name
		}
		if ns == "" {
			ns = "default" // as normalize has it
		}
		// A release named from variables (namespace: ${NAMESPACE}) is the
		// one helmfile built with the entry's environment.
		name, ns = expandEnv(name, env), expandEnv(ns, env)
		s.paths[ns+"/"+name] = append(s.paths[ns+"/"+name], secretPaths(st.Helm.Values, nil, refers, false)...)
		for _, n := range literals {
			if _, ok := s.literals[n]; ok {
				continue
			}
			var before, after string
			refers := func(str string) bool {
				if str == "${"+n+"}" || str == "${"+n+"|toJson}" {
					return true
				}
				format, ok := strings.CutPrefix(str, "${"+n+"|printf ")
				if format, ok = strings.CutSuffix(format, "|toJson}"); !ok {
					return false
				}
				f, err := strconv.Unquote(format)
				if err != nil || strings.Count(strings.ReplaceAll(f, "%%", ""), "%s") != 1 {
					return false
				}
				before, after, _ = strings.Cut(strings.ReplaceAll(f, "%%", "\x00"), "%s")
				before, after = strings.ReplaceAll(before, "\x00", "%"), strings.ReplaceAll(after, "\x00", "%")
				return true
			}
			for _, p := range secretPaths(st.Helm.Values, nil, refers, true) {
				s.literals[n] = literalRef{ns + "/" + name, p, before, after}
				break
			}
		}
	}
	return s, nil
}

// prefix is the environment prefix a user sets the spec's variable name
// with: KHOOK_SECRET_ for a secret one (a variable whose value holds a
// URL's password is one, whatever its name), else KHOOK_VAR_.
func (s *secrets) prefix(name string, secretLooking func(string) bool) string {
	secret, ok := s.declared[name]
	if !ok {
		secret = secretLooking(name)
	}
	if secret {
		return "KHOOK_SECRET_"
	}
	return "KHOOK_VAR_"
}

// fromHelmfile gives each variable standing for a literal credential the
// value helmfile's build has where the spec refers to it, as a user who
// sets KHOOK_SECRET_NAME to the value in their file would.
func (s *secrets) fromHelmfile(want []resolved) error {
	for name, ref := range s.literals {
		var v any
		found := false
		for _, r := range want {
			if r.Namespace+"/"+r.Name == ref.release {
				v, found = lookup(r.Values, ref.path)
			}
		}
		if !found {
			continue // helmfile has none there: the diff says so
		}
		str, ok := v.(string)
		if !ok {
			b, err := json.Marshal(v)
			if err != nil {
				return err
			}
			str = string(b)
		}
		if inner, ok := strings.CutPrefix(str, ref.before); ok && ref.before+ref.after != "" {
			if inner, ok = strings.CutSuffix(inner, ref.after); ok {
				str = inner
			}
		}
		s.environ = append(s.environ, "KHOOK_SECRET_"+name+"="+str)
		s.redactor.Add(str)
	}
	return nil
}

// lookup is the value at path in v (map keys and list indexes).
func lookup(v any, path []string) (any, bool) {
	for i, k := range path {
		switch t := v.(type) {
		case map[string]any:
			x, ok := t[k]
			if !ok {
				return nil, false
			}
			v = x
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(t) {
				return nil, false
			}
			v = t[i]
		case string:
			// a string of YAML (Secret manifests under extraResources: |),
			// whose credentials the import replaces in place
			for _, doc := range yamlDocs(t) {
				if x, ok := lookup(doc, path[i:]); ok {
					return x, true
				}
			}
			return nil, false
		default:
			return nil, false
		}
	}
	return v, true
}

// secretPaths are the paths in values whose string refers to a secret
// variable (a list: its own path, helm replaces a list whole; with
// intoLists, each string's in it: where a literal credential's variable
// stands, env[1].value, to give it helmfile's value — trial 46p's H1).
func secretPaths(v any, path []string, refers func(string) bool, intoLists bool) (out [][]string) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			out = append(out, secretPaths(x, append(append([]string{}, path...), k), refers, intoLists)...)
		}
	case []any:
		if intoLists {
			for i, x := range t {
				out = append(out, secretPaths(x, append(append([]string{}, path...), strconv.Itoa(i)), refers, intoLists)...)
			}
			break
		}
		b, _ := json.Marshal(t)
		if refers(string(b)) {
			out = append(out, path)
		}
	case string:
		if refers(t) {
			out = append(out, path)
		} else if intoLists && strings.Contains(t, "\n") {
			// a literal the import replaced inside a string of YAML
			for _, doc := range yamlDocs(t) {
				out = append(out, secretPaths(doc, path, refers, intoLists)...)
			}
		}
	}
	return out
}

// yamlDocs are the documents of a string of YAML (none when it is not).
func yamlDocs(text string) []any {
	var docs []any
	dec := yaml.NewDecoder(strings.NewReader(text))
	for {
		var doc any
		if dec.Decode(&doc) != nil {
			return docs
		}
		docs = append(docs, doc)
	}
}

// diff is the comparison's diff with no secret in it (trial 46m's H4: it
// printed private keys and values derived from secrets into the test log):
// a value the spec takes from a secret variable shows as <secret> on both
// sides, or as <secret: helmfile's>/<secret: khook's> where they differ,
// and every known secret value left anywhere is masked.
func (s *secrets) diff(want, got []resolved) string {
	mask := func(rs []resolved, side string, other []resolved) []resolved {
		out := make([]resolved, len(rs))
		for i, r := range rs {
			out[i] = r
			out[i].Values = jsonForm(r.Values) // a copy
			var theirs map[string]any
			for _, o := range other {
				if o.Namespace == r.Namespace && o.Name == r.Name {
					theirs = o.Values
				}
			}
			for _, p := range s.paths[r.Namespace+"/"+r.Name] {
				holder, key, ok := at(out[i].Values, p)
				if !ok {
					continue
				}
				mine := holder[key]
				marker := "<secret: " + side + ">"
				if str, ok := mine.(string); ok {
					marker = fmt.Sprintf("<secret: %s, %d characters>", side, len(str))
				}
				if h, k, ok := at(theirs, p); ok && reflect.DeepEqual(h[k], mine) {
					marker = "<secret>"
				}
				holder[key] = marker
			}
		}
		return out
	}
	return s.redactor.String(cmp.Diff(mask(want, "helmfile's", got), mask(got, "khook's", want)))
}

// at is the map that holds path's last key in m, and that key; false
// when path is not in m.
func at(m map[string]any, path []string) (map[string]any, string, bool) {
	if len(path) == 0 {
		return nil, "", false
	}
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil, "", false
		}
		m = next
	}
	last := path[len(path)-1]
	_, ok := m[last]
	return m, last, ok
}
