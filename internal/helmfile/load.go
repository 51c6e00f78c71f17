package helmfile

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/khook/khook/internal/importer"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/khook/khook/sops"
)

// state is one helmfile as helmfile loads it: its parts rendered and
// merged, its bases merged in, its environment's values loaded.
type state struct {
	file string // as the user names it (relative to the import's directory)
	// kubeContext is the helmfile's own kubeContext: (its line).
	kubeContext     string
	kubeContextLine int
	abs             string
	dir             string
	src             string // the raw text, to find the real line of a rendered release
	rendered        bool   // .gotmpl: the text was a template

	repos        map[string]repository
	defaults     map[string]*yaml.Node
	defaultsLine map[string]int
	releases     []*relNode
	templates    map[string]any
	defInherit   []string // defaultInherit: templates every release inherits first
	helmfiles    []*yaml.Node
	missingFile  string
	commonLabels map[string]string
	// hooks are the helmfile-wide hooks: (its bases' first), which
	// helmfile fires around the file's own releases (globalHooks).
	hooks []hookNode

	envName     string
	envValues   map[string]any // the environment's values (environments: <name>: values, secrets)
	stateValues map[string]any // top-level values: (defaults, under the environment's)
	overrides   map[string]any // a parent's helmfiles: values, over everything (helmfile's state values overrides)
	envKube     string
	// overrideNS is the file's own namespace: (helmfile's OverrideNamespace),
	// which ApplyOverrides puts on every release of the file
	overrideNS string

	environments map[string]*yaml.Node
	sub          bool // reached through a parent's helmfiles:, whose environment it inherits

	notCarried []Note
	info       []Note
}

type repository struct {
	url string
	oci bool
	// user and pass are its credentials as rendered, line where they are
	// (0: none); helmfile logs in with them (repo add, or registry login
	// for an OCI one) before any release installs.
	user, pass string
	file       string
	line       int
}

// hookNode is one entry of the top-level hooks:, with its file and line
// (a base's hook is in the base).
type hookNode struct {
	m    map[string]any
	file string
	line int
}

// relNode is one entry of releases: as written (after the file's own
// rendering), with the line it starts at.
type relNode struct {
	node *yaml.Node
	line int
	st   *state
}

// values is what templates see as .Values: top-level values under the
// environment's.
func (s *state) values() map[string]any {
	return mergeValues(mergeValues(deepCopy(s.stateValues), deepCopy(s.envValues)), deepCopy(s.overrides))
}

func (s *state) envData() map[string]any {
	v := s.values()
	return map[string]any{
		"Environment": map[string]any{"Name": s.envName, "KubeContext": s.envKube, "Values": v},
		"Values":      v,
		"StateValues": v,
		"Namespace":   "",
	}
}

// undefinedEnv explains a template error that reads values when the
// helmfile names environments but not the one rendered. helmfile renders
// an undefined "default" with no values, so its error names a missing key,
// a symptom; say the cause and the flag that picks an environment. Any
// other undefined environment is refused at that line, as helmfile
// refuses it before rendering (refuseEnv).
func (s *state) undefinedEnv(err error) error {
	var ie *InputError
	// No environments yet may be a part that defines them being rendered.
	if !errors.As(err, &ie) || ie.envUndef || !readsValues(ie.at) || len(s.environments) == 0 || s.envDefined() {
		return err
	}
	if r := s.refuseEnv(ie.File, ie.Line); r != nil {
		return r
	}
	return &InputError{File: ie.File, Line: ie.Line, envUndef: true,
		Msg: fmt.Sprintf("%s has no value because this helmfile defines no %q environment (the one used without --environment), %s", ie.at, s.envName, s.envChoice())}
}

// envDefined: the chosen environment is one environments: defines
// (bases' included).
func (s *state) envDefined() bool {
	_, ok := s.environments[s.envName]
	return ok
}

// refuseEnv is helmfile v1's refusal of a chosen environment (-e NAME,
// not "default", which may go undefined) that the helmfile does not
// define: `environment "NAME" is not defined`.
func (s *state) refuseEnv(file string, line int) error {
	if s.envName == "default" || s.envDefined() || s.sub {
		return nil
	}
	return &InputError{File: file, Line: line, envUndef: true, notDefined: true, envsKnown: len(s.environments) > 0,
		Msg: fmt.Sprintf("environment %q is not defined (helmfile refuses it too): this helmfile defines %s", s.envName, s.envChoice())}
}

// envChoice names the environments the helmfile defines and how to pick
// one: the one list both messages about an undefined environment give.
func (s *state) envChoice() string {
	names := sortedKeys(s.environments)
	switch n := len(names); n {
	case 0:
		return "no environments: leave out --environment (-e)"
	case 1:
		return "only " + names[0] + ": choose it with --environment " + names[0] + " (-e " + names[0] + ")"
	default:
		return "only " + strings.Join(names[:n-1], ", ") + " and " + names[n-1] + ": choose one with --environment NAME (-e NAME)"
	}
}

// notGotmpl explains a plain helmfile that does not read, from line from
// on, by its first template action: helmfile v1 renders templates only in
// a file ending .gotmpl (its error: "Add the .gotmpl file extension"), so
// the action is the cause, not the YAML it left behind. Nil when the file
// is a .gotmpl or has no action there.
func (s *state) notGotmpl(from int) error {
	if s.rendered {
		return nil
	}
	lines := strings.Split(s.src, "\n")
	for i := max(from, 1) - 1; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], "\r")
		j := strings.Index(line, "{{")
		if j < 0 || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		expr := line[j:]
		if k := strings.Index(expr, "}}"); k >= 0 {
			expr = expr[:k+2]
		}
		if len(expr) > 60 {
			expr = expr[:57] + "..."
		}
		base := filepath.Base(s.file)
		return &InputError{File: s.file, Line: i + 1,
			Msg: fmt.Sprintf("%s is a template, but helmfile v1 renders templates only in a file ending .gotmpl: rename %s to %s.gotmpl", expr, base, base)}
	}
	return nil
}

// readsValues: the failing action reads the environment's or the state's
// values (.Values.x, .Environment.Values.x, .StateValues.x, get "x").
func readsValues(at string) bool {
	return strings.Contains(at, "Values") || strings.HasPrefix(at, "get ")
}

// loader loads helmfiles for one import.
type loader struct {
	root string // the import's directory: file names in messages are relative to it
	opts Options
	r    *renderer
	// secrets are the values of decrypted environment secrets files, by
	// value, with the file they came from: never written in plaintext.
	secrets map[string]string
}

func (l *loader) secretLeaves(file string, v any) {
	switch t := v.(type) {
	case map[string]any:
		for _, x := range t {
			l.secretLeaves(file, x)
		}
	case []any:
		for _, x := range t {
			l.secretLeaves(file, x)
		}
	case string:
		// Strings only, and not the short ones ("true", "v1") any spec holds.
		if s := t; len(s) >= 6 {
			if l.secrets == nil {
				l.secrets = map[string]string{}
			}
			l.secrets[s] = file
			l.opts.Redactor.Add(s)
		}
	}
}

func (l *loader) display(abs string) string {
	// Relative also when outside it (../../kubernetes/…): as the helmfile
	// writes such paths, and no checkout's directory in a message.
	if rel, err := filepath.Rel(l.root, abs); err == nil {
		return rel
	}
	return abs
}

// load reads one helmfile; overrides are the values a parent's helmfiles:
// entry gives it (sub: it is such a sub-helmfile, or a base of one).
func (l *loader) load(abs string, overrides map[string]any, isBase, sub bool) (*state, error) {
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, &InputError{File: l.display(abs), Msg: "cannot read the helmfile: " + pathErr(err)}
	}
	s := &state{file: l.display(abs), abs: abs, dir: filepath.Dir(abs), src: string(data),
		rendered: filepath.Ext(abs) == ".gotmpl", repos: map[string]repository{}, defaults: map[string]*yaml.Node{},
		defaultsLine: map[string]int{}, templates: map[string]any{}, envName: l.opts.Environment,
		overrides: deepCopy(overrides), sub: sub}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	parts := strings.Split(text, "\n---\n")
	offset := 0
	envs := map[string]*yaml.Node{}
	for _, part := range parts {
		body := part
		if s.rendered {
			body, err = l.r.render(s.file, offset, s.dir, part, s.envData())
			if err != nil {
				return nil, s.undefinedEnv(err)
			}
		}
		if err := l.part(s, body, offset, envs, isBase); err != nil {
			return nil, err
		}
		offset += strings.Count(part, "\n") + 2
	}
	return s, nil
}

var yamlLineRE = regexp.MustCompile(`line ([0-9]+): (.*)$`)

// part merges one rendered `---` part into s, as helmfile's mergo
// override does: a later part's non-empty key replaces an earlier one's.
func (l *loader) part(s *state, body string, offset int, envs map[string]*yaml.Node, isBase bool) error {
	// Within a part helmfile appends hooks (its bases' first, then its
	// documents'); a part with hooks replaces those of the parts before it.
	prior := s.hooks
	s.hooks = nil
	defer func() {
		if len(s.hooks) == 0 {
			s.hooks = prior
		}
	}()
	dec := yaml.NewDecoder(strings.NewReader(body))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return partErr(s, err, offset)
		}
		if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
			continue
		}
		m := mergeKeys(doc.Content[0], 0)
		// bases come first: this part's keys override theirs.
		if err := l.bases(s, m, offset, envs, isBase); err != nil {
			return err
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			if err := l.key(s, m.Content[i], m.Content[i+1], offset, envs); err != nil {
				return err
			}
		}
		// The environment's values, for the next part (helmfile reloads them per part).
		if e, ok := envs[s.envName]; ok {
			vals, err := l.environment(s, e, offset)
			if err != nil {
				return err
			}
			s.envValues = mergeValues(s.envValues, vals)
		}
		s.environments = envs
	}
}

// key reads one top-level key of a part into s.
func (l *loader) key(s *state, k, v *yaml.Node, offset int, envs map[string]*yaml.Node) error {
	line := k.Line + offset
	switch k.Value {
	case "bases":
	case "repositories":
		l.repositories(s, v, offset)
	case "helmDefaults":
		eachField(v, func(k, v *yaml.Node) {
			s.defaults[k.Value] = v
			s.defaultsLine[k.Value] = k.Line + offset
		})
	case "releases":
		if len(v.Content) > 0 {
			s.releases = nil
		}
		for _, r := range v.Content {
			s.releases = append(s.releases, &relNode{node: r, line: r.Line + offset, st: s})
		}
	case "templates":
		var t map[string]any
		if err := decode(v, &t); err != nil {
			return &InputError{File: s.file, Line: line, Msg: "templates: cannot be read: " + err.Error()}
		}
		for name, x := range t {
			s.templates[name] = x
		}
	case "defaultInherit":
		var list []string
		if err := v.Decode(&list); err != nil {
			var one string
			if err := v.Decode(&one); err != nil {
				return &InputError{File: s.file, Line: line, Msg: "defaultInherit: is neither a template name nor a list of them"}
			}
			list = []string{one}
		}
		s.defInherit = nil
		for _, n := range list {
			if n = strings.TrimSpace(n); n != "" {
				s.defInherit = append(s.defInherit, n)
			}
		}
	case "environments":
		eachField(v, func(k, v *yaml.Node) { envs[k.Value] = v })
	case "values":
		vals, err := l.valuesEntries(s, v, offset, nil)
		if err != nil {
			return err
		}
		s.stateValues = mergeValues(s.stateValues, vals)
	case "helmfiles":
		if len(v.Content) > 0 {
			s.helmfiles = v.Content
		}
	case "missingFileHandler":
		s.missingFile = v.Value
	case "namespace":
		s.overrideNS = v.Value
	case "commonLabels":
		_ = v.Decode(&s.commonLabels)
	case "apiVersions", "kubeVersion":
		s.info = append(s.info, Note{Loc: importer.Loc{File: s.file, Line: line}, What: k.Value,
			Why: "khook asks the cluster for its version and APIs (plan --offline takes them from its flags)"})
	case "helmBinary", "kustomizeBinary", "lockFilePath", "helmfileLockFile":
		s.info = append(s.info, Note{Loc: importer.Loc{File: s.file, Line: line}, What: k.Value, Why: "khook embeds Helm and kustomize: no binary or lock file to name"})
	case "kubeContext":
		// One khook run works on one cluster: the context is the run's
		// (converter.kubeContext says when parts name different ones).
		s.kubeContext, s.kubeContextLine = v.Value, line
		s.info = append(s.info, Note{Loc: importer.Loc{File: s.file, Line: line}, What: "kubeContext: " + v.Value,
			Why: "khook runs against the --context (or kubeconfig) given when it runs: run it with --context " + v.Value})
	case "hooks":
		for _, h := range v.Content {
			var m map[string]any
			if err := decode(h, &m); err != nil {
				return &InputError{File: s.file, Line: h.Line + offset, Msg: "a hooks: entry cannot be read: " + err.Error()}
			}
			s.hooks = append(s.hooks, hookNode{m: stringKeys(m).(map[string]any), file: s.file, line: h.Line + offset})
		}
	default:
		s.notCarried = append(s.notCarried, Note{Loc: importer.Loc{File: s.file, Line: line}, What: k.Value, Why: "no khook equivalent"})
	}
	return nil
}

// bases loads the part's bases: into s before its own keys.
func (l *loader) bases(s *state, m *yaml.Node, offset int, envs map[string]*yaml.Node, isBase bool) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Value != "bases" {
			continue
		}
		if isBase {
			return &InputError{File: s.file, Line: k.Line + offset, Msg: "a base helmfile has bases: of its own, which helmfile does not support"}
		}
		for _, b := range v.Content {
			bs, err := l.load(abs(s.dir, b.Value), s.overrides, true, s.sub)
			if err != nil {
				return err
			}
			mergeState(s, bs)
			for name, e := range bs.envNodes() {
				envs[name] = e
			}
		}
	}
	return nil
}

// partErr is a part YAML cannot read, at its line.
func partErr(s *state, err error, offset int) error {
	msg, line := err.Error(), offset+1
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		fmt.Sscan(m[1], &line)
		line += offset
		msg = m[2]
	}
	if terr := s.notGotmpl(offset + 1); terr != nil {
		return terr
	}
	how := "it is not YAML"
	if s.rendered {
		how = "it is not YAML after rendering"
	}
	return &InputError{File: s.file, Line: line, Msg: how + ": " + strings.TrimPrefix(msg, "yaml: ")}
}

func (s *state) envNodes() map[string]*yaml.Node { return s.environments }

// environment loads environments.<name>: values (files, inline), then
// secrets over them.
func (l *loader) environment(s *state, e *yaml.Node, offset int) (map[string]any, error) {
	var out map[string]any
	handler := s.missingFile
	eachField(e, func(k, v *yaml.Node) {
		switch k.Value {
		case "missingFileHandler":
			handler = v.Value
		case "kubeContext":
			s.envKube = v.Value
		}
	})
	var err error
	eachField(e, func(k, v *yaml.Node) {
		if err != nil {
			return
		}
		switch k.Value {
		case "values":
			var vals map[string]any
			vals, err = l.valuesEntries(s, v, offset, &handler)
			out = mergeValues(out, vals)
		case "secrets":
			for _, f := range v.Content {
				p := abs(s.dir, f.Value)
				data, rerr := os.ReadFile(p)
				if rerr != nil {
					skip, bad := skipMissing(handler)
					if skip {
						continue
					}
					err = &InputError{File: s.file, Line: f.Line + offset, Msg: "the environment's secrets file " + l.r.asWritten(f.Value) + " cannot be read: " + pathErr(rerr) + bad}
					return
				}
				plain, derr := sops.Decrypt(f.Value, data, l.opts.Redactor)
				if derr != nil {
					s.notCarried = append(s.notCarried, Note{Loc: importer.Loc{File: s.file, Line: f.Line + offset}, What: "environment secrets " + f.Value,
						Why: "cannot be decrypted here (" + derr.Error() + "), so templates that read it rendered without it"})
					continue
				}
				var m map[string]any
				if yerr := yaml.Unmarshal(plain, &m); yerr != nil {
					err = &InputError{File: s.file, Line: f.Line + offset, Msg: "the environment's secrets file " + f.Value + " is not a YAML map: " + yerr.Error()}
					return
				}
				m = stringKeys(m).(map[string]any)
				l.secretLeaves(f.Value, m)
				out = mergeValues(out, m)
			}
		case "missingFileHandler", "kubeContext", "missingFileHandlerConfig":
		default:
			s.notCarried = append(s.notCarried, Note{Loc: importer.Loc{File: s.file, Line: k.Line + offset}, What: "environments." + s.envName + "." + k.Value, Why: "no khook equivalent"})
		}
	})
	return out, err
}

// valuesEntries loads a list of values entries (files, .gotmpl files,
// inline maps) into one map, as helmfile loads environment values.
func (l *loader) valuesEntries(s *state, list *yaml.Node, offset int, handler *string) (map[string]any, error) {
	var out map[string]any
	for _, item := range list.Content {
		switch item.Kind {
		case yaml.MappingNode:
			var m map[string]any
			if err := decode(item, &m); err != nil {
				// YAML reads a template value ({{ requiredEnv "X" }}) of a
				// plain helmfile as a flow map: the template is the cause.
				if terr := s.notGotmpl(item.Line + offset); terr != nil {
					return nil, terr
				}
				return nil, &InputError{File: s.file, Line: item.Line + offset, Msg: "inline values cannot be read: " + err.Error()}
			}
			out = mergeValues(out, stringKeys(m).(map[string]any))
		case yaml.ScalarNode:
			paths, err := filepath.Glob(abs(s.dir, item.Value))
			if err == nil && len(paths) == 0 && !hasGlob(item.Value) {
				paths = []string{abs(s.dir, item.Value)}
			}
			for _, p := range paths {
				data, err := os.ReadFile(p)
				if err != nil {
					h := ""
					if handler != nil {
						h = *handler
					}
					skip, bad := skipMissing(h)
					if skip {
						continue
					}
					return nil, &InputError{File: s.file, Line: item.Line + offset, Msg: "the values file " + l.r.asWritten(item.Value) + " cannot be read: " + pathErr(err) + bad}
				}
				text := string(data)
				if filepath.Ext(p) == ".gotmpl" {
					text, err = l.r.render(l.display(p), 0, filepath.Dir(p), text, s.envData())
					if err != nil {
						return nil, err
					}
				}
				var m map[string]any
				if err := yaml.Unmarshal([]byte(text), &m); err != nil {
					return nil, &InputError{File: l.display(p), Line: yamlErrLine(err), Msg: "it is not a YAML map of values: " + yamlErrMsg(err)}
				}
				out = mergeValues(out, stringKeys(m).(map[string]any))
			}
		}
	}
	return out, nil
}

func (l *loader) repositories(s *state, n *yaml.Node, offset int) {
	for _, item := range n.Content {
		var name string
		var repo repository
		eachField(item, func(k, v *yaml.Node) {
			switch k.Value {
			case "name":
				name = v.Value
			case "url":
				repo.url = v.Value
			case "oci":
				repo.oci = v.Value == "true"
			case "username", "password":
				if k.Value == "username" {
					repo.user = v.Value
				} else {
					repo.pass = v.Value
					if len(v.Value) >= 4 && !strings.HasPrefix(v.Value, unsetPrefix) {
						l.opts.Redactor.Add(v.Value) // before any message can quote it (an unset requiredEnv's placeholder is none)
					}
				}
				if repo.line == 0 {
					repo.file, repo.line = s.file, k.Line+offset
				}
			case "skipTLSVerify", "certFile", "keyFile", "caFile":
				s.notCarried = append(s.notCarried, Note{Loc: importer.Loc{File: s.file, Line: k.Line + offset}, What: "repository " + name + " " + k.Value,
					Why: importer.WhyTLS})
			case "passCredentials", "verify", "keyring":
				s.notCarried = append(s.notCarried, Note{Loc: importer.Loc{File: s.file, Line: k.Line + offset}, What: "repository " + name + " " + k.Value,
					Why: "khook has no per-repository settings: write it on the steps that install from it (auth:, verify:)"})
			}
		})
		if repo.line > 0 && (repo.user == "" || repo.pass == "" || strings.Contains(repo.user+repo.pass, "{{")) {
			// helm logs in with both or neither; a plain .yaml helmfile
			// does not render its repositories
			s.notCarried = append(s.notCarried, Note{Loc: importer.Loc{File: repo.file, Line: repo.line}, What: "repository " + name + " credentials",
				Why: "not both a username and a password as values: set auth: {username: ${USER}, password: ${PASSWORD}} on the steps that install from it"})
			repo.user, repo.pass, repo.line = "", "", 0
		}
		if name != "" {
			s.repos[name] = repo
		}
	}
}

// mergeState merges a base into s (s's own keys, read after, override).
func mergeState(s, base *state) {
	for k, v := range base.repos {
		s.repos[k] = v
	}
	for k, v := range base.defaults {
		s.defaults[k] = v
		s.defaultsLine[k] = 0
	}
	if len(base.releases) > 0 {
		s.releases = base.releases
	}
	for k, v := range base.templates {
		s.templates[k] = v
	}
	if len(base.defInherit) > 0 {
		s.defInherit = base.defInherit
	}
	s.helmfiles = append(s.helmfiles, base.helmfiles...)
	s.hooks = append(s.hooks, base.hooks...)
	s.stateValues = mergeValues(s.stateValues, base.stateValues)
	s.envValues = mergeValues(s.envValues, base.envValues)
	if base.missingFile != "" {
		s.missingFile = base.missingFile
	}
	if base.commonLabels != nil {
		if s.commonLabels == nil {
			s.commonLabels = map[string]string{}
		}
		for k, v := range base.commonLabels {
			s.commonLabels[k] = v
		}
	}
	s.notCarried = append(s.notCarried, base.notCarried...)
	s.info = append(s.info, base.info...)
}

func hasGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

func pathErr(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func yamlErrLine(err error) int {
	line := 0
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		fmt.Sscan(m[1], &line)
	}
	return line
}

func yamlErrMsg(err error) string {
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		return m[2]
	}
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

func eachField(n *yaml.Node, fn func(k, v *yaml.Node)) {
	if n == nil || n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		fn(n.Content[i], n.Content[i+1])
	}
}

// mergeValues merges src over dst as Helm coalesces values files: maps
// key by key, anything else replaced. dst may be nil.
func mergeValues(dst, src map[string]any) map[string]any {
	if dst == nil {
		dst = map[string]any{}
	}
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				dst[k] = mergeValues(dm, sm)
				continue
			}
			dst[k] = mergeValues(nil, sm)
			continue
		}
		dst[k] = v
	}
	return dst
}

func deepCopy(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	var b bytes.Buffer
	_ = yaml.NewEncoder(&b).Encode(m)
	var out map[string]any
	_ = yaml.Unmarshal(b.Bytes(), &out)
	if out == nil {
		out = map[string]any{}
	}
	return stringKeys(out).(map[string]any)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
