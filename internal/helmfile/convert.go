package helmfile

import (
	"fmt"
	"github.com/khook/khook/internal/importer"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"helm.sh/helm/v4/pkg/strvals"
)

// rel is one release being converted.
type rel struct {
	st    *state
	line  int
	m     map[string]any // the release after inherit and templating
	lines map[string]int // key → line, for the keys written in the release itself
	// hookLines are the lines of the hooks written in the release itself
	// (after those it inherits), so each hook's steps cite their own hook.
	hookLines []int
	// prev are the releases helmfile finishes before this one starts: the
	// sub-helmfiles before it, or the helmfiles: entry before its own.
	prev []*rel
	out  *Release
	step *importer.OutStep
	// before and after are the steps hooks became; terminal are the steps
	// a release that needs this one waits for (the release and its post hooks).
	before, after []*importer.OutStep
	// global are the hooks of its helmfile (helmfile-wide), nil without.
	global *stateHooks
}

// steps are the release's steps in order: its before hooks, its own, its
// after hooks.
func (r *rel) steps() []*importer.OutStep {
	return append(append(append([]*importer.OutStep{}, r.before...), r.step), r.after...)
}

func (c *converter) note(r *rel, key, what, why string) {
	r.out.NotCarried = append(r.out.NotCarried, Note{Loc: importer.Loc{File: r.st.file, Line: r.lineOf(key)}, What: "release " + r.out.Resolved.Name + ": " + what, Why: why})
}

func (c *converter) infof(r *rel, key, what, why string) {
	r.out.Info = append(r.out.Info, Note{Loc: importer.Loc{File: r.st.file, Line: r.lineOf(key)}, What: "release " + r.out.Resolved.Name + ": " + what, Why: why})
}

// noteAt and infoAt are note and infof at a line outside the release
// (helmDefaults); 0 is the release's line.
func (c *converter) noteAt(r *rel, line int, what, why string) {
	if line <= 0 {
		line = r.line
	}
	r.out.NotCarried = append(r.out.NotCarried, Note{Loc: importer.Loc{File: r.st.file, Line: line}, What: "release " + r.out.Resolved.Name + ": " + what, Why: why})
}

func (c *converter) infoAt(r *rel, line int, what, why string) {
	if line <= 0 {
		line = r.line
	}
	r.out.Info = append(r.out.Info, Note{Loc: importer.Loc{File: r.st.file, Line: line}, What: "release " + r.out.Resolved.Name + ": " + what, Why: why})
}

// hookLine is the line of the release's hook i (of n after inherit):
// its own entry, else the hooks: line (a hook from a template).
func (r *rel) hookLine(i, n int) int {
	if j := i - (n - len(r.hookLines)); j >= 0 && j < len(r.hookLines) {
		return r.hookLines[j]
	}
	return r.lineOf("hooks")
}

func (r *rel) lineOf(key string) int {
	if l, ok := r.lines[key]; ok && l > 0 {
		return l
	}
	return r.line
}

// releaseData is what helmfile's release templates see.
func releaseData(s *state, m map[string]any) map[string]any {
	d := s.envData()
	labels := map[string]any{}
	if l, ok := m["labels"].(map[string]any); ok {
		for k, v := range l {
			labels[k] = v
		}
	}
	// helmfile v1.8.0 (pkg/state ExecuteTemplates) sets commonLabels over
	// the release's own before it renders the release's templates.
	for k, v := range s.commonLabels {
		labels[k] = v
	}
	d["Release"] = map[string]any{
		"Name": str(m["name"]), "Namespace": str(m["namespace"]), "Chart": str(m["chart"]),
		"Labels": labels, "KubeContext": str(m["kubeContext"]), "ChartVersion": str(m["version"]),
	}
	d["KubeContext"], d["Chart"] = "", ""
	return d
}

func str(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// inherit applies templates: (inherit: and YAML merge keys are already
// resolved by decoding), as helmfile's mergo does: the template fills what
// the release leaves empty, lists are appended (template first).
func (c *converter) inherit(s *state, m map[string]any, path []string) (map[string]any, error) {
	list, _ := m["inherit"].([]any)
	if path == nil && len(s.defInherit) > 0 {
		// defaultInherit: prepended, unless the release names the template itself.
		named := map[string]bool{}
		for _, x := range list {
			im, _ := x.(map[string]any)
			named[strings.TrimSpace(str(im["template"]))] = true
		}
		var pre []any
		for _, n := range s.defInherit {
			if !named[n] {
				pre = append(pre, map[string]any{"template": n})
				named[n] = true
			}
		}
		list = append(pre, list...)
	}
	if len(list) == 0 {
		return m, nil
	}
	merged := map[string]any{}
	for _, x := range list {
		im, _ := x.(map[string]any)
		name := str(im["template"])
		for _, p := range path {
			if p == name {
				return nil, fmt.Errorf("cyclic inheritance %s", strings.Join(append(path, name), " -> "))
			}
		}
		t, ok := s.templates[name].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("it inherits the template %q, which templates: does not define", name)
		}
		t, err := c.inherit(s, deepCopy(t), append(path, name))
		if err != nil {
			return nil, err
		}
		if except, ok := im["except"].([]any); ok {
			for _, e := range except {
				delete(t, str(e))
			}
		}
		fill(merged, t)
	}
	delete(m, "inherit")
	fill(merged, m)
	return merged, nil
}

// fill is mergo.Merge without override, with append for lists.
func fill(dst, src map[string]any) {
	for k, v := range src {
		switch sv := v.(type) {
		case []any:
			d, _ := dst[k].([]any)
			dst[k] = append(append([]any{}, d...), sv...)
		case map[string]any:
			if d, ok := dst[k].(map[string]any); ok {
				fill(d, sv)
				continue
			}
			dst[k] = sv
		default:
			if cur, ok := dst[k]; !ok || cur == nil || cur == "" || cur == false {
				dst[k] = v
			}
		}
	}
}

// templateRelease renders the release's templated fields with the
// release's data until they stop changing, as helmfile does.
func (c *converter) templateRelease(s *state, m map[string]any, line int) error {
	render := func(what, text string) (string, error) {
		if !strings.Contains(text, "{{") {
			return text, nil
		}
		out, err := c.r.render(s.file, line-1, s.dir, text, releaseData(s, m))
		if err != nil {
			err = s.undefinedEnv(err)
			if ie, ok := err.(*InputError); ok {
				ie.Line = c.findLine(s, text, line)
				ie.Msg = "release " + str(m["name"]) + " " + what + ": " + ie.Msg
			}
			return "", err
		}
		return out, nil
	}
	for it := 0; it < 6; it++ {
		changed := false
		for _, k := range []string{"name", "chart", "namespace", "version", "installedTemplate", "conditionTemplate", "waitTemplate"} {
			if v, ok := m[k].(string); ok {
				out, err := render(k, v)
				if err != nil {
					return err
				}
				out = strings.TrimSpace(out)
				changed = changed || out != v
				m[k] = out
			}
		}
		if l, ok := m["labels"].(map[string]any); ok {
			for k, v := range l {
				out, err := render("labels."+k, str(v))
				if err != nil {
					return err
				}
				l[k] = out
			}
		}
		for _, k := range []string{"values", "secrets", "needs"} {
			if l, ok := m[k].([]any); ok {
				for i, v := range l {
					if sv, ok := v.(string); ok {
						out, err := render(fmt.Sprintf("%s[%d]", k, i), sv)
						if err != nil {
							return err
						}
						l[i] = out
					}
				}
			}
		}
		if vt, ok := m["valuesTemplate"].([]any); ok {
			for i, v := range vt {
				if mv, ok := v.(map[string]any); ok {
					text, _ := toYaml(mv)
					out, err := render(fmt.Sprintf("valuesTemplate[%d]", i), text)
					if err != nil {
						return err
					}
					var back map[string]any
					if err := yaml.Unmarshal([]byte(out), &back); err != nil {
						return &InputError{File: s.file, Line: line, Msg: fmt.Sprintf("release %s valuesTemplate[%d] is not YAML after rendering: %s", str(m["name"]), i, yamlErrMsg(err))}
					}
					vt[i] = stringKeys(back)
				}
			}
			vals, _ := m["values"].([]any)
			m["values"] = append(vt, vals...)
			delete(m, "valuesTemplate")
			changed = true
		}
		if st, ok := m["setTemplate"].([]any); ok {
			for i, x := range st {
				if e, ok := x.(map[string]any); ok {
					for _, f := range []string{"name", "value", "file"} {
						if sv, ok := e[f].(string); ok {
							out, err := render(fmt.Sprintf("setTemplate[%d].%s", i, f), sv)
							if err != nil {
								return err
							}
							e[f] = out
						}
					}
				}
			}
			set, _ := m["set"].([]any)
			m["set"] = append(st, set...)
			delete(m, "setTemplate")
			changed = true
		}
		if !changed {
			return nil
		}
	}
	return nil
}

// findLine is the line of the helmfile's source that holds text (a
// template expression), else line.
func (c *converter) findLine(s *state, text string, line int) int {
	first := strings.SplitN(strings.TrimSpace(text), "\n", 2)[0]
	if first == "" {
		return line
	}
	lines := strings.Split(s.src, "\n")
	best := 0
	for i, l := range lines {
		if strings.Contains(l, first) && (best == 0 || abs1(i+1-line) < abs1(best-line)) {
			best = i + 1
		}
	}
	if best == 0 {
		return line
	}
	return best
}

func abs1(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

// realLine is where a release is written in the source: its rendered line
// for a plain helmfile; for a .gotmpl one, the source line naming it.
func realLine(s *state, rendered int, name string) int {
	if !s.rendered || name == "" {
		return rendered
	}
	re := regexp.MustCompile(`^\s*-?\s*name:\s*["']?` + regexp.QuoteMeta(name) + `["']?\s*(#.*)?$`)
	lines := strings.Split(s.src, "\n")
	best := 0
	for i, l := range lines {
		if re.MatchString(l) && (best == 0 || abs1(i+1-rendered) < abs1(best-rendered)) {
			best = i + 1
		}
	}
	if best == 0 {
		return rendered
	}
	return best
}

// set carries set/setString entries as helmfile v1.8.0 passes them to helm
// (pkg/state setFlags, setStringFlags): a non-empty value as --set or
// --set-string, else (set only) a file as --set-file, else a non-empty
// values list as {a,b}; anything else passes nothing. The --set-file ones
// are returned: helm merges them after every --set and --set-string.
func (c *converter) set(r *rel, key string, entries []any, asString bool, into map[string]any) (files []map[string]any) {
	for i, x := range entries {
		e, ok := x.(map[string]any)
		if !ok {
			c.note(r, key, fmt.Sprintf("%s[%d]", key, i), "not a {name, value} entry")
			continue
		}
		switch expr, list := setExpr(e); {
		case expr != "":
			if err := parseSet(expr, asString && !list, into); err != nil {
				c.note(r, key, fmt.Sprintf("%s %s", key, str(e["name"])), "Helm cannot parse it: "+err.Error())
			}
		case str(e["file"]) != "" && asString:
			c.infof(r, key, fmt.Sprintf("%s %s file %s", key, str(e["name"]), str(e["file"])), "helmfile passes no --set-string for a file, so it sets nothing, and neither does the import")
		case str(e["file"]) != "":
			files = append(files, e)
		}
	}
	return files
}

// setExpr is the name=value helmfile gives helm for a set entry's value
// or values list (list: helm parses {a,b} as --set, even in setString);
// "" for a file or nothing.
func setExpr(e map[string]any) (expr string, list bool) {
	name, v := escape(str(e["name"])), setText(e["value"])
	if v != "" {
		return name + "=" + escape(v), false
	}
	values, _ := e["values"].([]any)
	if str(e["file"]) != "" || len(values) == 0 {
		return "", false
	}
	var parts []string
	for _, v := range values {
		parts = append(parts, escape(str(v)))
	}
	return name + "={" + strings.Join(parts, ",") + "}", true
}

func parseSet(expr string, asString bool, into map[string]any) error {
	if asString {
		return strvals.ParseIntoString(expr, into)
	}
	return strvals.ParseInto(expr, into)
}

// setOverValues is what set and setString give the lists they index, set
// over base (the values files' and inline values) as helm sets them: a
// set of a[0].b keeps the other keys of the element the values files give
// (trial 46s's D3). Each list of set becomes the whole list, which then
// replaces the values files' one as khook's values: does.
func setOverValues(r *rel, base, set map[string]any) {
	if !hasList(set) {
		return
	}
	full := deepCopy(base)
	for _, key := range []string{"set", "setString"} {
		entries, _ := r.m[key].([]any)
		for _, x := range entries {
			if e, ok := x.(map[string]any); ok {
				if expr, list := setExpr(e); expr != "" {
					_ = parseSet(expr, key == "setString" && !list, full) // set already said why it cannot
				}
			}
		}
	}
	full = stringKeys(full).(map[string]any)
	var project func(s, f map[string]any)
	project = func(s, f map[string]any) {
		for k, v := range s {
			switch t := v.(type) {
			case map[string]any:
				if fm, ok := f[k].(map[string]any); ok {
					project(t, fm)
				}
			case []any:
				if fl, ok := f[k].([]any); ok {
					s[k] = fl
				}
			}
		}
	}
	project(set, full)
}

func hasList(v any) bool {
	switch t := v.(type) {
	case []any:
		return true
	case map[string]any:
		for _, x := range t {
			if hasList(x) {
				return true
			}
		}
	}
	return false
}

// setFiles reads set entries' files as helm --set-file does. Each is
// remembered as a read, so that a secret one (a private key, a file named
// like a token) is written as a secret variable, never its content.
func (c *converter) setFiles(r *rel, files []map[string]any, into map[string]any) {
	for _, e := range files {
		p := abs(r.st.dir, str(e["file"]))
		data, err := os.ReadFile(p)
		if err != nil {
			c.fail = &InputError{File: r.st.file, Line: r.lineOf("set"), Msg: fmt.Sprintf("release %s set %s: the file %s cannot be read: %s", r.out.Resolved.Name, str(e["name"]), str(e["file"]), pathErr(err))}
			return
		}
		c.r.read(&fileRead{path: p, text: string(data), secret: importer.SecretLooking(importer.CamelWords(str(e["name"])))})
		read := func([]rune) (any, error) { return string(data), nil }
		if err := strvals.ParseIntoFile(escape(str(e["name"]))+"="+escape(str(e["file"])), into, read); err != nil {
			c.note(r, "set", "set "+str(e["name"]), "Helm cannot parse it: "+err.Error())
		}
	}
}

// setText is how helmfile writes a set value on helm's command line.
func setText(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case bool:
		return strconv.FormatBool(t)
	case int:
		return strconv.Itoa(t)
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// escape is helmfile's escaping of a --set value.
func escape(v string) string {
	v = strings.ReplaceAll(v, "{", `\{`)
	v = strings.ReplaceAll(v, "}", `\}`)
	return strings.ReplaceAll(v, ",", `\,`)
}

func deepEqualValues(a, b any) bool {
	return reflect.DeepEqual(jsonish(a), jsonish(b))
}

// jsonish normalises numbers so values from different decoders compare.
func jsonish(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = jsonish(x)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, x := range t {
			l[i] = jsonish(x)
		}
		return l
	case int:
		return float64(t)
	case int64:
		return float64(t)
	case uint64:
		return float64(t)
	}
	return v
}

var _ = filepath.Join
