package spec

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

// decoder fills the spec types from a yaml.Node tree, strictly: unknown
// fields, duplicate keys and wrong types are problems, and every field path
// gets its source position.
type decoder struct {
	pm *posMap
	// origin maps nodes grafted from another file (an overlay) to that
	// file's position map; every other node belongs to pm's file.
	origin map[*yaml.Node]*posMap
	pos    map[string]Pos
	probs  Problems
	bad    map[string]bool // paths whose value could not be decoded
	typos  map[string]bool // fields written misspelt (the did-you-mean target)
}

func (d *decoder) at(n *yaml.Node) Pos {
	if m, ok := d.origin[n]; ok {
		return m.Pos(n.Line, n.Column)
	}
	return d.pm.Pos(n.Line, n.Column)
}

func (d *decoder) problem(n *yaml.Node, path, hint, format string, args ...any) {
	if d.bad != nil {
		d.bad[path] = true
	}
	d.probs = append(d.probs, Problem{Pos: d.at(n), Path: path, Message: describe(path) + fmt.Sprintf(format, args...), Hint: hint})
}

// describe prefixes a message with the field it is about.
func describe(path string) string {
	if path == "" {
		return ""
	}
	return path + ": "
}

var (
	durationType = reflect.TypeFor[Duration]()
	helmTestType = reflect.TypeFor[*HelmTest]()
	pruneType    = reflect.TypeFor[*Prune]()
)

// extensionPrefix marks top-level fields khook ignores, so that anchors for
// later aliases have somewhere to live (the docker compose convention).
const extensionPrefix = "x-"

// fieldInfo maps a struct's JSON names to field indexes.
type fieldInfo struct {
	index map[string]int
	names []string // sorted, for did-you-mean
}

var fieldCache sync.Map // reflect.Type → *fieldInfo

func fieldsOf(t reflect.Type) *fieldInfo {
	if fi, ok := fieldCache.Load(t); ok {
		return fi.(*fieldInfo)
	}
	fi := &fieldInfo{index: map[string]int{}}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		fi.index[name] = i
		fi.names = append(fi.names, name)
	}
	sort.Strings(fi.names)
	fieldCache.Store(t, fi)
	return fi
}

// decode fills v from n. keyNode is the mapping key that introduced n (nil
// for list items and the root); collections take their position from it.
func (d *decoder) decode(n, keyNode *yaml.Node, path string, v reflect.Value) {
	n = resolve(n)
	p := n
	if keyNode != nil && (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) {
		p = keyNode
	}
	d.pos[path] = d.at(p) // "" is the document root: PosOf's last resort
	isNull := n.Kind == yaml.ScalarNode && n.Tag == "!!null"
	if d.special(n, keyNode, path, v, isNull) || isNull {
		return
	}
	switch t := v.Type(); t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int:
		d.scalar(n, path, v)
	case reflect.Slice:
		d.list(n, path, v)
	case reflect.Map:
		d.mapping(n, keyNode, path, v)
	case reflect.Struct:
		d.fields(n, path, v)
	default:
		d.problem(n, path, "", "cannot be decoded into %s", t)
	}
}

// special decodes what is not a plain Go value: durations, the DSL's short
// forms (test: true, prune: false, env: {NAME: value}), pointers and
// interfaces. It reports whether it decoded n.
func (d *decoder) special(n, keyNode *yaml.Node, path string, v reflect.Value, isNull bool) bool {
	t := v.Type()
	switch {
	case t == durationType:
		if !isNull {
			d.duration(n, path, v)
		}
	case t == helmTestType && n.Kind == yaml.ScalarNode && n.Tag == "!!bool":
		var on bool
		_ = n.Decode(&on)
		if on { // test: true is test: {}; test: false runs none
			v.Set(reflect.ValueOf(&HelmTest{}))
		}
	case t == pruneType && n.Kind == yaml.ScalarNode && n.Tag == "!!bool":
		var on bool
		_ = n.Decode(&on)
		v.Set(reflect.ValueOf(&Prune{Disabled: !on})) // prune: true is prune: {}
	case t == pruneType && n.Kind == yaml.ScalarNode && !isNull:
		d.problem(n, path, "write prune: false to turn pruning off, or prune: {crds: true, namespaces: true, data: true}", "must be true, false or {crds, namespaces, data}, got %s", shown(n))
	case t == envValueType && n.Kind == yaml.ScalarNode:
		if !isNull { // env: {NAME: value}, the short form
			v.Set(reflect.ValueOf(EnvValue{Value: n.Value}))
		}
	case t.Kind() == reflect.Pointer:
		if isNull && t.Elem().Kind() != reflect.Struct {
			return true
		}
		if v.IsNil() {
			v.Set(reflect.New(t.Elem()))
		}
		d.decode(n, keyNode, path, v.Elem())
	case t.Kind() == reflect.Interface:
		if val := d.value(n, keyNode, path); val != nil {
			v.Set(reflect.ValueOf(val))
		}
	default:
		return false
	}
	return true
}

// duration decodes a Go duration greater than zero.
func (d *decoder) duration(n *yaml.Node, path string, v reflect.Value) {
	if n.Kind != yaml.ScalarNode {
		d.problem(n, path, "write a Go duration such as 90s, 5m or 1h30m", "must be a duration")
		return
	}
	dur, err := time.ParseDuration(n.Value)
	if err != nil {
		d.problem(n, path, "write a Go duration such as 90s, 5m or 1h30m", "%q is not a duration", n.Value)
		return
	}
	if dur <= 0 {
		d.problem(n, path, "", "must be greater than zero, got %s", n.Value)
		return
	}
	v.Set(reflect.ValueOf(Duration(dur)))
}

// scalar decodes a string, a bool or an int, each of its own YAML type.
func (d *decoder) scalar(n *yaml.Node, path string, v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			d.problem(n, path, "", "must be a string, not a %s", kindName(n))
			return
		}
		v.SetString(n.Value)
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&b) != nil {
			d.problem(n, path, quotedHint(n, "true", "false"), "must be true or false, got %s", shown(n))
			return
		}
		v.SetBool(b)
	case reflect.Int:
		var i int
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&i) != nil {
			hint := ""
			if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 && intLike.MatchString(n.Value) {
				hint = "remove the quotes: a quoted number is a string"
			}
			d.problem(n, path, hint, "must be an integer, got %s", shown(n))
			return
		}
		v.SetInt(int64(i))
	}
}

// list decodes a sequence item by item.
func (d *decoder) list(n *yaml.Node, path string, v reflect.Value) {
	if n.Kind != yaml.SequenceNode {
		d.problem(n, path, "", "must be a list, not a %s", kindName(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, c := range n.Content {
		d.decode(c, nil, path+"."+strconv.Itoa(i), s.Index(i))
	}
	v.Set(s)
}

// mapping decodes a map; a null string value keeps its position.
func (d *decoder) mapping(n, keyNode *yaml.Node, path string, v reflect.Value) {
	t := v.Type()
	if n.Kind != yaml.MappingNode {
		d.problem(n, path, "", "must be a map, not a %s", kindName(n))
		return
	}
	if t.Elem().Kind() == reflect.Interface {
		v.Set(reflect.ValueOf(d.value(n, keyNode, path)))
		return
	}
	m := reflect.MakeMap(t)
	for _, pr := range d.pairs(n, path) {
		ev := reflect.New(t.Elem()).Elem()
		kp := joinPath(path, pr.k.Value)
		if vn := resolve(pr.v); t.Elem().Kind() == reflect.String && vn.Kind == yaml.ScalarNode && vn.Tag == "!!null" {
			d.pos[kp] = d.at(vn)
		} else {
			d.decode(pr.v, pr.k, kp, ev)
		}
		m.SetMapIndex(reflect.ValueOf(pr.k.Value), ev)
	}
	v.Set(m)
}

// fields decodes a struct field by field, each unknown key a problem.
func (d *decoder) fields(n *yaml.Node, path string, v reflect.Value) {
	if n.Kind != yaml.MappingNode {
		d.problem(n, path, "", "must be a map of fields, not a %s", kindName(n))
		return
	}
	fi := fieldsOf(v.Type())
	for _, pr := range d.pairs(n, path) {
		idx, ok := fi.index[pr.k.Value]
		if !ok && path == "" && strings.HasPrefix(pr.k.Value, extensionPrefix) {
			continue // a top-level x- field: a home for anchors, ignored
		}
		if !ok {
			d.unknownField(pr.k, path, fi.names)
			continue
		}
		d.decode(pr.v, pr.k, joinPath(path, pr.k.Value), v.Field(idx))
	}
}

// value converts any subtree to plain Go values (map[string]any, []any,
// scalars), recording the position of every nested path.
func (d *decoder) value(n, keyNode *yaml.Node, path string) any {
	n = resolve(n)
	p := n
	if keyNode != nil && n.Kind != yaml.ScalarNode {
		p = keyNode
	}
	d.pos[path] = d.at(p)
	switch n.Kind {
	case yaml.MappingNode:
		prs := d.pairs(n, path)
		m := make(map[string]any, len(prs))
		for _, pr := range prs {
			m[pr.k.Value] = d.value(pr.v, pr.k, joinPath(path, pr.k.Value))
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, c := range n.Content {
			s[i] = d.value(c, nil, path+"."+strconv.Itoa(i))
		}
		return s
	case yaml.ScalarNode:
		return scalarValue(n)
	}
	return nil
}

func (d *decoder) unknownField(k *yaml.Node, path string, known []string) {
	hint := ""
	if k.Value == "skipIf" {
		hint = "only helm (skipIf: installed), apply (skipIf: exists) and job (skipIf: succeeded) steps take skipIf"
	} else if s := suggest(k.Value, known); s != "" {
		hint = fmt.Sprintf("did you mean %q?", s)
		// The field is there, misspelt: "chart is required" would only repeat it.
		d.typos[joinPath(path, s)] = true
	} else {
		hint = "known fields: " + strings.Join(known, ", ")
		if path == "" {
			hint += "; top-level fields starting with x- are ignored, a place for anchors"
		}
	}
	where := "at the top level"
	if path != "" {
		where = "in " + path
	}
	d.probs = append(d.probs, Problem{Pos: d.at(k), Path: joinPath(path, k.Value), Message: fmt.Sprintf("unknown field %q %s", k.Value, where), Hint: hint})
}

var intLike = regexp.MustCompile(`^-?[0-9]+$`)

// quotedHint explains a quoted literal that would be valid without quotes.
func quotedHint(n *yaml.Node, literals ...string) string {
	if n.Kind == yaml.ScalarNode && n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		for _, l := range literals {
			if n.Value == l {
				return "remove the quotes: a quoted " + l + " is a string"
			}
		}
	}
	return ""
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "map"
	case yaml.SequenceNode:
		return "list"
	}
	return "scalar"
}

func shown(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode {
		return "a " + kindName(n)
	}
	if len(n.Value) > 40 {
		return fmt.Sprintf("%q", n.Value[:40]+"...")
	}
	return fmt.Sprintf("%q", n.Value)
}

// suggest returns the known name closest to s, if it is a plausible typo.
func suggest(s string, known []string) string {
	best, bestD := "", 1<<30
	for _, k := range known {
		if strings.EqualFold(k, s) {
			return k
		}
		dist := levenshtein(strings.ToLower(s), strings.ToLower(k))
		if dist < bestD {
			best, bestD = k, dist
		}
	}
	limit := 2
	if len(s) <= 3 {
		limit = 1
	}
	if bestD <= limit {
		return best
	}
	return ""
}

func levenshtein(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
