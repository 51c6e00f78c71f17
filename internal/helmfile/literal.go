package helmfile

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	yaml "go.yaml.in/yaml/v3"

	"github.com/khook/khook/internal/importer"
)

// A literal credential in the values the import writes — a release's
// inline values: or set:, or what it renders into a generated values
// file — is written as a secret variable, never the literal, as `khook
// import script` does for --set adminPassword=…: a value under a
// credential's key (importer.SecretKey: auth.password, apiToken,
// secretKey; not existingSecret or passwordSecretName) or a URL with a
// password in it (importer.URLCredentials), whatever its key. The helmfile
// holds it in plain text; a note at its line says so and names the
// variable the run sets (KHOOK_SECRET_NAME). A generated values file
// cannot refer to a variable (khook substitutes variables in the spec
// only), so the value moves into the step's values:, where it keeps its
// precedence unless a later values source of the step sets it too: then
// it is left out and only that release is partial (trial 46n's S1, D3).

// plainTextWhy is what the note of a literal credential says.
const plainTextWhy = "the helmfile holds it in plain text"

// literalSecrets writes each literal credential of the releases' values
// as a secret variable.
func (c *converter) literalSecrets() {
	// A literal that is a secret environment variable's value (a URL the
	// helmfile also reads from it) is that variable.
	byValue := map[string]string{}
	for _, e := range c.r.vars() {
		if e.set && len(e.value) >= 4 && e.secret() && declaredSecret(c.res.Vars, e.name) {
			byValue[e.value] = e.name
		}
	}
	c.envCreds = c.envCredentials()
	for _, r := range c.rels {
		if r.step == nil || r.step.Helm == nil {
			continue
		}
		h := r.step.Helm
		for at, src := range h.ValuesFrom {
			if f := c.generatedFile(src.File); f != nil {
				c.moveLiterals(r, h, at, f, byValue)
			}
		}
		if h.Values != nil {
			c.literalsIn(r, h.Values, nil, nil, nil, byValue)
		}
	}
	c.embeddedCredentials(byValue)
	sort.Slice(c.res.Vars, func(i, j int) bool { return c.res.Vars[i].Name < c.res.Vars[j].Name })
}

// envCred is a literal credential of a helmfile's environment or
// state values: where it is and its value.
type envCred struct {
	st    *state
	path  []string
	value string
}

// envCreds are the literal credentials of the environment and state
// values: by value, those only one credential key holds (source), and
// the values a key that names no credential holds too (names: db.name
// and db.pass both shopdb), which cannot be told from a name.
type envCreds struct {
	list   []envCred
	source map[string]envCred
	names  map[string]bool
}

// embeddedCredentials writes each literal credential of the environment
// values that a values template put under a key that names no credential
// or inside a longer string (a <password> in an XML settings block: trial
// 46s's D5) as a reference to its secret variable, as secretReads does for
// a secret file's content. Not one a key that names no credential holds
// too (it is a name as well: trial 46t's D1), and inside a longer string
// only one that looks like a secret: a word would match names.
func (c *converter) embeddedCredentials(byValue map[string]string) {
	for _, ec := range c.envCreds.list {
		if c.envCreds.names[ec.value] {
			continue
		}
		name, ok := byValue[ec.value]
		if !ok {
			name, ok = sharedVar(byValue, ec.value)
		}
		if !ok {
			name = c.keyVar(ec.path, "V_")
		}
		what := "the credential at environment values " + dotted(ec.path)
		sf := secretFile{name: name, text: ec.value, read: ec.value, whole: !secretShaped(ec.value)}
		if !c.writeRefs(sf, what) || declared(c.res.Vars, name) {
			continue
		}
		c.opts.Redactor.Add(ec.value)
		loc := importer.Loc{File: ec.st.file, Line: lineWith(ec.st.src, ec.path[len(ec.path)-1], ec.value)}
		c.res.Vars = append(c.res.Vars, &importer.Var{Name: name, Secret: true, Required: true, From: loc,
			Description: what + ", in plain text in the helmfile (set KHOOK_SECRET_" + name + ")"})
		c.res.Info = append(c.res.Info, Note{Loc: loc, What: "environment values " + dotted(ec.path),
			Why: plainTextWhy + ", and a values template writes it into a release's values: written as the secret variable " + name + ", never the literal; give it as KHOOK_SECRET_" + name})
	}
}

// secretShaped: s looks like a secret rather than a word: 8 characters or
// more, of at least two kinds among lower case, upper case, digits and
// others (c4nary-nexus-pw, S3cret!; not openproject).
func secretShaped(s string) bool {
	if len(s) < 8 {
		return false
	}
	var kinds [4]bool
	for _, r := range s {
		switch {
		case unicode.IsLower(r):
			kinds[0] = true
		case unicode.IsUpper(r):
			kinds[1] = true
		case unicode.IsDigit(r):
			kinds[2] = true
		default:
			kinds[3] = true
		}
	}
	n := 0
	for _, k := range kinds {
		if k {
			n++
		}
	}
	return n >= 2
}

// sharedVar is the variable a literal credential already became under
// some key (the first by key, to be the same on every run).
func sharedVar(byValue map[string]string, value string) (string, bool) {
	var keys []string
	for k := range byValue {
		if strings.HasPrefix(k, value+"\x00") {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "", false
	}
	sort.Strings(keys)
	return byValue[keys[0]], true
}

// envCredentials reads the literal credentials of every state's
// environment, state and override values.
func (c *converter) envCredentials() envCreds {
	out := envCreds{source: map[string]envCred{}, names: map[string]bool{}}
	paths := map[string]int{}
	var walk func(st *state, v any, path []string, parent map[string]any)
	walk = func(st *state, v any, path []string, parent map[string]any) {
		switch t := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(t)) {
				walk(st, t[k], append(slices.Clone(path), k), t)
			}
		case []any:
			for i, x := range t {
				walk(st, x, append(slices.Clone(path), strconv.Itoa(i)), nil)
			}
		case string:
			switch {
			case len(path) == 0 || len(t) < 6 || importer.NamesItself(t):
			case !literalAt(path, t, parent):
				out.names[t] = true
			default:
				if paths[t]++; paths[t] == 1 {
					ec := envCred{st: st, path: path, value: t}
					out.list, out.source[t] = append(out.list, ec), ec
				} else if !slices.Equal(out.source[t].path, path) {
					delete(out.source, t) // several keys hold it: a variable per key
				}
			}
		}
	}
	states := map[*state]bool{}
	for _, r := range c.rels {
		if states[r.st] {
			continue
		}
		states[r.st] = true
		for _, m := range []map[string]any{r.st.envValues, r.st.stateValues, r.st.overrides} {
			walk(r.st, m, nil, nil)
		}
	}
	return out
}

// generatedFile is the generated values file a values source reads, or nil.
func (c *converter) generatedFile(src string) *File {
	for i := range c.files {
		if "./"+c.files[i].Path == src {
			return &c.files[i]
		}
	}
	return nil
}

// literal says whether v, under key in the map parent (nil in a list), is
// a literal credential: a URL with a password, a value under a
// credential's key, or the value of a {name: X, value: V} item whose name
// is a secret's (a Kubernetes env var: AWS_SECRET_ACCESS_KEY, trial 46p's
// D4). Not a boolean, a reference ({{ }}, ${}), the name of a key of a
// Secret (secretKey: tls.crt) nor etcd's cluster id (trial 46p's D2).
func literal(key string, v any, parent map[string]any) bool {
	s, isString := v.(string)
	switch v.(type) {
	case string:
	case int, int64, uint64, float64:
		s = fmt.Sprint(v) // a PIN under password: is one too
	default:
		return false
	}
	if strings.TrimSpace(s) == "" || strings.Contains(s, "${") || strings.Contains(s, "{{") || strings.Contains(s, "$(") || strings.HasPrefix(s, "ref+") {
		return false
	}
	if isString && importer.URLCredentials(s) || envCredential(key, parent) {
		return true
	}
	siblings := make([]string, 0, len(parent))
	for k, v := range parent {
		if v != nil && v != "" { // caSecretName: "" names no Secret (trial 46s68p's D4)
			siblings = append(siblings, k)
		}
	}
	return importer.SecretKey(key) && !(isString && importer.NoCredential(key, s, siblings))
}

// literalAt is literal at path, where the credential's key may also be
// the parent of a {value: V} (wiki.superadminpassword: {value: …}: trial
// 46t's D3).
func literalAt(path []string, v any, parent map[string]any) bool {
	if literal(path[len(path)-1], v, parent) {
		return true
	}
	s, ok := v.(string)
	return ok && len(path) >= 2 && path[len(path)-1] == "value" && importer.SecretKey(path[len(path)-2]) &&
		strings.TrimSpace(s) != "" && !strings.Contains(s, "${") && !strings.Contains(s, "{{") && !importer.NoCredential(path[len(path)-2], s, nil)
}

// envCredential says whether key is the value of a {name: X, value: V}
// item whose name X is a secret's.
func envCredential(key string, parent map[string]any) bool {
	name, ok := parent["name"].(string)
	return key == "value" && ok && importer.SecretLooking(name)
}

// literalsIn replaces each literal credential in values (of the release,
// or moved there from the generated file gen) by its secret variable;
// parent is the map v is in (nil in a list or at the top).
func (c *converter) literalsIn(r *rel, v any, path []string, parent map[string]any, gen *source, byValue map[string]string) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = c.literalsIn(r, x, append(slices.Clone(path), k), t, gen, byValue)
		}
		return t
	case []any:
		for i, x := range t {
			t[i] = c.literalsIn(r, x, append(slices.Clone(path), strconv.Itoa(i)), nil, gen, byValue)
		}
		return t
	}
	if len(path) == 0 {
		return v
	}
	if !literalAt(path, v, parent) {
		if str, ok := v.(string); ok {
			if text := c.credentialsInText(r, path, str, gen, byValue); text != str {
				return text
			}
		}
		c.secretByKey(r, path, v)
		return v
	}
	name := c.secretVar(r, path, parent, v, gen, byValue)
	if _, isString := v.(string); isString {
		// One JSON string whatever the value holds (": ", "#", a quote):
		// khook substitutes the spec's text before it parses it.
		return "${" + name + "|toJson}"
	}
	return "${" + name + "}"
}

// secretVar is the secret variable that stands for the literal credential
// v at path (declared the first time), with a note at its line.
func (c *converter) secretVar(r *rel, path []string, parent map[string]any, v any, gen *source, byValue map[string]string) string {
	value := fmt.Sprint(v)
	if !importer.NamesItself(value) {
		// Not a placeholder that names itself (password: password), which
		// masked would garble every note that says "password".
		c.opts.Redactor.Add(value)
	}
	// The same literal under the same key (one password in two releases)
	// is one variable; under another key it is another (hmacToken and
	// oauthToken sharing a placeholder: trial 46s's D4), so that real,
	// different values can be given.
	// One environment credential used in several places is one variable
	// named after it (trial 46t's D2: a database's password and its
	// client's were two).
	keyPath := path
	if envCredential(path[len(path)-1], parent) {
		keyPath = []string{parent["name"].(string)} // AWS_SECRET_ACCESS_KEY
	}
	where := "release " + r.out.Resolved.Name + " values " + dotted(path)
	described := where
	if ec, ok := c.envCreds.source[value]; ok {
		keyPath, described = ec.path, "environment values "+dotted(ec.path)
	}
	sameKey := value + "\x00" + strings.Join(keyTail(keyPath), ".")
	name, ok := byValue[value] // a secret environment variable's value
	if !ok {
		name, ok = byValue[sameKey]
	}
	if !ok {
		name = c.keyVar(keyPath, "V_")
		byValue[sameKey] = name
	}
	loc := c.literalLoc(r, path, value, gen)
	if !ok {
		// Required: the helmfile always had the value; unset, khook would deploy "".
		c.res.Vars = append(c.res.Vars, &importer.Var{Name: name, Secret: true, Required: true, From: loc,
			Description: "the credential at " + described + ", in plain text in the helmfile (set KHOOK_SECRET_" + name + ")"})
	}
	r.out.Info = append(r.out.Info, Note{Loc: loc, What: where,
		Why: plainTextWhy + ": written as the secret variable " + name + ", never the literal; give it as KHOOK_SECRET_" + name})
	return name
}

// credentialsInText replaces each literal credential in a string that is
// YAML of its own (a Secret manifest in extraResources: |, which the
// chart renders: trial 46z's D1) by its secret variable, in place in the
// text: ${NAME|toJson} is one JSON string on one line whatever the value
// holds, so the text stays the YAML it was. When that cannot be done (a
// credential written as a block, two on one line, a text the spec cannot
// hold as a block) the string is left out, never written, and said.
func (c *converter) credentialsInText(r *rel, path []string, s string, gen *source, byValue map[string]string) string {
	if !strings.Contains(strings.TrimSpace(s), "\n") {
		return s
	}
	type hit struct {
		at     []string
		parent map[string]any
		val    *yaml.Node
	}
	var hits []hit
	lines := strings.Split(s, "\n")
	onLine := map[int]bool{}
	replaceable := true
	dec := yaml.NewDecoder(strings.NewReader(s))
	for {
		var doc yaml.Node
		if dec.Decode(&doc) != nil {
			break
		}
		if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
			continue
		}
		root := doc.Content[0]
		isSecret := mappingValue(root, "kind") == "Secret"
		walkScalars(root, nil, func(inner []string, key, val *yaml.Node, parent map[string]any) {
			data := isSecret && len(inner) == 2 && (inner[0] == "data" || inner[0] == "stringData")
			if !data && !literal(key.Value, val.Value, parent) || val.Value == "" || strings.Contains(val.Value, "{{") || strings.Contains(val.Value, "${") {
				return
			}
			l := val.Line - 1
			if val.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 || l >= len(lines) || val.Column-1 > len(lines[l]) || onLine[l] {
				replaceable = false
			}
			onLine[l] = true
			hits = append(hits, hit{append(slices.Clone(path), inner...), parent, val})
		})
	}
	if len(hits) == 0 {
		return s
	}
	// The spec must hold the text as a block (|), where ${…} stands on its
	// own: trailing blanks would make it a quoted string, which the JSON
	// quotes would end. They mean nothing to the YAML inside, and go, said.
	replaced := func(name func(hit) string) string {
		out := slices.Clone(lines)
		for _, h := range hits {
			l := h.val.Line - 1
			out[l] = out[l][:h.val.Column-1] + "${" + name(h) + "|toJson}"
		}
		return strings.Join(out, "\n")
	}
	trim := func(text string) string {
		ls := strings.Split(text, "\n")
		for i := range ls {
			ls[i] = strings.TrimRight(ls[i], " \t")
		}
		return strings.Join(ls, "\n")
	}
	var trimmed bool
	if replaceable {
		probe := replaced(func(hit) string { return "X" })
		trimmed = !asBlock(probe)
		replaceable = asBlock(probe) || asBlock(trim(probe))
	}
	what := "release " + r.out.Resolved.Name + " values " + dotted(path)
	if !replaceable {
		for _, h := range hits {
			c.opts.Redactor.Add(h.val.Value)
		}
		r.out.NotCarried = append(r.out.NotCarried, Note{Loc: importer.Loc{File: r.st.file, Line: r.lineOf("values")}, What: what,
			Why: "a string of YAML holding credentials the spec cannot write as variables (one written as a block, two on a line): left out, never written; put them in a Secret of their own"})
		return ""
	}
	text := replaced(func(h hit) string { return c.secretVar(r, h.at, h.parent, h.val.Value, gen, byValue) })
	if trimmed {
		text = trim(text)
		r.out.Info = append(r.out.Info, Note{Loc: importer.Loc{File: r.st.file, Line: r.lineOf("values")}, What: what,
			Why: "the blanks that end some of its lines are dropped, so that the spec can hold it as a block with its credentials as variables; they mean nothing to the YAML in it"})
	}
	return text
}

// asBlock: the spec writes text as a block scalar (|).
func asBlock(text string) bool {
	b, err := yaml.Marshal(map[string]string{"k": text})
	return err == nil && strings.HasPrefix(string(b), "k: |")
}

// mappingValue is the scalar under key in a mapping node ("" without).
func mappingValue(m *yaml.Node, key string) string {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key && m.Content[i+1].Kind == yaml.ScalarNode {
			return m.Content[i+1].Value
		}
	}
	return ""
}

// walkScalars calls f for each scalar value of a mapping under n, with its
// path, its key and its mapping as a map of scalars (for literal's
// sibling checks).
func walkScalars(n *yaml.Node, path []string, f func(path []string, key, val *yaml.Node, parent map[string]any)) {
	switch n.Kind {
	case yaml.MappingNode:
		parent := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if v := n.Content[i+1]; v.Kind == yaml.ScalarNode {
				parent[n.Content[i].Value] = v.Value
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := append(slices.Clone(path), k.Value)
			if v.Kind == yaml.ScalarNode {
				f(p, k, v, parent)
			} else {
				walkScalars(v, p, f)
			}
		}
	case yaml.SequenceNode:
		for i, x := range n.Content {
			walkScalars(x, append(slices.Clone(path), strconv.Itoa(i)), f)
		}
	}
}

// secretByKey makes the variable a credential's key refers to a secret
// one (password: ${PGPASS}, a name that looks like none): its value is
// given as a secret, never a default in the spec.
func (c *converter) secretByKey(r *rel, path []string, v any) {
	s, ok := v.(string)
	if !ok || !strings.HasPrefix(s, "${") || !strings.HasSuffix(s, "}") || !importer.SecretKey(path[len(path)-1]) {
		return
	}
	name := strings.TrimSuffix(strings.TrimPrefix(s, "${"), "}")
	for _, x := range c.res.Vars {
		if x.Name != name || x.Secret {
			continue
		}
		if x.Default != nil && *x.Default != "" {
			c.res.Info = append(c.res.Info, Note{Loc: x.From, What: "the default of " + name, Why: "not copied into the spec: " + name + " is the credential at release " + r.out.Resolved.Name + " values " + dotted(path) + ", so it is a secret variable; give it as KHOOK_SECRET_" + name})
		}
		x.Secret, x.Required, x.Default = true, false, nil
		x.Description = "the helmfile's " + name + ", the credential at release " + r.out.Resolved.Name + " values " + dotted(path) + " (set KHOOK_SECRET_" + name + ")"
	}
}

func declaredSecret(vars []*importer.Var, name string) bool {
	for _, v := range vars {
		if v.Name == name {
			return v.Secret
		}
	}
	return false
}

// keyVar names the variable of a value at path by its last two keys
// (auth.password → AUTH_PASSWORD; a name that would start with a digit
// after prefix), unique among the declared ones.
func (c *converter) keyVar(path []string, prefix string) string {
	base := varName(importer.CamelWords(strings.Join(keyTail(path), "_")))
	if base == "" || base[0] >= '0' && base[0] <= '9' {
		base = prefix + base
	}
	name := base
	for n := 2; declared(c.res.Vars, name); n++ {
		name = fmt.Sprintf("%s_%d", base, n)
	}
	return name
}

// keyTail is the last two keys of path, which name its variable.
func keyTail(path []string) []string {
	if len(path) > 2 {
		return path[len(path)-2:]
	}
	return path
}

// literalLoc is the line that writes the literal: in the release's own
// file (inline values: or set:), or in the values template its generated
// file came from, the line with its key and value, else with its value;
// else (it comes from elsewhere: an environment's values) the release's
// values:.
func (c *converter) literalLoc(r *rel, path []string, value string, gen *source) importer.Loc {
	src := source{r.st.file, r.st.src}
	if gen != nil {
		src = *gen
	}
	from := 0
	if gen == nil {
		// the release's own lines first: another release may hold the same
		// value under the same key (trial 46y's D2)
		from = r.line
	}
	if line := lineWithFrom(src.text, path[len(path)-1], value, from); line > 0 {
		return importer.Loc{File: src.file, Line: line}
	}
	return importer.Loc{File: r.st.file, Line: r.lineOf("values")}
}

// lineWithFrom is lineWith over the lines from line from on, else over
// all of text.
func lineWithFrom(text, key, value string, from int) int {
	if from > 1 {
		lines := strings.Split(text, "\n")
		if from <= len(lines) {
			if line := lineWith(strings.Join(lines[from-1:], "\n"), key, value); line > 0 {
				return line + from - 1
			}
		}
	}
	return lineWith(text, key, value)
}

// lineWith is the first line of text with value under key (`key: value`),
// else the first with both, else the first with value; 0 when none has
// it.
func lineWith(text, key, value string) int {
	lines := strings.Split(text, "\n")
	for _, has := range []func(l string) bool{
		func(l string) bool { return isKeyOf(l, key) },
		func(l string) bool { return strings.Contains(l, key) },
		func(string) bool { return true },
	} {
		for i, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), "#") {
				continue // a comment may name the key and hold the value's text (trial 46z's D2)
			}
			if strings.Contains(l, value) && has(l) {
				return i + 1
			}
		}
	}
	return 0
}

// isKeyOf: line l is a mapping entry of key (`key:`, `- "key":`, `{key:`),
// not one whose key only contains it or whose value is its text
// (`rootPassword: password` is no line of password: 46zzd's D1).
func isKeyOf(l, key string) bool {
	for i := 0; ; {
		j := strings.Index(l[i:], key)
		if j < 0 {
			return false
		}
		at, end := i+j, i+j+len(key)
		before := strings.TrimRight(l[:at], `"'`)
		rest := strings.TrimLeft(l[end:], `"'`)
		if (before == "" || strings.ContainsRune(" \t-{,", rune(before[len(before)-1]))) && strings.HasPrefix(strings.TrimLeft(rest, " \t"), ":") {
			return true
		}
		i = end
	}
}

// moveLiterals moves each literal credential of the generated values
// file f, read by h at index at, into the step's values: as its secret
// variable, where a later values source does not set it too.
func (c *converter) moveLiterals(r *rel, h *importer.OutHelm, at int, f *File, byValue map[string]string) {
	var m map[string]any
	if yaml.Unmarshal(f.Data, &m) != nil || m == nil {
		return
	}
	paths := leafPaths(m, func(v any, path []string) bool {
		parent, _ := lookupPath(m, path[:len(path)-1])
		p, _ := parent.(map[string]any)
		return holdsLiteral(v, path, p)
	})
	if len(paths) == 0 {
		return
	}
	gen := c.genSrc[f.Path]
	d := &deriver{c: c}
	for _, path := range paths {
		value, _ := lookupPath(m, path)
		up, _ := lookupPath(m, path[:len(path)-1])
		parent, _ := up.(map[string]any)
		deletePath(m, path)
		if err := d.later(h, at, path); err != nil {
			c.note(r, "values", "values "+dotted(path)+" (in "+f.Path+")", plainTextWhy+", a credential khook substitutes only in the step's values:, where it would win over a later values source ("+strings.TrimPrefix(err.Error(), dotted(path)+": ")+"); left out, never written: write it in values: as a secret variable if the later value is not meant to win")
			continue
		}
		if overridden(h.Values, path) {
			continue // the release's own values: or set: replace it anyway
		}
		if h.Values == nil {
			h.Values = map[string]any{}
		}
		setPath(h.Values, path, c.literalsIn(r, value, path, parent, &gen, byValue))
	}
	head, _, _ := strings.Cut(string(f.Data), "\n")
	if body, err := toYaml(m); err == nil {
		f.Data = []byte(head + "\n" + body)
	}
}

// holdsLiteral says whether v, at path in the map parent, is or holds a
// literal credential.
func holdsLiteral(v any, path []string, parent map[string]any) bool {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if holdsLiteral(x, append(slices.Clone(path), k), t) {
				return true
			}
		}
		return false
	case []any:
		for i, x := range t {
			if holdsLiteral(x, append(slices.Clone(path), strconv.Itoa(i)), nil) {
				return true
			}
		}
		return false
	}
	return len(path) > 0 && literalAt(path, v, parent)
}
