package helmfile

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/khook/khook/internal/importer"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

type converter struct {
	l       *loader
	r       *renderer
	opts    Options
	specDir string
	fail    error
	files   []File
	rels    []*rel
	groups  [][]*rel
	res     *Result
	names   map[string]int
	seen    map[string]bool
	top     string                             // the helmfile as the user named it
	skipped map[string]bool                    // releases whose condition is false
	from    map[*importer.OutStep]importer.Loc // a hook's step: the hook's line
	// Of the hooks' commands (internal/shscript): each one's fate, and the
	// variables their steps refer to.
	commands []importer.Command
	hookVars []*importer.Var
}

// Import reads dir/file (a helmfile.yaml, helmfile.yaml.gotmpl or a
// helmfile.d folder) and returns the khook spec it maps to. A returned
// error is bad input (*InputError) or an internal failure; a Result may
// still hold releases refused or partly carried (Result.Verdict).
//
// A requiredEnv variable that is not set (a token the user's task file
// or secret store provides) does not stop the import: it is rendered as a
// placeholder that becomes a required ${NAME} in the spec. When the
// placeholder lands where the spec cannot refer to a variable (a path, a
// chart, a generated values file) or breaks the rendering, the import
// runs again without placeholders and fails as helmfile does, at the
// requiredEnv's FILE:LINE.
func Import(dir, file string, opts Options) (*Result, error) {
	opts.placeholders = true
	res, used, err := importOnce(dir, file, opts)
	var ie *InputError
	if errors.As(err, &ie) && ie.envUndef {
		// The cause, not what a second try without placeholders meets
		// first (an unset requiredEnv).
		return nil, err
	}
	if used && (err != nil || res == nil) {
		opts.placeholders = false
		res, _, err = importOnce(dir, file, opts)
	}
	return res, err
}

// errPlaceholderLeak is an unset variable's placeholder left in the output.
var errPlaceholderLeak = errors.New("an unset variable's placeholder is left in the spec")

func importOnce(dir, file string, opts Options) (_ *Result, placeholders bool, _ error) {
	res, r, err := importWith(dir, file, opts)
	for _, e := range r.vars() {
		placeholders = placeholders || e.placeholder
	}
	return res, placeholders, err
}

func importWith(dir, file string, opts Options) (*Result, *renderer, error) {
	if opts.Environment == "" {
		opts.Environment = "default"
	}
	r := newRenderer(opts)
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, r, err
	}
	path := abs(root, file)
	if opts.SpecDir == "" {
		opts.SpecDir = filepath.Dir(path)
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			opts.SpecDir = path
		}
	}
	specDir, err := filepath.Abs(opts.SpecDir)
	if err != nil {
		return nil, r, err
	}
	c := &converter{l: &loader{root: root, opts: opts, r: r}, r: r, opts: opts, specDir: specDir, res: &Result{}, names: map[string]int{}, seen: map[string]bool{}, skipped: map[string]bool{}, from: map[*importer.OutStep]importer.Loc{}}
	c.top = c.l.display(path)
	if err := c.tree(path, nil, 0, false); err != nil {
		return nil, r, err
	}
	if c.fail != nil {
		return nil, r, c.fail
	}
	c.link()
	name := opts.Name
	if name == "" {
		name = specName(path)
	}
	doc, err := c.write(name)
	if err != nil {
		return nil, r, err
	}
	declared := map[string]bool{}
	for _, v := range c.res.Vars {
		declared[v.Name] = true
	}
	for _, e := range r.vars() {
		if !e.placeholder {
			continue
		}
		if !declared[e.name] {
			// Read only to decide the rendering (an if, a condition) or to
			// build a path: no ${NAME} can stand for it.
			return nil, r, errPlaceholderLeak
		}
		// In the spec, a generated file, or a note (a step the spec
		// refused, a hook that did not convert).
		var notes bytes.Buffer
		for _, n := range append(append([]Note{}, c.res.NotCarried...), c.res.Info...) {
			notes.WriteString(n.String() + "\n")
		}
		for _, rel := range c.res.Releases {
			// A release's name, chart or version cannot be a variable, and
			// a refused release may have lost it with its step.
			notes.WriteString(rel.Resolved.Name + rel.Resolved.Chart + rel.Resolved.Version + "\n")
			if rel.Verdict == Refused {
				return nil, r, errPlaceholderLeak
			}
			for _, n := range append(append([]Note{}, rel.NotCarried...), rel.Info...) {
				notes.WriteString(n.String() + "\n")
			}
		}
		for _, f := range append([]File{{Data: doc}, {Data: notes.Bytes()}}, c.files...) {
			if bytes.Contains(f.Data, []byte(unsetEnv(e.name))) {
				return nil, r, errPlaceholderLeak
			}
		}
	}
	// Fail closed: a decrypted environment secret never lands in a file.
	for secret, file := range c.l.secrets {
		for _, f := range append([]File{{Path: "the spec", Data: doc}}, c.files...) {
			if bytes.Contains(f.Data, []byte(secret)) {
				return nil, r, fmt.Errorf("%s: a value of the environment's secrets file %s would be written in plaintext into %s; put it in a sops-encrypted values file the release lists under secrets:, nothing written", c.top, file, f.Path)
			}
		}
	}
	c.res.Spec = doc
	c.res.Files = c.files
	return c.res, r, nil
}

// tree loads path (a helmfile or a helmfile.d folder) and its
// sub-helmfiles, which helmfile runs before the file's own releases. A
// sub-helmfile (sub) renders with its parent's environment, so only a
// top-level helmfile must define the chosen one; of a top-level helmfile.d,
// only one file must.
func (c *converter) tree(path string, overrides map[string]any, depth int, sub bool) error {
	if depth > 20 {
		return &InputError{File: c.l.display(path), Msg: "helmfiles: nests more than 20 deep (a cycle?)"}
	}
	st, err := os.Stat(path)
	if err != nil {
		return &InputError{File: c.l.display(path), Msg: "cannot read the helmfile: " + pathErr(err)}
	}
	if st.IsDir() {
		var files []string
		for _, cand := range []string{"helmfile.yaml", "helmfile.yaml.gotmpl"} {
			if _, err := os.Stat(filepath.Join(path, cand)); err == nil {
				return c.tree(filepath.Join(path, cand), overrides, depth+1, sub)
			}
		}
		for _, pat := range []string{"*.yaml", "*.yml", "*.yaml.gotmpl", "*.yml.gotmpl"} {
			m, _ := filepath.Glob(filepath.Join(path, "helmfile.d", pat))
			files = append(files, m...)
		}
		sort.Strings(files)
		if len(files) == 0 {
			return &InputError{File: c.l.display(path), Msg: "no helmfile.yaml, helmfile.yaml.gotmpl or helmfile.d/*.yaml in this folder"}
		}
		// helmfile (pkg/app visitStates) skips a state file that does not
		// define the chosen environment and fails only when no file runs.
		var skipped []Note
		var first *InputError
		for _, f := range files {
			err := c.tree(f, overrides, depth+1, sub)
			var ie *InputError
			if errors.As(err, &ie) && ie.notDefined {
				skipped = append(skipped, Note{Loc: importer.Loc{File: c.l.display(f)}, What: fmt.Sprintf("environment %q is not defined in this file", c.opts.Environment),
					Why: "helmfile skips a helmfile.d file without it, so none of its releases is imported"})
				// Refuse with a file that lists environments to choose from.
				if first == nil || ie.envsKnown && !first.envsKnown {
					first = ie
				}
				continue
			}
			if err != nil {
				return err
			}
		}
		if len(skipped) == len(files) {
			return first
		}
		c.res.Info = append(c.res.Info, skipped...)
		return nil
	}
	s, err := c.l.load(path, overrides, false, sub)
	if err != nil {
		return err
	}
	if err := s.refuseEnv(s.file, 0); err != nil {
		return err
	}
	c.res.NotCarried = append(c.res.NotCarried, s.notCarried...)
	c.res.Info = append(c.res.Info, s.info...)
	for _, h := range s.helmfiles {
		var sub struct {
			Path      string `yaml:"path"`
			Values    []any  `yaml:"values"`
			Selectors []any  `yaml:"selectors"`
		}
		if h.Kind == yaml.ScalarNode {
			sub.Path = h.Value
		} else if err := h.Decode(&sub); err != nil {
			return &InputError{File: s.file, Line: h.Line, Msg: "a helmfiles: entry cannot be read: " + err.Error()}
		}
		if len(sub.Selectors) > 0 {
			c.res.NotCarried = append(c.res.NotCarried, Note{Loc: importer.Loc{File: s.file, Line: h.Line}, What: "helmfiles: " + sub.Path + " selectors",
				Why: "every release of the sub-helmfile is imported; pick them at run time with --selector on the labels"})
		}
		var vals map[string]any
		if len(sub.Values) > 0 {
			var n yaml.Node
			_ = n.Encode(sub.Values)
			if vals, err = c.l.valuesEntries(s, &n, 0, nil); err != nil {
				return err
			}
		}
		matches, _ := filepath.Glob(abs(s.dir, sub.Path))
		if len(matches) == 0 && !hasGlob(sub.Path) {
			matches = []string{abs(s.dir, sub.Path)}
		}
		sort.Strings(matches)
		for _, m := range matches {
			if err := c.tree(m, vals, depth+1, true); err != nil {
				return err
			}
		}
	}
	var group []*rel
	for _, rn := range s.releases {
		r, err := c.release(rn)
		if err != nil {
			return err
		}
		if c.fail != nil {
			return c.fail
		}
		if r != nil {
			group = append(group, r)
		}
	}
	if len(group) > 0 {
		c.groups = append(c.groups, group)
	}
	return nil
}

// release converts one release into its steps.
func (c *converter) release(rn *relNode) (*rel, error) {
	s := rn.st
	var m map[string]any
	if err := rn.node.Decode(&m); err != nil {
		if terr := s.notGotmpl(rn.line); terr != nil {
			return nil, terr
		}
		return nil, &InputError{File: s.file, Line: rn.line, Msg: "a release cannot be read: " + err.Error()}
	}
	m = stringKeys(m).(map[string]any)
	r := &rel{st: s, line: rn.line, m: m, lines: map[string]int{}, out: &Release{File: s.file}}
	offset := rn.line - rn.node.Line
	eachField(rn.node, func(k, v *yaml.Node) { r.lines[k.Value] = k.Line + offset })
	m, err := c.inherit(s, m, nil)
	if err != nil {
		return nil, &InputError{File: s.file, Line: r.lineOf("inherit"), Msg: "release " + str(m["name"]) + ": " + err.Error()}
	}
	r.m = m
	if err := c.templateRelease(s, m, rn.line); err != nil {
		return nil, err
	}
	name, ns := str(m["name"]), str(m["namespace"])
	r.line = realLine(s, rn.line, name)
	if r.line != rn.line {
		for k, l := range r.lines {
			r.lines[k] = l - rn.line + r.line
		}
	}
	r.out.Line = r.line
	r.out.Resolved = Resolved{Name: name, Namespace: ns, Chart: str(m["chart"]), Version: str(m["version"]), Installed: true, Values: map[string]any{}}
	if name == "" {
		r.out.Verdict = Refused
		r.out.NotCarried = append(r.out.NotCarried, Note{Loc: importer.Loc{File: s.file, Line: r.line}, What: "a release without a name", Why: "helmfile needs one too"})
		c.res.Releases = append(c.res.Releases, r.out)
		return nil, nil
	}
	c.res.Releases = append(c.res.Releases, r.out)
	// installed and condition decide whether there is a release at all.
	installed := true
	if v, ok := m["installed"]; ok {
		installed = v != false && str(v) != "false"
		r.out.Carried = append(r.out.Carried, "installed")
	}
	if v, ok := m["installedTemplate"]; ok {
		b, err := strconv.ParseBool(strings.TrimSpace(str(v)))
		if err != nil {
			return nil, &InputError{File: s.file, Line: r.lineOf("installedTemplate"), Msg: fmt.Sprintf("release %s installedTemplate renders to %q, not true or false", name, str(v))}
		}
		installed = b
		r.out.Carried = append(r.out.Carried, "installedTemplate (rendered: "+strconv.FormatBool(b)+")")
	}
	if cond := str(m["condition"]); cond != "" {
		v, err := get(cond, s.values())
		b, isBool := v.(bool)
		switch {
		case err != nil || !isBool:
			return nil, &InputError{File: s.file, Line: r.lineOf("condition"), Msg: fmt.Sprintf("release %s condition %s: the environment's values hold no boolean at that path", name, cond)}
		case !b:
			r.out.Resolved.Installed = false
			r.out.Verdict = Faithful
			c.skipped[name] = true
			r.out.Info = append(r.out.Info, Note{Loc: importer.Loc{File: s.file, Line: r.lineOf("condition")}, What: "release " + name,
				Why: fmt.Sprintf("its condition %s is false in environment %s, so helmfile skips it and no step is written", cond, s.envName)})
			return nil, nil
		}
		r.out.Carried = append(r.out.Carried, "condition "+cond+" (true in environment "+s.envName+")")
	}
	r.step = &importer.OutStep{Name: c.stepName(name, ns)}
	r.out.Step = r.step.Name
	if !installed {
		r.out.Resolved.Installed = false
		r.step.Delete = &importer.OutDelete{Release: name, Namespace: ns}
		r.out.Verdict = Faithful
		r.out.Steps = []string{r.step.Name}
		c.rels = append(c.rels, r)
		return r, nil
	}
	h := &importer.OutHelm{Release: name, Namespace: ns}
	if !c.chart(r, h) {
		r.out.Verdict = Refused
		return nil, nil
	}
	r.step.Helm = h
	r.out.Carried = append(r.out.Carried, "name", "chart")
	if ns != "" {
		r.out.Carried = append(r.out.Carried, "namespace")
	}
	if h.Version != "" {
		r.out.Carried = append(r.out.Carried, "version")
	}
	if err := c.values(r, h); err != nil {
		return nil, err
	}
	if c.fail != nil {
		return nil, c.fail
	}
	c.fields(r, h)
	c.hooks(r)
	r.out.Steps = append(r.out.Steps, r.step.Name)
	for _, st := range append(append([]*importer.OutStep{}, r.before...), r.after...) {
		r.out.Steps = append(r.out.Steps, st.Name)
	}
	c.rels = append(c.rels, r)
	return r, nil
}

func (c *converter) stepName(name, ns string) string {
	n := name
	if c.names[n] > 0 && ns != "" {
		n = ns + "-" + name
	}
	for c.names[n] > 0 {
		n = fmt.Sprintf("%s-%d", n, c.names[n]+1)
	}
	c.names[name]++
	c.names[n]++
	return n
}

// chart resolves a release's chart: repo/name through repositories:, an
// oci:// reference, or a local path (written relative to the spec).
func (c *converter) chart(r *rel, h *importer.OutHelm) bool {
	ref := str(r.m["chart"])
	h.Version = str(r.m["version"])
	switch {
	case ref == "":
		c.note(r, "chart", "chart", "the release names no chart")
		return false
	case strings.HasPrefix(ref, "oci://"):
		h.Chart = ref
		return true
	case strings.HasPrefix(ref, "./"), strings.HasPrefix(ref, "../"), strings.HasPrefix(ref, "/"):
		h.Chart = c.rel(abs(r.st.dir, ref))
		return true
	}
	repoName, chart, ok := strings.Cut(ref, "/")
	repo, known := r.st.repos[repoName]
	if !ok || !known {
		if st, err := os.Stat(abs(r.st.dir, ref)); err == nil && st.IsDir() {
			h.Chart = c.rel(abs(r.st.dir, ref))
			return true
		}
		c.note(r, "chart", "chart "+ref, "names no repository of repositories: and no local folder")
		return false
	}
	if repo.oci {
		h.Chart = "oci://" + strings.TrimSuffix(strings.TrimPrefix(repo.url, "oci://"), "/") + "/" + chart
		return true
	}
	h.Chart, h.Repo = chart, repo.url
	return true
}

// rel is an absolute path as the spec writes it: relative to the spec.
func (c *converter) rel(p string) string {
	rp, err := filepath.Rel(c.specDir, p)
	if err != nil {
		return p
	}
	rp = filepath.ToSlash(rp)
	if !strings.HasPrefix(rp, "../") {
		rp = "./" + rp
	}
	return rp
}

func (c *converter) missingHandler(r *rel) string {
	if h := str(r.m["missingFileHandler"]); h != "" {
		return h
	}
	if r.st.missingFile != "" {
		return r.st.missingFile
	}
	return "Error"
}

// values carries values files, .gotmpl values, inline values, secrets and
// set/setString over, in helm's order: -f files (inline maps among them),
// then secrets, then --set.
func (c *converter) values(r *rel, h *importer.OutHelm) error {
	entries, _ := r.m["values"].([]any)
	secrets, _ := r.m["secrets"].([]any)
	// Inline maps after the last file go to values:, the rest stay in order.
	lastFile := -1
	for i, e := range entries {
		if _, ok := e.(string); ok {
			lastFile = i
		}
	}
	var trailing map[string]any
	for i, e := range entries {
		switch v := e.(type) {
		case map[string]any:
			r.out.Resolved.Values = mergeValues(r.out.Resolved.Values, deepCopy(v))
			if i > lastFile && len(secrets) == 0 {
				trailing = mergeValues(trailing, deepCopy(v))
				continue
			}
			c.generated(r, h, fmt.Sprintf("values[%d] (inline)", i), v, "inline values of release "+r.out.Resolved.Name+" in "+r.st.file+", kept as a file so that later values files still override them as in helmfile")
		case string:
			if err := c.valuesFile(r, h, i, v); err != nil {
				return err
			}
		default:
			c.note(r, "values", fmt.Sprintf("values[%d]", i), "neither a file nor a map")
		}
	}
	if len(entries) > 0 {
		r.out.Carried = append(r.out.Carried, "values")
	}
	for i, e := range secrets {
		p, ok := e.(string)
		if !ok {
			c.note(r, "secrets", fmt.Sprintf("secrets[%d]", i), "not a file path")
			continue
		}
		ap := abs(r.st.dir, p)
		if _, err := os.Stat(ap); err != nil {
			if c.missingHandler(r) != "Error" {
				r.out.Info = append(r.out.Info, Note{Loc: importer.Loc{File: r.st.file, Line: r.lineOf("secrets")}, What: "release " + r.out.Resolved.Name + ": secrets " + p, Why: "missing, skipped as helmfile's missingFileHandler says"})
				continue
			}
			return &InputError{File: r.st.file, Line: r.lineOf("secrets"), Msg: fmt.Sprintf("release %s: the secrets file %s cannot be read: %s", r.out.Resolved.Name, c.r.asWritten(p), pathErr(err))}
		}
		h.ValuesFrom = append(h.ValuesFrom, importer.OutSource{File: c.rel(ap)})
		r.out.Resolved.SecretFiles = append(r.out.Resolved.SecretFiles, c.rel(ap))
	}
	if len(secrets) > 0 {
		r.out.Carried = append(r.out.Carried, "secrets (sops values files, decrypted by khook)")
	}
	set := map[string]any{}
	if l, ok := r.m["set"].([]any); ok {
		c.set(r, "set", l, false, set)
		r.out.Carried = append(r.out.Carried, "set")
	}
	if l, ok := r.m["setString"].([]any); ok {
		c.set(r, "setString", l, true, set)
		r.out.Carried = append(r.out.Carried, "setString")
	}
	set = stringKeys(set).(map[string]any)
	r.out.Resolved.Values = mergeValues(r.out.Resolved.Values, deepCopy(set))
	if trailing != nil || len(set) > 0 {
		h.Values = mergeValues(trailing, set)
	}
	return nil
}

// valuesFile carries one values: file entry: a plain file as valuesFrom;
// a .gotmpl one as valuesFrom {file, path} when it takes values from a
// path inside a YAML file (the Flux HelmRelease pattern), else rendered
// into a file beside the spec.
func (c *converter) valuesFile(r *rel, h *importer.OutHelm, i int, p string) error {
	ap := abs(r.st.dir, p)
	data, err := os.ReadFile(ap)
	if err != nil {
		if c.missingHandler(r) != "Error" {
			r.out.Info = append(r.out.Info, Note{Loc: importer.Loc{File: r.st.file, Line: r.lineOf("values")}, What: "release " + r.out.Resolved.Name + ": values " + p, Why: "missing, skipped as helmfile's missingFileHandler " + c.missingHandler(r) + " says"})
			return nil
		}
		return &InputError{File: r.st.file, Line: c.findLine(r.st, filepath.Base(p), r.lineOf("values")), Msg: fmt.Sprintf("release %s: the values file %s cannot be read: %s", r.out.Resolved.Name, c.r.asWritten(p), pathErr(err))}
	}
	if filepath.Ext(ap) != ".gotmpl" {
		var m map[string]any
		if err := yaml.Unmarshal(data, &m); err != nil {
			return &InputError{File: c.l.display(ap), Line: yamlErrLine(err), Msg: "the values file of release " + r.out.Resolved.Name + " is not a YAML map: " + yamlErrMsg(err)}
		}
		r.out.Resolved.Values = mergeValues(r.out.Resolved.Values, stringKeys(m).(map[string]any))
		h.ValuesFrom = append(h.ValuesFrom, importer.OutSource{File: c.rel(ap)})
		return nil
	}
	mark := len(c.r.reads)
	text, err := c.r.render(c.l.display(ap), 0, filepath.Dir(ap), string(data), releaseData(r.st, r.m))
	if err != nil {
		return r.st.undefinedEnv(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal([]byte(text), &m); err != nil {
		return &InputError{File: c.l.display(ap), Line: yamlErrLine(err), Msg: "after rendering for release " + r.out.Resolved.Name + " it is not a YAML map of values: " + yamlErrMsg(err)}
	}
	if m == nil {
		m = map[string]any{}
	}
	m = stringKeys(m).(map[string]any)
	r.out.Resolved.Values = mergeValues(r.out.Resolved.Values, deepCopy(m))
	for _, rd := range c.r.reads[mark:] {
		for _, g := range rd.gets {
			if deepEqualValues(g.val, m) {
				h.ValuesFrom = append(h.ValuesFrom, importer.OutSource{File: c.rel(rd.path), Path: g.path})
				r.out.Carried = append(r.out.Carried, fmt.Sprintf("values[%d] %s as valuesFrom {file: %s, path: %s}", i, p, c.rel(rd.path), g.path))
				return nil
			}
		}
		if path, ok := findPath(rd.obj, m, ""); ok {
			h.ValuesFrom = append(h.ValuesFrom, importer.OutSource{File: c.rel(rd.path), Path: path})
			r.out.Carried = append(r.out.Carried, fmt.Sprintf("values[%d] %s as valuesFrom {file: %s, path: %s}", i, p, c.rel(rd.path), path))
			return nil
		}
	}
	c.generated(r, h, fmt.Sprintf("values[%d] %s", i, p), m, "the values template "+c.l.display(ap)+" rendered for release "+r.out.Resolved.Name+" (environment "+r.st.envName+"); edit the template and import again")
	if len(c.r.env) > 0 {
		r.out.Info = append(r.out.Info, Note{Loc: importer.Loc{File: r.st.file, Line: r.lineOf("values")}, What: "release " + r.out.Resolved.Name + ": values " + c.l.display(ap),
			Why: "rendered once into " + h.ValuesFrom[len(h.ValuesFrom)-1].File + " with this checkout's environment variables"})
	}
	return nil
}

// generated writes values into a file beside the spec that says where
// they came from.
func (c *converter) generated(r *rel, h *importer.OutHelm, what string, v map[string]any, from string) {
	name := fmt.Sprintf("%s.values-%d.yaml", r.step.Name, len(h.ValuesFrom)+1)
	body, _ := toYaml(v)
	data := []byte("# Generated by khook import helmfile from " + from + ".\n" + body)
	c.files = append(c.files, File{Path: name, Data: data})
	h.ValuesFrom = append(h.ValuesFrom, importer.OutSource{File: "./" + name})
	r.out.Carried = append(r.out.Carried, what+" as "+name)
}

// fields maps the release's other fields (and helmDefaults) or says why not.
func (c *converter) fields(r *rel, h *importer.OutHelm) {
	get := func(k string) (any, bool, bool) { // value, set, from helmDefaults
		if v, ok := r.m[k]; ok {
			return v, true, false
		}
		if n, ok := r.st.defaults[k]; ok {
			var v any
			_ = n.Decode(&v)
			return v, true, true
		}
		return nil, false, false
	}
	b := func(v any) bool { return v == true || str(v) == "true" }
	if v, ok, _ := get("wait"); ok {
		h.Wait = b(v)
		r.out.Carried = append(r.out.Carried, "wait")
	}
	if v, ok := r.m["waitTemplate"]; ok {
		h.Wait = b(strings.TrimSpace(str(v)))
	}
	if v, ok, _ := get("atomic"); ok {
		h.Atomic = b(v)
		r.out.Carried = append(r.out.Carried, "atomic")
	}
	createNS := true
	if v, ok, _ := get("createNamespace"); ok {
		createNS = b(v)
	}
	h.CreateNamespace = createNS && h.Namespace != ""
	if v, ok, _ := get("timeout"); ok {
		if n, err := strconv.Atoi(str(v)); err == nil && n > 0 {
			r.step.Timeout = strconv.Itoa(n) + "s"
			r.out.Carried = append(r.out.Carried, "timeout")
		}
	}
	labels := map[string]string{}
	for k, v := range r.st.commonLabels {
		labels[k] = v
	}
	if l, ok := r.m["labels"].(map[string]any); ok {
		for k, v := range l {
			labels[k] = str(v)
		}
	}
	for _, k := range sortedKeys(labels) {
		if !labelName.MatchString(strings.TrimPrefix(k, k[:strings.LastIndex(k, "/")+1])) || (labels[k] != "" && !labelName.MatchString(labels[k])) {
			c.note(r, "labels", "labels."+k+"="+labels[k], "not a Kubernetes label, which khook step labels must be: select the step by its name instead")
			delete(labels, k)
		}
	}
	if len(labels) > 0 {
		r.step.Labels = labels
		r.out.Carried = append(r.out.Carried, "labels (khook step labels, for --selector)")
	}
	if v, ok, _ := get("force"); ok && b(v) {
		r.step.OnImmutable = "recreate"
		c.infof(r, "force", "force", "helm --force replaces objects it cannot update; khook recreates only objects whose immutable fields changed (onImmutable: recreate)")
	}
	explain := map[string]string{
		"waitForJobs":                "khook's wait: true waits for the release's objects to be ready but not for its Jobs to complete; add a wait step (for: condition=Complete) where a later step needs a Job's result",
		"cleanupOnFail":              "khook's atomic: true rolls a failed upgrade back; without it the failed release stays for the next apply to fix",
		"recreatePods":               "Helm 3 and later ignore it",
		"disableValidation":          "khook validates the rendered objects on the server; a chart that needs validation off fails in plan, not in apply",
		"disableValidationOnInstall": "khook validates the rendered objects on the server; a chart that needs validation off fails in plan, not in apply",
		"disableOpenAPIValidation":   "khook validates the rendered objects on the server; a chart that needs validation off fails in plan, not in apply",
		"kubeContext":                "khook runs against the --context (or kubeconfig) given when it runs",
		"historyMax":                 "khook keeps Helm's release history at Helm's default",
		"skipDeps":                   "a local chart with dependencies needs a Chart.lock, or dependencyUpdate: true",
		"skipSchemaValidation":       "khook validates values against the chart's schema as Helm does",
		"reuseValues":                "khook always installs the values the spec gives, never the previous release's",
		"missingFileHandler":         "applied while importing: a missing file was skipped or refused as helmfile does",
		"name":                       "", "namespace": "", "chart": "", "version": "", "values": "", "secrets": "", "set": "", "setString": "",
		"needs": "", "installed": "", "installedTemplate": "", "condition": "", "labels": "", "wait": "", "waitTemplate": "",
		"atomic": "", "createNamespace": "", "timeout": "", "hooks": "", "force": "", "inherit": "",
		"conditionTemplate": "", "verify": "", "devel": "", "args": "", "postRenderer": "", "postRendererArgs": "", "jsonPatches": "", "strategicMergePatches": "",
	}
	for _, k := range sortedKeys(r.m) {
		why, known := explain[k]
		switch {
		case known && why != "":
			c.infof(r, k, k, why)
		case known:
		default:
			c.note(r, k, k, "no khook equivalent")
		}
	}
	for _, k := range sortedKeys(r.st.defaults) {
		if _, own := r.m[k]; own {
			continue
		}
		switch k {
		case "wait", "atomic", "createNamespace", "timeout", "force":
		case "args", "postRenderer", "postRendererArgs": // with the release's own, below
		case "verify", "devel":
			if b(valueOf(r.st.defaults[k])) {
				c.note(r, "", "helmDefaults."+k, "khook installs the exact version without "+k)
			}
		default:
			n := Note{Loc: importer.Loc{File: r.st.file, Line: r.st.defaultsLine[k]}, What: "helmDefaults." + k, Why: explain[k]}
			if _, ok := explain[k]; !ok {
				n.Why = "no khook equivalent; it does not change what is installed"
			}
			if n.Why != "" && !c.seen[n.String()] {
				c.seen[n.String()] = true
				c.res.Info = append(c.res.Info, n)
			}
		}
	}
	c.helmArgs(r, h)
	c.postRenderer(r, h)
	c.patches(r, h)
	if v, ok := r.m["verify"]; ok && b(v) {
		c.note(r, "verify", "verify", "khook does not verify chart provenance")
	}
	if v, ok := r.m["devel"]; ok && b(v) && h.Version == "" {
		c.note(r, "devel", "devel", "khook installs the exact version given: pin one")
	}
}

// labelName is a label's name (after any prefix/) or value.
var labelName = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)

func valueOf(n *yaml.Node) any {
	var v any
	if n != nil {
		_ = n.Decode(&v)
	}
	return v
}

// link turns needs into step needs: name, namespace/name or
// context/namespace/name; a wrong or missing namespace resolves by the
// release's unique name, with a warning. Sub-helmfiles run in sequence:
// each group's releases need the previous group's.
func (c *converter) link() {
	byName := map[string][]*rel{}
	for _, r := range c.rels {
		byName[r.out.Resolved.Name] = append(byName[r.out.Resolved.Name], r)
	}
	for _, r := range c.rels {
		needs, _ := r.m["needs"].([]any)
		for _, x := range needs {
			need := str(x)
			parts := strings.Split(need, "/")
			name, ns := parts[len(parts)-1], ""
			if len(parts) > 1 {
				ns = parts[len(parts)-2]
			}
			var found *rel
			cands := byName[name]
			for _, cand := range cands {
				if cand.out.Resolved.Namespace == ns || (ns == "" && cand.out.Resolved.Namespace == r.out.Resolved.Namespace) {
					found = cand
				}
			}
			if found == nil && len(cands) == 1 {
				found = cands[0]
				where := fmt.Sprintf("no release %s is in namespace %q", name, ns)
				if ns == "" {
					where = fmt.Sprintf("it names no namespace and no release %s is in this release's namespace %q", name, r.out.Resolved.Namespace)
				}
				r.out.Info = append(r.out.Info, Note{Loc: importer.Loc{File: r.st.file, Line: r.lineOf("needs")}, What: "release " + r.out.Resolved.Name + ": needs " + need,
					Why: fmt.Sprintf("%s; resolved to the only release named %s (namespace %q)", where, name, cands[0].out.Resolved.Namespace)})
			}
			if found == nil && len(cands) == 0 && c.skipped[name] {
				r.out.Info = append(r.out.Info, Note{Loc: importer.Loc{File: r.st.file, Line: r.lineOf("needs")}, What: "release " + r.out.Resolved.Name + ": needs " + need,
					Why: "that release's condition is false in this environment, so there is no step to wait for"})
				continue
			}
			if found == nil {
				why := "no release of the helmfile has that name"
				if len(cands) > 1 {
					why = "several releases have that name and none is in that namespace"
				}
				r.out.NotCarried = append(r.out.NotCarried, Note{Loc: importer.Loc{File: r.st.file, Line: r.lineOf("needs")}, What: "release " + r.out.Resolved.Name + ": needs " + need, Why: why})
				continue
			}
			r.out.Resolved.Needs = append(r.out.Resolved.Needs, found.out.Resolved.Namespace+"/"+found.out.Resolved.Name)
			first := r.step
			if len(r.before) > 0 {
				first = r.before[0]
			}
			for _, t := range found.terminal() {
				first.Needs = appendUnique(first.Needs, t)
			}
		}
	}
	for gi := 1; gi < len(c.groups); gi++ {
		for _, r := range c.groups[gi] {
			first := r.step
			if len(r.before) > 0 {
				first = r.before[0]
			}
			for _, p := range c.groups[gi-1] {
				for _, t := range p.terminal() {
					first.Needs = appendUnique(first.Needs, t)
				}
			}
		}
	}
}

func (r *rel) terminal() []string {
	out := []string{r.step.Name}
	for _, a := range r.after {
		out = append(out, a.Name)
	}
	return out
}

func appendUnique(l []string, s string) []string {
	for _, x := range l {
		if x == s {
			return l
		}
	}
	return append(l, s)
}

// specName turns a helmfile's directory name into a metadata.name.
func specName(file string) string {
	dir := filepath.Base(filepath.Dir(file))
	if st, err := os.Stat(file); err == nil && st.IsDir() {
		dir = filepath.Base(file)
	}
	var b strings.Builder
	for _, r := range strings.ToLower(dir) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0:
			b.WriteRune('-')
		}
	}
	if s := strings.Trim(b.String(), "-"); s != "" {
		return s
	}
	return "imported"
}

// findPath is the dotted path inside obj whose value equals want ("" for
// obj itself), searched breadth first through maps.
func findPath(obj any, want map[string]any, prefix string) (string, bool) {
	type item struct {
		v    any
		path string
	}
	queue := []item{{obj, prefix}}
	for n := 0; len(queue) > 0 && n < 10000; n++ {
		it := queue[0]
		queue = queue[1:]
		m, ok := it.v.(map[string]any)
		if !ok {
			continue
		}
		if it.path != "" && deepEqualValues(m, want) {
			return it.path, true
		}
		for _, k := range sortedKeys(m) {
			if strings.Contains(k, ".") {
				continue
			}
			p := k
			if it.path != "" {
				p = it.path + "." + k
			}
			queue = append(queue, item{m[k], p})
		}
	}
	return "", false
}

// helmArgs maps the helm arguments: helmDefaults.args, then a release's
// own args (helmfile v1.8.0 refuses that field; older states carry it).
// --include-crds together with --no-hooks, without --skip-crds, is the
// bootstrap "crds" helmfile: run as helmfile template piped through
// yq select(.kind == "CustomResourceDefinition") to kubectl apply
// --server-side, it puts the chart's CRDs in the cluster and nothing else,
// which is crds: only. --include-crds alone is what a helm step does
// anyway, --skip-crds is crds: skip; any other argument has no khook
// equivalent.
func (c *converter) helmArgs(r *rel, h *importer.OutHelm) {
	type arg struct {
		text, from string
		line       int
	}
	var args []arg
	for _, src := range []struct {
		v    any
		from string
		line int
	}{
		{valueOf(r.st.defaults["args"]), "helmDefaults.args", r.st.defaultsLine["args"]},
		{r.m["args"], "args", r.lineOf("args")},
	} {
		list, _ := src.v.([]any)
		for _, x := range list {
			for _, a := range strings.Fields(str(x)) {
				args = append(args, arg{a, src.from, src.line})
			}
		}
	}
	has := map[string]bool{}
	for _, a := range args {
		has[a.text] = true
	}
	// The post-renderer may do the CRD select itself (then hooks are
	// rendered, but filtered out with everything else).
	text, _, _ := postRendererOf(r)
	selects := selectsCRDs(text)
	crdsOnly := has["--include-crds"] && (has["--no-hooks"] || selects) && !has["--skip-crds"]
	flags := "--include-crds --no-hooks"
	if !has["--no-hooks"] {
		flags = "--include-crds with a post-renderer selecting the CustomResourceDefinitions"
	}
	for _, a := range args {
		switch {
		case crdsOnly && (a.text == "--include-crds" || a.text == "--no-hooks"):
			if a.text == "--no-hooks" {
				continue
			}
			h.CRDs = "only"
			// No release: nothing to create a namespace for, roll back or
			// wait on; the CRDs are cluster-scoped.
			h.CreateNamespace, h.Atomic, h.Wait = false, false, false
			const why = "written as crds: only; this assumes the helmfile is run as helmfile template | yq select(.kind == \"CustomResourceDefinition\") | kubectl apply --server-side: the chart's CRDs (crds/ and templated, with these values) are applied, no release is installed, no hook runs"
			if a.from == "args" {
				c.infoAt(r, a.line, "args "+flags, why)
			} else if n := (Note{Loc: importer.Loc{File: r.st.file, Line: a.line}, What: "helmDefaults.args " + flags, Why: why}); !c.seen[n.String()] {
				c.seen[n.String()] = true
				c.res.Info = append(c.res.Info, n)
			}
			r.out.Carried = append(r.out.Carried, flags+" as crds: only")
		case a.text == "--include-crds":
			c.infoAt(r, a.line, a.from+" "+a.text, "a khook helm step applies the chart's crds/ (server-side) by default")
		case a.text == "--skip-crds":
			h.CRDs = "skip"
			r.out.Carried = append(r.out.Carried, a.from+" --skip-crds as crds: skip")
		case a.text == "--no-hooks":
			c.noteAt(r, a.line, a.from+" "+a.text, "a khook helm step installs the whole chart and runs its hooks; only together with --include-crds (and without --skip-crds) does it mean the CRDs-only bootstrap that crds: only is")
		default:
			c.noteAt(r, a.line, a.from+" "+a.text, "extra helm arguments have no khook equivalent")
		}
	}
}

// patches maps a release's jsonPatches and strategicMergePatches (which
// helmfile applies with kustomize after rendering the chart) to a
// kustomize post-renderer: each inline or read from the file it names.
func (c *converter) patches(r *rel, h *importer.OutHelm) {
	var out []importer.OutKPatch
	for _, key := range []string{"jsonPatches", "strategicMergePatches"} {
		items, _ := r.m[key].([]any)
		for i, it := range items {
			what := fmt.Sprintf("%s[%d]", key, i)
			if p, ok := it.(string); ok { // a file holding the patch
				data, err := os.ReadFile(abs(r.st.dir, p))
				if err != nil {
					c.note(r, key, what, "the file "+p+" cannot be read: "+pathErr(err))
					continue
				}
				var v any
				if err := yaml.Unmarshal(data, &v); err != nil {
					c.note(r, key, what, "the file "+p+" is not YAML: "+yamlErrMsg(err))
					continue
				}
				it = stringKeys(v)
			}
			m, _ := it.(map[string]any)
			if m == nil {
				c.note(r, key, what, "neither a patch nor a file name")
				continue
			}
			if key == "strategicMergePatches" {
				body, _ := toYaml(m)
				out = append(out, importer.OutKPatch{Patch: body})
				continue
			}
			ops, hasOps := m["patch"].([]any)
			target, _ := m["target"].(map[string]any)
			t := map[string]string{}
			bad := ""
			for k, v := range target {
				switch k {
				case "group", "version", "kind", "name", "namespace", "labelSelector", "annotationSelector":
					t[k] = str(v)
				default:
					bad = k
				}
			}
			switch {
			case !hasOps:
				c.note(r, key, what, "a JSON patch from a path: is not carried; write its operations under patch:")
				continue
			case bad != "":
				c.note(r, key, what, "the target field "+bad+" has no khook equivalent")
				continue
			}
			body, _ := toYaml(ops)
			p := importer.OutKPatch{Patch: body}
			if len(t) > 0 {
				p.Target = t
			}
			out = append(out, p)
		}
	}
	if len(out) > 0 {
		h.PostRenderers = []importer.OutPostRenderer{{Kustomize: &importer.OutKustomize{Patches: out}}}
		r.out.Carried = append(r.out.Carried, "jsonPatches/strategicMergePatches as a kustomize post-renderer")
	}
}

// postRenderer is helmfile's post-renderer command (the release's, else
// helmDefaults'). khook runs no commands; the one the CRDs-only helmfiles
// give, a yq select of the CustomResourceDefinitions, is what crds: only
// does already.
func (c *converter) postRenderer(r *rel, h *importer.OutHelm) {
	text, from, line := postRendererOf(r)
	if text == "" {
		return
	}
	cmd := strings.Fields(text)[0]
	if h.CRDs == "only" && selectsCRDs(text) {
		n := Note{Loc: importer.Loc{File: r.st.file, Line: line}, What: from + " " + cmd, Why: "it keeps the CustomResourceDefinitions of the rendered chart, which crds: only applies already"}
		if !c.seen[n.String()] {
			c.seen[n.String()] = true
			c.res.Info = append(c.res.Info, n)
		}
		return
	}
	c.noteAt(r, line, from+" "+cmd, "a post-renderer command changes what is installed and khook runs no commands: write its changes as postRenderers: [{kustomize: {patches: …}}]")
}

// postRendererOf is the release's post-renderer command line (its own,
// else helmDefaults'), where it is written, or "".
func postRendererOf(r *rel) (text, from string, line int) {
	cmd, line, from := r.m["postRenderer"], r.lineOf("postRenderer"), "postRenderer"
	args := r.m["postRendererArgs"]
	if cmd == nil {
		if n := r.st.defaults["postRenderer"]; n != nil {
			cmd, line, from = valueOf(n), r.st.defaultsLine["postRenderer"], "helmDefaults.postRenderer"
			args = valueOf(r.st.defaults["postRendererArgs"])
		}
	}
	if cmd == nil || strings.TrimSpace(str(cmd)) == "" {
		return "", "", 0
	}
	text = str(cmd)
	if l, ok := args.([]any); ok {
		for _, a := range l {
			text += " " + str(a)
		}
	}
	return text, from, line
}

// selectCRDs is a yq (or jq) filter that keeps the CustomResourceDefinitions.
var selectCRDs = regexp.MustCompile(`select\(\s*\.kind\s*==\s*"CustomResourceDefinition"\s*\)`)

// selectsCRDs tells a post-renderer that keeps only the CRDs.
func selectsCRDs(cmdline string) bool {
	return selectCRDs.MatchString(cmdline) && !strings.Contains(cmdline, "del(")
}
