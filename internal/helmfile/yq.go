package helmfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Bootstrap helmfiles read a Flux HelmRelease's values with
// {{ exec "yq" (list EXPR FILE) }} as often as with readFile | fromYaml.
// That exec only queries a file, so without --allow-exec the import
// evaluates the few yq forms these helmfiles use itself, running nothing:
//
//	[e|eval] 'STAGE | STAGE …' FILE, each document of FILE on its own, a STAGE being
//	.a.b                         a path (. alone: the document)
//	select(.a.b == "x").c.d      keep the documents whose path holds "x", then a path
//	.a.b = "s" + env(X) + "t"    set a path to strings and environment variables
//
// Anything else is refused as any other exec is.

// yqStage is one stage of a yq pipeline.
type yqStage struct {
	sel    []string // select(path == lit), when set
	lit    string
	path   []string
	assign []yqTerm // path = terms, when set
}

type yqTerm struct {
	lit string
	env string // env(X) or strenv(X) when set
}

var errYQ = errors.New("not a yq expression the import evaluates")

// yqNative evaluates exec "yq" args when they are one of the forms above:
// ok false means they are not, and the exec is refused as usual.
func (r *renderer) yqNative(baseDir string, args []any) (out string, ok bool, err error) {
	var s []string
	for _, a := range args {
		v, isStr := a.(string)
		if !isStr {
			return "", false, nil
		}
		s = append(s, v)
	}
	if len(s) == 3 && (s[0] == "e" || s[0] == "eval") {
		s = s[1:]
	}
	if len(s) != 2 || strings.HasPrefix(s[0], "-") || strings.HasPrefix(s[1], "-") {
		return "", false, nil
	}
	stages, perr := parseYQ(s[0])
	if perr != nil {
		return "", false, nil
	}
	path := abs(baseDir, s[1])
	data, rerr := os.ReadFile(path)
	if rerr != nil {
		return "", true, fmt.Errorf("yq: %w", r.fileErr(s[1], rerr))
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var parts []string
	for {
		var doc any
		if derr := dec.Decode(&doc); derr == io.EOF {
			break
		} else if derr != nil {
			return "", true, fmt.Errorf("%s is not YAML: %s", r.shown(s[1]), yamlErrMsg(derr))
		}
		doc = stringKeys(doc)
		v, keep, eerr := r.evalYQ(stages, doc)
		if eerr != nil {
			return "", true, eerr
		}
		if !keep {
			continue
		}
		switch t := v.(type) {
		case nil:
			parts = append(parts, "null\n")
		case string:
			parts = append(parts, t+"\n")
		default:
			body, _ := toYaml(t)
			parts = append(parts, body)
		}
	}
	return strings.Join(parts, "---\n"), true, nil
}

func (r *renderer) evalYQ(stages []yqStage, doc any) (any, bool, error) {
	v := doc
	for _, st := range stages {
		switch {
		case st.assign != nil:
			var b strings.Builder
			for _, t := range st.assign {
				if t.env == "" {
					b.WriteString(t.lit)
					continue
				}
				val, set := r.lookup(t.env)
				r.noteEnv(t.env, true)
				if !set {
					return nil, false, fmt.Errorf("yq env(%s): the environment variable is not set", t.env)
				}
				b.WriteString(val)
			}
			if m, isMap := v.(map[string]any); isMap {
				v = deepCopy(m)
			}
			if !yqSet(&v, st.path, b.String()) {
				return nil, false, fmt.Errorf("yq: cannot set .%s: a value on the way is not a map", strings.Join(st.path, "."))
			}
		default:
			if st.sel != nil && str(pathGet(v, st.sel)) != st.lit {
				return nil, false, nil
			}
			v = pathGet(v, st.path)
		}
	}
	return v, true, nil
}

func pathGet(v any, path []string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func yqSet(v *any, path []string, val any) bool {
	if len(path) == 0 {
		*v = val
		return true
	}
	if *v == nil {
		*v = map[string]any{}
	}
	m, ok := (*v).(map[string]any)
	if !ok {
		return false
	}
	child := m[path[0]]
	if !yqSet(&child, path[1:], val) {
		return false
	}
	m[path[0]] = child
	return true
}

// parseYQ parses the forms yqNative evaluates.
func parseYQ(expr string) ([]yqStage, error) {
	var out []yqStage
	for _, part := range splitTop(expr, '|') {
		part = strings.TrimSpace(part)
		var st yqStage
		if lhs, rhs, isAssign := cutTop(part, '='); isAssign && !strings.HasPrefix(rhs, "=") && !strings.HasSuffix(lhs, "=") {
			p, err := parseYQPath(strings.TrimSpace(lhs))
			if err != nil {
				return nil, err
			}
			st.path = p
			for _, t := range splitTop(rhs, '+') {
				t = strings.TrimSpace(t)
				switch {
				case strings.HasPrefix(t, `"`):
					s, err := strconv.Unquote(t)
					if err != nil {
						return nil, errYQ
					}
					st.assign = append(st.assign, yqTerm{lit: s})
				case strings.HasPrefix(t, "env(") && strings.HasSuffix(t, ")"):
					st.assign = append(st.assign, yqTerm{env: strings.TrimSpace(t[4 : len(t)-1])})
				case strings.HasPrefix(t, "strenv(") && strings.HasSuffix(t, ")"):
					st.assign = append(st.assign, yqTerm{env: strings.TrimSpace(t[7 : len(t)-1])})
				default:
					return nil, errYQ
				}
			}
			if st.assign == nil {
				return nil, errYQ
			}
			out = append(out, st)
			continue
		}
		if strings.HasPrefix(part, "select(") {
			end := strings.Index(part, ")")
			if end < 0 {
				return nil, errYQ
			}
			lhs, rhs, ok := strings.Cut(part[len("select("):end], "==")
			if !ok {
				return nil, errYQ
			}
			p, err := parseYQPath(strings.TrimSpace(lhs))
			if err != nil {
				return nil, err
			}
			lit, err := strconv.Unquote(strings.TrimSpace(rhs))
			if err != nil {
				return nil, errYQ
			}
			st.sel, st.lit = p, lit
			part = part[end+1:]
			if part == "" {
				out = append(out, st)
				continue
			}
		}
		p, err := parseYQPath(part)
		if err != nil {
			return nil, err
		}
		st.path = p
		out = append(out, st)
	}
	return out, nil
}

func parseYQPath(s string) ([]string, error) {
	if s == "." {
		return []string{}, nil
	}
	if !strings.HasPrefix(s, ".") {
		return nil, errYQ
	}
	var out []string
	for _, k := range strings.Split(s[1:], ".") {
		if k == "" || strings.ContainsAny(k, `[]()"' *?|=+`) {
			return nil, errYQ
		}
		out = append(out, k)
	}
	return out, nil
}

// splitTop splits s at sep outside double quotes and parentheses.
func splitTop(s string, sep byte) []string {
	var out []string
	depth, quoted, start := 0, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && quoted:
			i++
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == sep && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// cutTop is strings.Cut at the first sep outside quotes and parentheses.
func cutTop(s string, sep byte) (string, string, bool) {
	parts := splitTop(s, sep)
	if len(parts) < 2 {
		return s, "", false
	}
	return parts[0], s[len(parts[0])+1:], true
}
