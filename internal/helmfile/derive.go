package helmfile

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/khook/khook/internal/importer"
	"github.com/khook/khook/words"
)

// A value the helmfile computes from a secret (MinBZK's
// `derivePassword 1 "long" (requiredEnv "MASTER_PASSWORD") "keycloak" "x" |
// sha1sum`) holds no trace of the secret, so no search of what is written
// can find it. The import renders the tree a second time with each secret
// variable set to another value: a string that changes is derived from a
// secret and becomes a secret variable of its own, set at run time; a
// change of anything else (a release, a key, a number) means the secret
// decides what is written, and the import refuses.

// canary is what a secret variable renders as on the second rendering.
func canary(name string) string { return canaryPrefix + strings.ToLower(name) }

const canaryPrefix = "khook-canary-"

// secretsSet are the secret-looking environment variables the templates
// read with a value (a directory's path aside: it is written relative to
// the spec).
func (c *converter) secretsSet() []*envRead {
	var out []*envRead
	for _, e := range c.r.vars() {
		if !e.set || len(e.value) < 4 || !e.secret() {
			continue
		}
		if st, err := os.Stat(e.value); err == nil && st.IsDir() {
			continue
		}
		out = append(out, e)
	}
	return out
}

// deriveSecrets finds what is derived from the secrets the templates read
// and writes it as secret variables; c.derived keeps the values, which
// leaked then makes sure are nowhere in what is written.
func (c *converter) deriveSecrets(dir, file string) error {
	secrets := c.secretsSet()
	if len(secrets) == 0 {
		return nil
	}
	var names, values []string
	for _, e := range secrets {
		names, values = append(names, e.name), append(values, e.value)
	}
	opts := c.opts
	opts.Env = func(n string) (string, bool) {
		if slices.Contains(names, n) {
			return canary(n), true
		}
		return c.r.lookup(n)
	}
	other, _, err := convert(dir, file, opts)
	d := &deriver{c: c, from: strings.Join(names, ", "), names: names, secrets: values, byValue: map[string]string{}}
	if err != nil {
		return d.refuse("the helmfile", "rendering it with another value fails ("+words.OneLine(err.Error())+")")
	}
	if len(c.rels) != len(other.rels) || len(c.files) != len(other.files) {
		return d.refuse("the helmfile", "the releases or the files written change with it")
	}
	if why := residue(c, other); why != "" {
		return d.refuse(why, "it changes with it, and only a values string can be a variable")
	}
	for i, r := range c.rels {
		mine, theirs := r.steps(), other.rels[i].steps()
		for j, st := range mine {
			if st.Helm == nil || theirs[j].Helm == nil || st.Helm.Values == nil {
				continue
			}
			if v, keep := d.walk(st.Helm.Values, theirs[j].Helm.Values, nil, r); keep {
				st.Helm.Values = v.(map[string]any)
			} else {
				st.Helm.Values = nil
			}
		}
	}
	for i := range c.files {
		if err := d.file(&c.files[i], other.files[i]); err != nil {
			return err
		}
	}
	c.derived = d.byValue
	return nil
}

// residue names the first thing other than a helm step's values that
// differs between the two renderings: a hook's manifest or command, a
// namespace, a note (which quotes what it did not carry).
func residue(c, other *converter) string {
	notes := func(ns []Note) string {
		var b strings.Builder
		for _, n := range ns {
			// Masked: the secret and its stand-in read alike.
			b.WriteString(c.opts.Redactor.String(n.String()) + "\n")
		}
		return b.String()
	}
	if notes(c.res.NotCarried)+notes(c.res.Info) != notes(other.res.NotCarried)+notes(other.res.Info) {
		return "the import's notes"
	}
	for i, r := range c.rels {
		o := other.rels[i]
		where := "release " + r.out.Resolved.Name
		if r.out.Resolved.Name != o.out.Resolved.Name || r.out.Resolved.Namespace != o.out.Resolved.Namespace ||
			notes(r.out.NotCarried)+notes(r.out.Info) != notes(o.out.NotCarried)+notes(o.out.Info) {
			return where
		}
		mine, theirs := r.steps(), o.steps()
		if len(mine) != len(theirs) {
			return where + "'s steps"
		}
		for j := range mine {
			if stepWithoutValues(mine[j]) != stepWithoutValues(theirs[j]) {
				return where + "'s step " + mine[j].Name
			}
		}
	}
	return ""
}

// stepWithoutValues is a step as YAML, a helm step's values and
// credentials (which references() makes ${NAME}s) left out.
func stepWithoutValues(st *importer.OutStep) string {
	if st == nil {
		return ""
	}
	s := *st
	if s.Helm != nil {
		h := *s.Helm
		h.Values, h.Auth = nil, nil
		s.Helm = &h
	}
	b, err := yaml.Marshal(&s)
	if err != nil {
		return "unmarshalable: " + err.Error()
	}
	return string(b)
}

type deriver struct {
	c       *converter
	from    string            // the secret variables, for the sentences
	names   []string          // their names
	secrets []string          // their values
	byValue map[string]string // a derived value → its variable's name
}

// refuse is the whole import refused: the secret decides more than a
// values entry (a release, a file, a note). The advice works as helmfile
// reads the variable: one read with env can be left unset; one read with
// requiredEnv, which helmfile refuses to render without, is given a
// stand-in shorter than 4 characters, which is taken for no secret.
func (d *deriver) refuse(where, why string) error {
	var required, optional []string
	for _, n := range d.names {
		if e := d.c.r.env[n]; e != nil && e.required {
			required = append(required, n)
		} else {
			optional = append(optional, n)
		}
	}
	var advice []string
	if len(optional) > 0 {
		advice = append(advice, "import with "+strings.Join(optional, ", ")+" unset")
	}
	if len(required) > 0 {
		advice = append(advice, "import with "+strings.Join(required, ", ")+" set to a stand-in of fewer than 4 characters ("+required[0]+"=x; the helmfile reads it with requiredEnv, so it cannot be left unset) and edit what the stand-in gives")
	}
	return fmt.Errorf("%s: %s depends on the secret environment variable %s in a way the import cannot write as a variable: %s; %s, nothing written", d.c.top, where, d.from, why, strings.Join(advice, "; "))
}

// lose leaves out what of release r's values at path depends on the
// secret where no ${NAME} can stand (a map key, a number, a list's
// length): only that release is partial, named at its values. The path
// names keys both renderings share, never the secret.
func (d *deriver) lose(r *rel, path []string, what string) {
	d.c.note(r, "values", "values "+dotted(path), what+" depends on the secret environment variable "+d.from+" where no ${NAME} reference can stand; left out, never written")
}

// walk returns mine with each string that differs from theirs replaced by
// a secret variable's ${NAME}; what else differs (a key, a number, a
// list's length) is left out (keep false for mine itself) and said.
func (d *deriver) walk(mine, theirs any, path []string, r *rel) (_ any, keep bool) {
	switch m := mine.(type) {
	case map[string]any:
		t, ok := theirs.(map[string]any)
		if !ok {
			d.lose(r, path, "its type")
			return nil, false
		}
		if keysDiffer(m, t) {
			d.lose(r, path, "a key of it")
		}
		for k, x := range m {
			y, ok := t[k]
			if !ok {
				delete(m, k)
				continue
			}
			v, keep := d.walk(x, y, append(slices.Clone(path), k), r)
			if !keep {
				delete(m, k)
				continue
			}
			m[k] = v
		}
		return m, true
	case []any:
		t, ok := theirs.([]any)
		if !ok || len(t) != len(m) {
			d.lose(r, path, "the list (its length or type)")
			return nil, false
		}
		for i := range m {
			v, keep := d.walk(m[i], t[i], append(slices.Clone(path), strconv.Itoa(i)), r)
			if !keep {
				d.lose(r, path, "the list")
				return nil, false
			}
			m[i] = v
		}
		return m, true
	case string:
		t, ok := theirs.(string)
		switch {
		case ok && t == m:
			return m, true
		case !ok:
			d.lose(r, path, "its type")
			return nil, false
		}
		if d.onlySecrets(m, t) {
			return m, true // the secret itself: references writes ${NAME}
		}
		return "${" + d.variable(m, path, r) + "}", true
	}
	if !reflect.DeepEqual(mine, theirs) {
		d.lose(r, path, "its value")
		return nil, false
	}
	return mine, true
}

// keysDiffer says whether two maps have other keys.
func keysDiffer(a, b map[string]any) bool {
	if len(a) != len(b) {
		return true
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return true
		}
	}
	return false
}

// onlySecrets says whether two renderings of a string differ only where
// the secrets themselves stand (references then writes ${NAME} there);
// anything else that changes is derived.
func (d *deriver) onlySecrets(mine, theirs string) bool {
	for i, s := range d.secrets {
		mine = strings.ReplaceAll(mine, s, "\x00"+strconv.Itoa(i))
		theirs = strings.ReplaceAll(theirs, canary(d.names[i]), "\x00"+strconv.Itoa(i))
	}
	return mine == theirs
}

// variable declares (once per value) the secret variable a derived value
// becomes, named by its key: authentication.client.meet.client_secret →
// MEET_CLIENT_SECRET.
func (d *deriver) variable(value string, path []string, r *rel) string {
	if name, ok := d.byValue[value]; ok {
		return name
	}
	name := d.c.keyVar(path, "DERIVED_")
	d.byValue[value] = name
	d.c.opts.Redactor.Add(value)
	where := "release " + r.out.Resolved.Name + " values " + dotted(path)
	d.c.res.Vars = append(d.c.res.Vars, &importer.Var{Name: name, Secret: true, From: importer.Loc{File: d.c.top},
		Description: where + ", which the helmfile derives from the secret " + d.from + " (set KHOOK_SECRET_" + name + ")"})
	d.c.res.Info = append(d.c.res.Info, Note{Loc: importer.Loc{File: r.st.file, Line: r.line}, What: where,
		Why: "derived from the secret environment variable " + d.from + ": written as the secret variable " + name + " (KHOOK_SECRET_" + name + "), never its value"})
	return name
}

// file moves what a generated values file derives from a secret into its
// step's values: (a generated file cannot refer to a variable), where it
// keeps its precedence only if no later source of the step sets it.
func (d *deriver) file(mine *File, theirs File) error {
	if string(mine.Data) == string(theirs.Data) {
		return nil
	}
	var a, b map[string]any
	if yaml.Unmarshal(mine.Data, &a) != nil || yaml.Unmarshal(theirs.Data, &b) != nil {
		return d.refuse(mine.Path, "it is not a YAML map")
	}
	r, h, at := d.owner(mine.Path)
	if h == nil {
		return d.refuse(mine.Path, "no step reads it")
	}
	// moved are the keys to move, each a string or a list (helm replaces
	// a list whole, so a list holding a derived string moves whole).
	type move struct {
		path   []string
		theirs any
	}
	var moved []move
	var collect func(x, y any, path []string)
	collect = func(x, y any, path []string) {
		xm, xok := x.(map[string]any)
		ym, yok := y.(map[string]any)
		if xok && yok {
			if keysDiffer(xm, ym) {
				d.lose(r, path, "a key of it (in "+mine.Path+")")
			}
			for k := range xm {
				if _, ok := ym[k]; !ok {
					// A key made of the secret: no reference can stand there.
					deletePath(a, append(slices.Clone(path), k))
					continue
				}
				collect(xm[k], ym[k], append(slices.Clone(path), k))
			}
			return
		}
		if reflect.DeepEqual(x, y) {
			return
		}
		switch x.(type) {
		case string, []any:
			moved = append(moved, move{path, y})
			return
		}
		deletePath(a, path)
		d.lose(r, path, "its value (in "+mine.Path+")")
	}
	collect(a, b, nil)
	for _, m := range moved {
		value, _ := lookupPath(a, m.path)
		deletePath(a, m.path)
		if err := d.later(h, at, m.path); err != nil {
			d.lose(r, m.path, "its value (in "+mine.Path+", which khook cannot substitute in; moved into values:, it would win over a later values source: "+strings.TrimPrefix(err.Error(), dotted(m.path)+": ")+")")
			continue
		}
		if overridden(h.Values, m.path) {
			continue // a set: value of the release replaces it anyway
		}
		ref, keep := d.walk(value, m.theirs, m.path, r)
		if !keep {
			continue
		}
		if h.Values == nil {
			h.Values = map[string]any{}
		}
		setPath(h.Values, m.path, ref)
	}
	head, _, _ := strings.Cut(string(mine.Data), "\n")
	body, err := toYaml(a)
	if err != nil {
		return err
	}
	mine.Data = []byte(head + "\n" + body)
	return nil
}

// owner is the release, helm step and valuesFrom index that read the
// generated file name.
func (d *deriver) owner(name string) (*rel, *importer.OutHelm, int) {
	for _, r := range d.c.rels {
		for _, st := range r.steps() {
			if st.Helm == nil {
				continue
			}
			for i, src := range st.Helm.ValuesFrom {
				if src.File == "./"+name {
					return r, st.Helm, i
				}
			}
		}
	}
	return nil, nil, 0
}

// later refuses when a values source after index at sets path: moved into
// values:, the derived value would override it, where helm lets it win.
func (d *deriver) later(h *importer.OutHelm, at int, path []string) error {
	for _, src := range h.ValuesFrom[at+1:] {
		if src.File == "" || src.Path != "" {
			return fmt.Errorf("%s: a later values source (%s%s) may set it too", dotted(path), src.File, src.Path)
		}
		data, err := d.generatedOr(src.File)
		if err != nil {
			return fmt.Errorf("%s: the later values file %s cannot be read to see whether it sets it too: %s", dotted(path), src.File, pathErr(err))
		}
		var m map[string]any
		if yaml.Unmarshal(data, &m) != nil {
			return fmt.Errorf("%s: the later values file %s is not a YAML map", dotted(path), src.File)
		}
		if overridden(m, path) {
			return fmt.Errorf("%s: the later values file %s sets it too", dotted(path), src.File)
		}
	}
	return nil
}

// generatedOr is a values source's content: a file the import generates,
// or one on disk relative to the spec.
func (d *deriver) generatedOr(file string) ([]byte, error) {
	for _, f := range d.c.files {
		if "./"+f.Path == file {
			return f.Data, nil
		}
	}
	return os.ReadFile(filepath.Join(d.c.specDir, filepath.FromSlash(file)))
}

func dotted(path []string) string {
	if len(path) == 0 {
		return "the values"
	}
	return strings.Join(path, ".")
}

func lookupPath(m map[string]any, path []string) (any, bool) {
	var cur any = m
	for _, k := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = mm[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// overridden says whether values (a release's set:) give path or one of
// its parents a value, which replaces what a values file gives it.
func overridden(values map[string]any, path []string) bool {
	m := values
	for i, k := range path {
		v, ok := m[k]
		if !ok {
			return false
		}
		next, isMap := v.(map[string]any)
		if i == len(path)-1 || !isMap {
			return true
		}
		m = next
	}
	return false
}

func deletePath(m map[string]any, path []string) {
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
	delete(m, path[len(path)-1])
}

func setPath(m map[string]any, path []string, v any) {
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}
