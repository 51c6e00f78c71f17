package helmfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/template"

	"github.com/Masterminds/sprig/v3"

	"github.com/khook/khook/internal/importer"
	yaml "go.yaml.in/yaml/v3"
)

// envRead is an environment variable the helmfile read.
type envRead struct {
	name     string
	required bool   // requiredEnv
	set      bool   // set (and, for requiredEnv, not empty)
	value    string // its value
	def      string // the `| default "x"` the helmfile gives it
	hasDef   bool
	file     string
	line     int
	// placeholder: required and unset, rendered as unsetEnv(name)
	placeholder bool
}

// secret says whether the variable's value is a secret: its name looks
// like a secret's, or its value (its default, unset) holds a URL's
// password (amqp://app:pass@broker; trial 46n's D3).
func (e *envRead) secret() bool {
	v := e.value
	if !e.set && e.hasDef {
		v = e.def
	}
	return importer.SecretLooking(e.name) || importer.URLCredentials(v)
}

// unsetEnv is what an unset requiredEnv renders to on the import's first
// try: references() turns it into ${NAME}.
func unsetEnv(name string) string { return unsetPrefix + name + "__" }

const unsetPrefix = "__khook_unset_"

// fileRead is one readFile | fromYaml | get chain seen while rendering a
// values template: what the Flux HelmRelease pattern becomes valuesFrom
// {file, path} from.
type fileRead struct {
	path string // absolute
	text string
	obj  any // fromYaml of text ("" when not parsed)
	gets []getCall
	// secret: read for a value under a secret-looking name (set file:).
	secret bool
}

type getCall struct {
	path string
	val  any
}

// renderer renders helmfile's Go templates with helmfile's functions.
type renderer struct {
	opts  Options
	env   map[string]*envRead
	order []string
	reads []*fileRead
	// probes are the paths isFile and isDir looked for: what a template
	// gives depends on whether they are there when helmfile runs.
	probes []string
	// uses are the calls of volatile functions; calls counts them by
	// file and arguments (volatileMemo).
	uses  []*volatileUse
	calls map[string]int
	// vary is set while dropUnused runs a template again: the vary-th
	// call (seen counts them) gives another value.
	vary, seen int
}

func newRenderer(opts Options) *renderer {
	return &renderer{opts: opts, env: map[string]*envRead{}}
}

func (r *renderer) lookup(name string) (string, bool) {
	if r.opts.Env != nil {
		return r.opts.Env(name)
	}
	return os.LookupEnv(name)
}

func (r *renderer) noteEnv(name string, required bool) string {
	v, ok := r.lookup(name)
	e := r.env[name]
	if e == nil {
		e = &envRead{name: name, value: v, set: ok && (!required || v != "")}
		r.env[name] = e
		r.order = append(r.order, name)
	}
	e.required = e.required || required
	if len(v) >= 4 && (importer.SecretLooking(name) || importer.URLCredentials(v)) {
		r.opts.Redactor.Add(v) // before any message can quote it
	}
	return v
}

// defaultOf finds the `env "X" | default "y"` (or `default "y" (env "X")`)
// a template gives X: the default the khook variable declares.
var defaultOf = regexp.MustCompile(`(?:env\s+"([A-Za-z_][A-Za-z0-9_]*)"\s*\|\s*default\s+("(?:[^"\\]|\\.)*"|[0-9A-Za-z_.-]+))|(?:default\s+("(?:[^"\\]|\\.)*"|[0-9A-Za-z_.-]+)\s+\(\s*env\s+"([A-Za-z_][A-Za-z0-9_]*)"\s*\))`)

// scanDefaults records the defaults the template text gives variables.
func (r *renderer) scanDefaults(text string) {
	for _, m := range defaultOf.FindAllStringSubmatch(text, -1) {
		name, def := m[1], m[2]
		if name == "" {
			name, def = m[4], m[3]
		}
		if s, err := strconv.Unquote(def); err == nil {
			def = s
		}
		if e := r.env[name]; e != nil && !e.hasDef {
			e.def, e.hasDef = def, true
		}
	}
}

var tmplErr = regexp.MustCompile(`^template: [^:]*:([0-9]+)(?::[0-9]+)?: (.*)$`)

// tmplAt is the action an execution error names: executing "x" at <.Values.a>: …
var tmplAt = regexp.MustCompile(`^executing "[^"]*" at <([^>]*)>: `)

// render executes text (of file, whose first line is line 1+lineOffset)
// with data; baseDir resolves readFile and friends.
func (r *renderer) render(file string, lineOffset int, baseDir, text string, data any) (string, error) {
	t := template.New(filepath.Base(file)).Option("missingkey=error")
	funcs := r.funcs(baseDir)
	funcs["include"] = func(name string, d any) (string, error) {
		var b strings.Builder
		err := t.ExecuteTemplate(&b, name, d)
		return b.String(), err
	}
	funcs["tpl"] = func(text string, d any) (string, error) {
		out, err := r.render(file, lineOffset, baseDir, text, d)
		var ie *InputError
		if errors.As(err, &ie) {
			// The outer template names the file and line; say the why once.
			return "", errors.New(strings.TrimPrefix(ie.Msg, "the template fails: "))
		}
		return out, err
	}
	r.volatile(funcs, file)
	t.Funcs(funcs)
	// helmfile parses _*.tpl helpers of the base directory first.
	helpers, _ := filepath.Glob(filepath.Join(baseDir, "_*.tpl"))
	for _, h := range helpers {
		b, err := os.ReadFile(h)
		if err != nil {
			return "", &InputError{File: h, Msg: "cannot read this helper template: " + err.Error()}
		}
		if _, err := t.Parse(string(b)); err != nil {
			return "", templateError(h, 0, err)
		}
	}
	if _, err := t.Parse(text); err != nil {
		return "", templateError(file, lineOffset, err)
	}
	var buf bytes.Buffer
	mark, before := len(r.uses), maps.Clone(r.calls)
	err := t.Execute(&buf, data)
	if err != nil {
		return "", templateError(file, lineOffset, err)
	}
	r.placeUses(mark, t, file, lineOffset, text)
	r.dropUnused(mark, before, t, data, buf.String())
	r.scanDefaults(text)
	return buf.String(), nil
}

// templateError is a Go template error as one sentence at FILE:LINE.
func templateError(file string, lineOffset int, err error) error {
	var ie *InputError
	msg := err.Error()
	refused := false
	if i := strings.Index(msg, "\x00refused:"); i >= 0 {
		refused = true
		msg = msg[i+len("\x00refused:"):]
		if j := strings.IndexByte(msg, '\x00'); j >= 0 {
			msg = msg[:j]
		}
	}
	if m := tmplErr.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		why := m[2]
		// executing "x" at <requiredEnv "ROOT_DIR">: error calling requiredEnv: required env var `ROOT_DIR` is not set
		if i := strings.Index(why, "error calling "); i >= 0 {
			why = why[i+len("error calling "):]
		} else if i := strings.Index(why, ">: "); i >= 0 && strings.HasPrefix(why, "executing ") {
			why = why[i+3:]
		}
		at := ""
		if a := tmplAt.FindStringSubmatch(m[2]); a != nil {
			at = a[1]
		}
		if refused {
			why = msg
		}
		ie = &InputError{File: file, Line: line + lineOffset, Msg: "the template fails: " + strings.ReplaceAll(why, "\x00", ""), at: at}
		return ie
	}
	return &InputError{File: file, Line: lineOffset + 1, Msg: "the template fails: " + strings.ReplaceAll(msg, "\x00", "")}
}

// shown is a path a template function was given, quoted for a message
// (asWritten).
func (r *renderer) shown(p string) string { return strconv.Quote(r.asWritten(p)) }

// asWritten is a path for a message: as it is when relative; when
// absolute, with the value of the environment variable it starts with
// (ROOT_DIR, KUBERNETES_DIR, …) written back as ${NAME}, so that no
// checkout's (or temporary) directory appears.
func (r *renderer) asWritten(p string) string {
	if !filepath.IsAbs(p) {
		return p
	}
	best, name := "", ""
	for _, n := range r.order {
		v := filepath.Clean(r.env[n].value)
		if r.env[n].value != "" && filepath.IsAbs(v) && len(v) > len(best) && (p == v || strings.HasPrefix(p, v+string(filepath.Separator))) {
			best, name = v, n
		}
	}
	if name == "" {
		return p
	}
	return "${" + name + "}" + p[len(best):]
}

// fileErr is a template file function's failure on the path as written
// (the template's error names the function).
func (r *renderer) fileErr(p string, err error) error {
	return fmt.Errorf("%s: %s", r.shown(p), pathErr(err))
}

func abs(baseDir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(baseDir, p)
}

// derivedPasswords memoizes sprig's derivePassword (scrypt: ~32 MiB and
// tens of milliseconds a call), which environment values call again for
// every part that loads them, and the derive pass again: the same
// arguments give the same password (mijnbureau's import spent 9 of its
// 10 seconds there).
var derivedPasswords sync.Map

func memoDerive(derive func(uint32, string, string, string, string) string) func(uint32, string, string, string, string) string {
	return func(counter uint32, typ, password, user, site string) string {
		key := strings.Join([]string{fmt.Sprint(counter), typ, password, user, site}, "\x00")
		if strings.Contains(password, canaryPrefix) {
			// The derive pass asks only whether the value changes with the
			// secret: any function of it tells, without scrypt's cost.
			sum := sha256.Sum256([]byte(key))
			return canaryPrefix + hex.EncodeToString(sum[:8])
		}
		if v, ok := derivedPasswords.Load(key); ok {
			return v.(string)
		}
		v := derive(counter, typ, password, user, site)
		derivedPasswords.Store(key, v)
		return v
	}
}

func (r *renderer) funcs(baseDir string) template.FuncMap {
	f := sprig.TxtFuncMap()
	f["sprigGet"] = f["get"]
	if d, ok := f["derivePassword"].(func(uint32, string, string, string, string) string); ok {
		f["derivePassword"] = memoDerive(d)
	}
	f["env"] = func(name string) string { return r.noteEnv(name, false) }
	f["requiredEnv"] = func(name string) (string, error) {
		v := r.noteEnv(name, true)
		if v == "" && r.opts.placeholders {
			r.env[name].placeholder = true
			return unsetEnv(name), nil
		}
		if v == "" {
			return "", fmt.Errorf("required env var `%s` is not set", name)
		}
		return v, nil
	}
	f["expandenv"] = func(s string) string {
		return os.Expand(s, func(n string) string { return r.noteEnv(n, false) })
	}
	refuse := func(what string) error {
		return fmt.Errorf("\x00refused:%s\x00", what)
	}
	f["exec"] = func(command string, args []any, inputs ...string) (string, error) {
		return r.exec(baseDir, nil, command, args, inputs, refuse)
	}
	f["envExec"] = func(envs map[string]any, command string, args []any, inputs ...string) (string, error) {
		return r.exec(baseDir, envs, command, args, inputs, refuse)
	}
	f["fetchSecretValue"] = func(string) (string, error) {
		return "", refuse("fetchSecretValue reads a secret store (vals), which the import does not reach: write the value as a khook ${VARIABLE} or a secretKeyRef")
	}
	f["expandSecretRefs"] = func(any) (any, error) {
		return nil, refuse("expandSecretRefs reads a secret store (vals), which the import does not reach: write the values as khook ${VARIABLES} or a secretKeyRef")
	}
	r.fileFuncs(f, baseDir)
	f["toYaml"] = toYaml
	f["fromYaml"] = func(s string) (any, error) {
		var m any
		if err := yaml.Unmarshal([]byte(s), &m); err != nil {
			return nil, fmt.Errorf("%s, offending yaml: %s", err, s)
		}
		m = stringKeys(m)
		for _, rd := range r.reads {
			if rd.text == s && rd.obj == nil {
				rd.obj = m
			}
		}
		return m, nil
	}
	f["setValueAtPath"] = setValueAtPath
	f["required"] = func(warn string, val any) (any, error) {
		if val == nil {
			return nil, fmt.Errorf("%s", warn)
		}
		if s, ok := val.(string); ok && s == "" {
			return nil, fmt.Errorf("%s", warn)
		}
		return val, nil
	}
	f["get"] = func(path string, args ...any) (any, error) {
		v, err := get(path, args...)
		if err == nil && len(args) > 0 {
			obj := args[len(args)-1]
			for _, rd := range r.reads {
				if rd.obj != nil && reflect.ValueOf(rd.obj).Kind() == reflect.Map && reflect.ValueOf(obj).Kind() == reflect.Map &&
					reflect.ValueOf(rd.obj).Pointer() == reflect.ValueOf(obj).Pointer() {
					rd.gets = append(rd.gets, getCall{path: path, val: v})
				}
			}
		}
		return v, err
	}
	f["getOrNil"] = func(path string, o any) (any, error) {
		v, err := get(path, o)
		if _, ok := err.(*noValueError); ok {
			return nil, nil
		}
		return v, err
	}
	return f
}

// fileFuncs are helmfile's functions that read the checkout: each read
// is remembered (a values template reading a Flux file becomes valuesFrom).
func (r *renderer) fileFuncs(f template.FuncMap, baseDir string) {
	f["isFile"] = func(p string) (bool, error) {
		r.probes = append(r.probes, abs(baseDir, p))
		st, err := os.Stat(abs(baseDir, p))
		if err == nil {
			return !st.IsDir(), nil
		}
		if os.IsNotExist(err) {
			return false, nil
		}
		return false, r.fileErr(p, err)
	}
	f["isDir"] = func(p string) (bool, error) {
		r.probes = append(r.probes, abs(baseDir, p))
		st, err := os.Stat(abs(baseDir, p))
		if err == nil {
			return st.IsDir(), nil
		}
		if os.IsNotExist(err) {
			return false, nil
		}
		return false, r.fileErr(p, err)
	}
	f["readFile"] = func(p string) (string, error) {
		b, err := os.ReadFile(abs(baseDir, p))
		if err != nil {
			return "", r.fileErr(p, err)
		}
		r.read(&fileRead{path: abs(baseDir, p), text: string(b)})
		return string(b), nil
	}
	f["readDir"] = func(p string) ([]string, error) {
		entries, err := os.ReadDir(abs(baseDir, p))
		if err != nil {
			return nil, r.fileErr(p, err)
		}
		var out []string
		for _, e := range entries {
			if !e.IsDir() {
				out = append(out, filepath.Join(p, e.Name()))
			}
		}
		return out, nil
	}
	f["readDirEntries"] = func(p string) ([]os.DirEntry, error) {
		entries, err := os.ReadDir(abs(baseDir, p))
		if err != nil {
			return nil, r.fileErr(p, err)
		}
		return entries, nil
	}
}

func (r *renderer) exec(baseDir string, envs map[string]any, command string, args []any, inputs []string, refuse func(string) error) (string, error) {
	if !r.opts.AllowExec && command == "yq" && envs == nil && len(inputs) == 0 {
		if out, ok, err := r.yqNative(baseDir, args); ok {
			return out, err
		}
	}
	if !r.opts.AllowExec {
		return "", refuse(fmt.Sprintf("exec %q runs a command while rendering; pass --allow-exec to run it, or write its output into the helmfile", command))
	}
	return runCommand(baseDir, envs, command, args, inputs)
}

func toYaml(v any) (string, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return b.String(), nil
}

// stringKeys turns map[any]any (YAML with non-string keys) into
// map[string]any, recursively.
func stringKeys(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = stringKeys(x)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[fmt.Sprint(k)] = stringKeys(x)
		}
		return m
	case []any:
		for i, x := range t {
			t[i] = stringKeys(x)
		}
		return t
	}
	return v
}

type noValueError struct{ msg string }

func (e *noValueError) Error() string { return e.msg }

// get is helmfile's get(path, [default,] obj).
func get(path string, args ...any) (any, error) {
	var def, obj any
	defSet := false
	switch len(args) {
	case 1:
		obj = args[0]
	case 2:
		def, obj, defSet = args[0], args[1], true
	default:
		return nil, fmt.Errorf("get(path, [default, ]obj) takes 2 or 3 arguments, got %d", len(args)+1)
	}
	if path == "" {
		return obj, nil
	}
	key, rest, _ := strings.Cut(path, ".")
	if p, ok := obj.(*map[string]any); ok {
		obj = *p
	}
	var v any
	var ok bool
	switch m := obj.(type) {
	case map[string]any:
		v, ok = m[key]
	case map[string]string:
		v, ok = m[key]
	case map[any]any:
		v, ok = m[key]
	default:
		rv := reflect.ValueOf(obj)
		if rv.Kind() == reflect.Struct {
			if f := rv.FieldByName(key); f.IsValid() {
				v, ok = f.Interface(), true
			}
		} else {
			return nil, &noValueError{fmt.Sprintf("unexpected type(%T) of value for key %q: it must be either map[string]any or any struct", obj, key)}
		}
	}
	if !ok {
		if defSet {
			return def, nil
		}
		return nil, &noValueError{fmt.Sprintf("no value exist for key %q", key)}
	}
	if rest == "" {
		return v, nil
	}
	if defSet {
		return get(rest, def, v)
	}
	return get(rest, v)
}

func setValueAtPath(path string, value any, values map[string]any) (map[string]any, error) {
	parts := strings.Split(path, ".")
	cur := values
	for _, k := range parts[:len(parts)-1] {
		next, ok := cur[k].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("failed to set value at path %q: value for key %q does not exist or is not a map", path, k)
		}
		cur = next
	}
	cur[parts[len(parts)-1]] = value
	return values, nil
}

// read records a file the templates read; a secret one's content is
// registered with the redactor as it is read.
func (r *renderer) read(rd *fileRead) {
	r.reads = append(r.reads, rd)
	if text := strings.TrimSpace(rd.text); secretRead(rd) && len(text) >= 4 {
		r.opts.Redactor.Add(text)
		r.opts.Redactor.Add(rd.text)
	}
}

// vars are the environment variables read, in the order first read.
func (r *renderer) vars() []*envRead {
	out := make([]*envRead, 0, len(r.order))
	for _, n := range r.order {
		out = append(out, r.env[n])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}
