package helmfile

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/khook/khook/internal/importer"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/spec"
	"os"
	"path/filepath"
	"slices"
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
	// chartCRDs are the charts whose crds/ a hook applies before the release (importer.Model.ChartCRDs)
	chartCRDs []importer.PulledChart
	// firstContext is the first part that names a kubeContext: (kubeContext).
	firstContext *state
	// auths are the steps that install from a repository with credentials.
	auths   []authUse
	logins  []importer.Login // the registries hooks log in to
	globals []*stateHooks    // each helmfile's own hooks
	// derived are the values computed from a secret (deriveSecrets):
	// value → the secret variable written instead.
	derived map[string]string
	// genSrc is where each generated values file's values are written
	// in the helmfile: its file and text.
	genSrc   map[string]source
	envCreds envCreds  // the environment's literal credentials (literal.go)
	in       [2]string // convert's dir and file, for probe (refs.go)
}

// source is a file of the helmfile as shown and its text.
type source struct{ file, text string }

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
//
// The environment is helmfile's: Options.Environment, else
// HELMFILE_ENVIRONMENT, else default (environment); Result says which
// and whence.
func Import(dir, file string, opts Options) (*Result, error) {
	name, from := environment(opts)
	opts.Environment = name
	if opts.Redactor == nil {
		opts.Redactor = redact.New()
	}
	opts.memo = &volatileMemo{}
	res, err := importEnv(dir, file, opts)
	err = maskError(opts.Redactor, err)
	var ie *InputError
	if errors.As(err, &ie) && from == EnvVariable && (ie.envUndef || ie.notDefined || strings.Contains(ie.Msg, "is not defined")) {
		ie.Msg += fmt.Sprintf(" (environment %q is HELMFILE_ENVIRONMENT's, which helmfile uses when no --environment is given)", name)
	}
	if res != nil {
		res.Environment, res.EnvironmentFrom = name, from
	}
	return res, err
}

func importEnv(dir, file string, opts Options) (*Result, error) {
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

// maskError is err with every secret the import registered masked: an
// *InputError keeps its type, its sentence masked.
func maskError(rd *redact.Redactor, err error) error {
	var ie *InputError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ie):
		ie.File, ie.Msg = rd.String(ie.File), rd.String(ie.Msg)
		return err
	}
	return rd.Error(err)
}

// maskNotes masks every secret the import registered in its notes, which
// the spec's header and the command's stderr print.
func (c *converter) maskNotes() {
	mask := func(ns []Note) {
		for i := range ns {
			ns[i].What, ns[i].Why = c.opts.Redactor.String(ns[i].What), c.opts.Redactor.String(ns[i].Why)
		}
	}
	mask(c.res.NotCarried)
	mask(c.res.Info)
	for _, r := range c.res.Releases {
		mask(r.NotCarried)
		mask(r.Info)
	}
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

// convert reads the helmfile tree into releases and their steps, linked,
// before anything is written.
func convert(dir, file string, opts Options) (*converter, string, error) {
	if opts.Environment == "" {
		opts.Environment = "default"
	}
	r := newRenderer(opts)
	root, err := filepath.Abs(dir)
	if err != nil {
		return &converter{r: r}, "", err
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
		return &converter{r: r}, "", err
	}
	c := &converter{l: &loader{root: root, opts: opts, r: r}, r: r, opts: opts, specDir: specDir, res: &Result{}, names: map[string]int{}, seen: map[string]bool{}, skipped: map[string]bool{}, from: map[*importer.OutStep]importer.Loc{}}
	c.top = c.l.display(path)
	c.in = [2]string{dir, file}
	start := path
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		def, err := c.defaultState(path)
		if err != nil {
			return &converter{r: r}, "", err
		}
		if def != "" {
			start = def
		}
	}
	if _, err := c.tree(start, nil, 0, false, nil); err != nil {
		return c, path, err
	}
	if c.fail != nil {
		return c, path, c.fail
	}
	c.link()
	c.linkHooks()
	c.hookLogins()
	c.volatileNotes()
	return c, path, nil
}

func importWith(dir, file string, opts Options) (*Result, *renderer, error) {
	c, path, err := convert(dir, file, opts)
	if err != nil {
		return nil, c.r, err
	}
	r := c.r
	if err := c.deriveSecrets(dir, file); err != nil {
		return nil, r, err
	}
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
	if err := c.leaked(doc); err != nil {
		return nil, r, err
	}
	c.res.Spec = doc
	c.res.Files = c.files
	return c.res, r, nil
}

// kubeContext says, of a helmfile that names another kubeContext than an
// earlier part did, that its releases go to another cluster there, which
// one khook run does not (rriv-cloud: the app and vault clusters).
func (c *converter) kubeContext(s *state) {
	if s.kubeContext == "" {
		return
	}
	if c.firstContext == nil {
		c.firstContext = s
		return
	}
	if first := c.firstContext; first.kubeContext != s.kubeContext {
		c.res.NotCarried = append(c.res.NotCarried, Note{Loc: importer.Loc{File: s.file, Line: s.kubeContextLine}, What: "kubeContext: " + s.kubeContext,
			Why: "its releases go to context " + s.kubeContext + " and those of " + first.file + " to " + first.kubeContext + ", and one khook run works on one cluster: import each into a spec of its own"})
	}
}

// tree loads path (a helmfile or a helmfile.d folder) and its
// sub-helmfiles, which helmfile runs before the file's own releases. A
// sub-helmfile (sub) renders with its parent's environment, so only a
// top-level helmfile must define the chosen one; of a top-level helmfile.d,
// only one file must.
//
// Order is helmfile's (pkg/app visitStatesWithContext): prev are the
// releases that must be done before this file's releases start; tail are
// those whose end means the whole file (and its sub-helmfiles) is done.
func (c *converter) tree(path string, overrides map[string]any, depth int, sub bool, prev []*rel) (tail []*rel, _ error) {
	if depth > 20 {
		return nil, &InputError{File: c.l.display(path), Msg: "helmfiles: nests more than 20 deep (a cycle?)"}
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, &InputError{File: c.l.display(path), Msg: "cannot read the helmfile: " + pathErr(err)}
	}
	if st.IsDir() {
		return c.treeDir(path, overrides, depth, sub, prev)
	}
	s, err := c.l.load(path, overrides, false, sub)
	if err != nil {
		return nil, err
	}
	if err := s.refuseEnv(s.file, 0); err != nil {
		return nil, err
	}
	c.res.NotCarried = append(c.res.NotCarried, s.notCarried...)
	c.res.Info = append(c.res.Info, s.info...)
	c.kubeContext(s)
	prev, err = c.subHelmfiles(s, depth, prev)
	if err != nil {
		return nil, err
	}
	var group []*rel
	for _, rn := range s.releases {
		r, err := c.release(rn)
		if err != nil {
			return nil, err
		}
		if c.fail != nil {
			return nil, c.fail
		}
		if r != nil {
			r.prev = prev
			group = append(group, r)
		}
	}
	c.globalHooks(s, group, prev)
	if len(group) > 0 {
		return group, nil
	}
	return prev, nil
}

// parallel runs each of files as helmfile runs the files of a helmfile.d
// or of one helmfiles: glob: all at once after prev, unless
// --sequential-helmfiles; tail is the union of their tails.
func (c *converter) parallel(files []string, overrides map[string]any, depth int, sub bool, prev []*rel, each func(f string, err error) (skip bool, _ error)) ([]*rel, error) {
	var tail []*rel
	for _, f := range files {
		t, err := c.tree(f, overrides, depth, sub, prev)
		if skip, err := each(f, err); err != nil || skip {
			if err != nil {
				return nil, err
			}
			continue
		}
		if c.opts.SequentialHelmfiles {
			prev, tail = t, t
			continue
		}
		for _, r := range t {
			if !slices.Contains(prev, r) { // a file without releases hands prev on
				tail = appendRel(tail, r)
			}
		}
	}
	if tail == nil {
		return prev, nil
	}
	return tail, nil
}

func appendRel(l []*rel, r *rel) []*rel {
	for _, x := range l {
		if x == r {
			return l
		}
	}
	return append(l, r)
}

// release converts one release into its steps.
func (c *converter) release(rn *relNode) (*rel, error) {
	s := rn.st
	var m map[string]any
	if err := decode(rn.node, &m); err != nil {
		if terr := s.notGotmpl(rn.line); terr != nil {
			return nil, terr
		}
		return nil, &InputError{File: s.file, Line: rn.line, Msg: "a release cannot be read: " + err.Error()}
	}
	m = stringKeys(m).(map[string]any)
	r := &rel{st: s, line: rn.line, m: m, lines: map[string]int{}, out: &Release{File: s.file}}
	offset := rn.line - rn.node.Line
	eachField(rn.node, func(k, v *yaml.Node) {
		r.lines[k.Value] = k.Line + offset
		if k.Value == "hooks" && v.Kind == yaml.SequenceNode {
			for _, h := range v.Content {
				r.hookLines = append(r.hookLines, h.Line+offset)
			}
		}
	})
	m, err := c.inherit(s, m, nil)
	if err != nil {
		return nil, &InputError{File: s.file, Line: r.lineOf("inherit"), Msg: "release " + str(m["name"]) + ": " + err.Error()}
	}
	r.m = m
	if err := c.templateRelease(s, m, rn.line); err != nil {
		return nil, err
	}
	if s.overrideNS != "" {
		// helmfile v1.8.0 pkg/state ApplyOverrides: the file's namespace:
		// over each release's, after its templates rendered
		m["namespace"] = s.overrideNS
	}
	name, ns := str(m["name"]), str(m["namespace"])
	r.line = realLine(s, rn.line, name)
	if r.line != rn.line {
		for k, l := range r.lines {
			r.lines[k] = l - rn.line + r.line
		}
		for i, l := range r.hookLines {
			r.hookLines[i] = l - rn.line + r.line
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
	installed, skip, err := c.installed(r, name)
	if err != nil || skip {
		return nil, err
	}
	r.step = &importer.OutStep{Name: c.stepName(name, ns)}
	r.out.Step = r.step.Name
	if ns == "" {
		c.noNamespace(r, installed)
	}
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

// subHelmfiles loads the state's helmfiles: entries, which helmfile runs
// before the file's own releases, one entry after the other (the files of
// one glob in parallel); the tail of the last is returned.
func (c *converter) subHelmfiles(s *state, depth int, prev []*rel) ([]*rel, error) {
	if n := len(s.helmfiles); n > 1 || n == 1 && len(s.releases) > 0 {
		c.res.Info = append(c.res.Info, Note{Loc: importer.Loc{File: s.file, Line: s.helmfiles[0].Line}, What: "helmfiles:",
			Why: "helmfile runs each entry to its end before the next, and this file's own releases after them all; written as needs, which helmfile build does not list"})
	}
	for _, h := range s.helmfiles {
		var sub struct {
			Path      string `yaml:"path"`
			Values    []any  `yaml:"values"`
			Selectors []any  `yaml:"selectors"`
		}
		if h.Kind == yaml.ScalarNode {
			sub.Path = h.Value
		} else if err := decode(h, &sub); err != nil {
			return nil, &InputError{File: s.file, Line: h.Line, Msg: "a helmfiles: entry cannot be read: " + err.Error()}
		}
		if len(sub.Selectors) > 0 {
			c.res.NotCarried = append(c.res.NotCarried, Note{Loc: importer.Loc{File: s.file, Line: h.Line}, What: "helmfiles: " + sub.Path + " selectors",
				Why: "every release of the sub-helmfile is imported; pick them at run time with --selector on the labels"})
		}
		var vals map[string]any
		if len(sub.Values) > 0 {
			var n yaml.Node
			_ = n.Encode(sub.Values)
			var err error
			if vals, err = c.l.valuesEntries(s, &n, 0, nil); err != nil {
				return nil, err
			}
		}
		matches, _ := filepath.Glob(abs(s.dir, sub.Path))
		if len(matches) == 0 && !hasGlob(sub.Path) {
			matches = []string{abs(s.dir, sub.Path)}
		}
		sort.Strings(matches)
		if hasGlob(sub.Path) {
			c.parallelNote(importer.Loc{File: s.file, Line: h.Line}, len(matches))
		}
		var err error
		prev, err = c.parallel(matches, vals, depth+1, true, prev, func(_ string, err error) (bool, error) { return false, err })
		if err != nil {
			return nil, err
		}
	}
	return prev, nil
}

// installed is what installed, installedTemplate and condition make of a
// release: installed or not (a delete step), or skipped (no step) when
// its condition is false.
func (c *converter) installed(r *rel, name string) (installed, skip bool, err error) {
	s, m := r.st, r.m
	installed = true
	if v, ok := m["installed"]; ok {
		installed = v != false && str(v) != "false"
		r.out.Carried = append(r.out.Carried, "installed")
	}
	if v, ok := m["installedTemplate"]; ok {
		b, err := strconv.ParseBool(strings.TrimSpace(str(v)))
		if err != nil {
			return false, false, &InputError{File: s.file, Line: r.lineOf("installedTemplate"), Msg: fmt.Sprintf("release %s installedTemplate renders to %q, not true or false", name, str(v))}
		}
		installed = b
		r.out.Carried = append(r.out.Carried, "installedTemplate (rendered: "+strconv.FormatBool(b)+")")
	}
	if cond := str(m["condition"]); cond != "" {
		v, err := get(cond, s.values())
		b, isBool := v.(bool)
		switch {
		case err != nil || !isBool:
			return false, false, &InputError{File: s.file, Line: r.lineOf("condition"), Msg: fmt.Sprintf("release %s condition %s: the environment's values hold no boolean at that path", name, cond)}
		case !b:
			r.out.Resolved.Installed = false
			r.out.Verdict = Faithful
			c.skipped[name] = true
			with := ""
			if len(c.r.env) > 0 {
				// OWNSUITE_APP_DOCS=true would enable it (trial 46zg's N1)
				with = ", rendered with this checkout's environment variables (set them as the run would and import again)"
			}
			r.out.Info = append(r.out.Info, Note{Loc: importer.Loc{File: s.file, Line: r.lineOf("condition")}, What: "release " + name,
				Why: fmt.Sprintf("its condition %s is false in environment %s%s, so helmfile skips it and no step is written", cond, s.envName, with)})
			return false, true, nil
		}
		r.out.Carried = append(r.out.Carried, "condition "+cond+" (true in environment "+s.envName+")")
	}
	return installed, false, nil
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
		c.ociAuth(r, h)
		return true
	case strings.HasPrefix(ref, "./"), strings.HasPrefix(ref, "../"), strings.HasPrefix(ref, "/"):
		c.localChart(r, h, abs(r.st.dir, ref))
		return true
	}
	repoName, chart, ok := strings.Cut(ref, "/")
	repo, known := r.st.repos[repoName]
	if !ok || !known {
		if st, err := os.Stat(abs(r.st.dir, ref)); err == nil && st.IsDir() {
			c.localChart(r, h, abs(r.st.dir, ref))
			return true
		}
		if !ok || strings.ContainsAny(repoName, ":@") {
			c.note(r, "chart", "chart "+ref, "names no repository of repositories: and no local folder")
			return false
		}
		// helmfile leaves an undeclared repository to helm's own config
		// (a helm repo add run before it): its URL is a required variable.
		v := importer.RepoVar(repoName, importer.Loc{File: r.st.file, Line: r.lineOf("chart")}, "the helmfile does not declare it under repositories:")
		if !declared(c.res.Vars, v.Name) {
			c.res.Vars = append(c.res.Vars, v)
		}
		c.infof(r, "chart", "chart "+ref, "the helmfile declares no repository "+repoName+" (helmfile leaves it to a `helm repo add` made before it); its URL is the required variable "+v.Name)
		h.Chart, h.Repo = chart, "${"+v.Name+"}"
		return true
	}
	if repo.oci {
		h.Chart = "oci://" + strings.TrimSuffix(strings.TrimPrefix(repo.url, "oci://"), "/") + "/" + chart
		c.ociAuth(r, h)
		return true
	}
	h.Chart, h.Repo = chart, repo.url
	c.auth(h, repoName, repo)
	if note := importer.GitRepo(h); note != "" {
		c.infof(r, "chart", "repository "+repoName+" ("+repo.url+")", note)
	}
	return true
}

// localChart writes a local chart's path; a version of it is dropped
// with a note naming what Helm installs instead (importer.LocalChartVersion).
func (c *converter) localChart(r *rel, h *importer.OutHelm, dir string) {
	h.Chart = c.rel(dir)
	if h.Version == "" {
		return
	}
	c.infof(r, "version", "version "+strings.TrimSpace(h.Version)+" of the local chart "+h.Chart, importer.LocalChartVersion(dir, h.Version))
	h.Version = ""
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
					Why: fmt.Sprintf("%s, so helmfile v1 refuses the helmfile (\"depend(s) on an undefined release\"); resolved to the only release named %s (namespace %q), the one it most likely means: write needs: [%s/%s] in the helmfile", where, name, cands[0].out.Resolved.Namespace, cands[0].out.Resolved.Namespace, name)})
			}
			if found == nil && len(cands) == 0 && c.skipped[name] {
				r.out.Info = append(r.out.Info, Note{Loc: importer.Loc{File: r.st.file, Line: r.lineOf("needs")}, What: "release " + r.out.Resolved.Name + ": needs " + need,
					Why: "that release's condition is false in this environment, so there is no step to wait for"})
				continue
			}
			if found == nil && len(cands) == 0 && c.refusedRelease(name, ns) {
				c.lostNeed(r, need)
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
	for _, r := range c.rels {
		first := r.step
		if len(r.before) > 0 {
			first = r.before[0]
		}
		for _, p := range r.prev {
			for _, t := range p.terminal() {
				first.Needs = appendUnique(first.Needs, t)
			}
		}
	}
}

// refusedRelease says whether a release of that name (and namespace, when
// given) is one the import refused before it had a step (its chart).
func (c *converter) refusedRelease(name, ns string) bool {
	for _, o := range c.res.Releases {
		if o.Resolved.Name == name && o.Verdict == Refused && (ns == "" || o.Resolved.Namespace == ns) {
			return true
		}
	}
	return false
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

// noNamespace: helmfile leaves the namespace to helm, which takes the kube
// context's; the DSL's steps have a namespace of their own.
func (c *converter) noNamespace(r *rel, installed bool) {
	uses := "khook's helm step uses"
	if !installed { // installed: false: the delete step (46zze's N1)
		uses = "khook's delete step looks for the release in"
	}
	c.infof(r, "name", "no namespace", fmt.Sprintf("helmfile leaves it to helm, which uses the kube context's namespace (or HELM_NAMESPACE, helmfile --namespace); %s %q: the step is written without namespace: add one if your context names another", uses, spec.DefaultNamespace))
}
