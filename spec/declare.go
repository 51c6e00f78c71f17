package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Declared variables (issue 7, from the tazuna hint file and KUDO's typed
// parameters): an optional top-level vars: block declares each input, and
// rules: states constraints across inputs. Declarations are read from the
// raw text before substitution — they decide what ${NAME} means — and the
// blocks are blanked out of the text the rest of the pipeline sees, so
// positions of everything else stay put.

// Variable types. Values still reach ${} as text; list and map values as
// the YAML/JSON text they were given in.
const (
	VarString   = "string"
	VarInt      = "int"
	VarBool     = "bool"
	VarDuration = "duration"
	VarList     = "list"
	VarMap      = "map"
)

// VarTypes are the declarable types, in the order messages list them.
var VarTypes = []string{VarString, VarInt, VarBool, VarDuration, VarList, VarMap}

// RuleOneOfRequired is the one rules: type: at least one of its vars is provided.
const RuleOneOfRequired = "oneof_required"

// VarDecl is one declared input. After a successful load Value is what
// ${NAME} became, Provided says the user gave it (not a default) and Source
// where it came from ("--set", "environment KHOOK_SECRET_X", ...).
type VarDecl struct {
	Name            string   `json:"name"`
	Type            string   `json:"type"`
	Required        bool     `json:"required,omitempty"`
	Default         *string  `json:"default,omitempty"` // text form; nil: none
	Description     string   `json:"description,omitempty"`
	Format          string   `json:"format,omitempty"`
	Pattern         string   `json:"pattern,omitempty"`
	Enum            []string `json:"enum,omitempty"`
	Secret          bool     `json:"secret,omitempty"`
	RequiredWith    []string `json:"required_with,omitempty"`
	RequiredWithout []string `json:"required_without,omitempty"`
	Immutable       bool     `json:"immutable,omitempty"`
	Pos             Pos      `json:"-"`

	Value    string `json:"-"`
	Provided bool   `json:"-"`
	Source   string `json:"-"`

	// defaultNode is the written default, for type checks; fieldPos the
	// position of each written field, for problems.
	defaultNode *yaml.Node
	fieldPos    map[string]Pos
}

// VarRule is one entry of rules:.
type VarRule struct {
	Type    string   `json:"type"`
	Vars    []string `json:"vars"`
	Message string   `json:"message,omitempty"`
	Pos     Pos      `json:"-"`
}

// Declarations are the merged vars: and rules: blocks of a spec's files.
type Declarations struct {
	Vars  []*VarDecl
	Rules []VarRule
}

// Lookup returns the declaration of name, or nil.
func (d *Declarations) Lookup(name string) *VarDecl {
	if d == nil {
		return nil
	}
	for _, v := range d.Vars {
		if v.Name == name {
			return v
		}
	}
	return nil
}

func (v *VarDecl) at(field string) Pos {
	if p, ok := v.fieldPos[field]; ok {
		return p
	}
	return v.Pos
}

// declBlockStart is the first line of a top-level vars: or rules: block.
var declBlockStart = regexp.MustCompile(`^(vars|rules):([ \t].*)?$`)

// extractBlocks finds the top-level vars: and rules: blocks in raw spec
// text, parses them with their real line numbers, and returns the text with
// those lines emptied. A block is its key line plus every following line
// that is blank, indented or a comment.
func extractBlocks(name string, src []byte) (varsNode, rulesNode *yaml.Node, rest []byte, probs Problems) {
	rest = src
	if !bytes.Contains(src, []byte("vars:")) && !bytes.Contains(src, []byte("rules:")) {
		return nil, nil, src, nil // most specs: no declarations to look for
	}
	lines := bytes.SplitAfter(src, []byte("\n"))
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(string(lines[i]), "\r\n")
		m := declBlockStart.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		end := i + 1
		for end < len(lines) {
			l := lines[end]
			if t := bytes.TrimSpace(l); len(t) > 0 && l[0] != ' ' && l[0] != '\t' && t[0] != '#' {
				break
			}
			end++
		}
		// Parse the block alone, preceded by empty lines so that line
		// numbers are the file's.
		var frag bytes.Buffer
		frag.Write(bytes.Repeat([]byte("\n"), i))
		for _, l := range lines[i:end] {
			frag.Write(l)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(frag.Bytes(), &doc); err != nil {
			probs = append(probs, yamlProblem(err, nil, name))
		} else if len(doc.Content) == 1 && len(doc.Content[0].Content) == 2 {
			if m[1] == "vars" {
				varsNode = doc.Content[0].Content[1]
			} else {
				rulesNode = doc.Content[0].Content[1]
			}
		}
		if bytes.Equal(rest, src) {
			rest = slices.Clone(src)
		}
		off := 0
		for _, l := range lines[:i] {
			off += len(l)
		}
		for _, l := range lines[i:end] {
			for j := range l {
				if l[j] != '\n' && l[j] != '\r' {
					rest[off+j] = ' '
				}
			}
			off += len(l)
		}
		i = end - 1
	}
	return varsNode, rulesNode, rest, probs
}

// declFields are the fields of one declaration.
var declFields = []string{"type", "required", "default", "description", "format", "pattern", "enum", "secret", "required_with", "required_without", "immutable"}

// decodeDecls reads one file's vars: block. Each declaration records the
// fields this file wrote (fieldPos), so a later file overrides only those.
func decodeDecls(file string, n *yaml.Node) ([]*VarDecl, Problems) {
	var probs Problems
	at := func(n *yaml.Node) Pos { return Pos{File: file, Line: n.Line, Col: n.Column} }
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, Problems{{Pos: at(n), Path: "vars", Message: "vars: must be a map of NAME: {type: ..., ...}"}}
	}
	var out []*VarDecl
	for _, p := range explicitPairs(n) {
		name, body := p.k.Value, resolve(p.v)
		path := "vars." + name
		if !varName.MatchString(name) {
			probs = append(probs, Problem{Pos: at(p.k), Path: path, Message: fmt.Sprintf("%s: %q is not a variable name (letters, digits and _, not starting with a digit)", path, name)})
			continue
		}
		if slices.ContainsFunc(out, func(d *VarDecl) bool { return d.Name == name }) {
			probs = append(probs, Problem{Pos: at(p.k), Path: path, Message: path + ": declared twice", Hint: "remove one of them"})
			continue
		}
		d := &VarDecl{Name: name, Pos: at(p.k), fieldPos: map[string]Pos{}}
		out = append(out, d)
		if body.Kind != yaml.MappingNode {
			probs = append(probs, Problem{Pos: at(body), Path: path, Message: path + ": a declaration is a map such as {type: string, required: true}"})
			continue
		}
		for _, f := range explicitPairs(body) {
			key, v := f.k.Value, resolve(f.v)
			fpath := path + "." + key
			d.fieldPos[key] = at(v)
			bad := func(want string) {
				probs = append(probs, Problem{Pos: at(v), Path: fpath, Message: fmt.Sprintf("%s: must be %s", fpath, want)})
			}
			switch key {
			case "type", "description", "format", "pattern":
				if v.Kind != yaml.ScalarNode {
					bad("a string")
					continue
				}
				*map[string]*string{"type": &d.Type, "description": &d.Description, "format": &d.Format, "pattern": &d.Pattern}[key] = v.Value
			case "required", "secret", "immutable":
				var b bool
				if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" || v.Decode(&b) != nil {
					bad("true or false")
					continue
				}
				*map[string]*bool{"required": &d.Required, "secret": &d.Secret, "immutable": &d.Immutable}[key] = b
			case "default":
				if v.Tag == "!!null" {
					continue
				}
				d.defaultNode = v
				text, err := nodeText(v)
				if err != nil {
					bad("a scalar, a list or a map")
					continue
				}
				d.Default = &text
			case "enum", "required_with", "required_without":
				list, ok := scalarList(v)
				if !ok {
					bad("a list of scalars")
					continue
				}
				*map[string]*[]string{"enum": &d.Enum, "required_with": &d.RequiredWith, "required_without": &d.RequiredWithout}[key] = list
			default:
				hint := "a declaration takes " + strings.Join(declFields, ", ")
				if s := suggest(key, declFields); s != "" {
					hint = fmt.Sprintf("did you mean %q?", s)
				}
				probs = append(probs, Problem{Pos: at(f.k), Path: fpath, Message: fmt.Sprintf("unknown field %q in %s", key, path), Hint: hint})
			}
		}
	}
	return out, probs
}

// decodeRules reads one file's rules: block.
func decodeRules(file string, n *yaml.Node) ([]VarRule, Problems) {
	at := func(n *yaml.Node) Pos { return Pos{File: file, Line: n.Line, Col: n.Column} }
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, Problems{{Pos: at(n), Path: "rules", Message: "rules: must be a list of {type: oneof_required, vars: [...], message: ...}"}}
	}
	var out []VarRule
	var probs Problems
	for i, item := range n.Content {
		item = resolve(item)
		path := fmt.Sprintf("rules.%d", i)
		r := VarRule{Pos: at(item)}
		if item.Kind != yaml.MappingNode {
			probs = append(probs, Problem{Pos: r.Pos, Path: path, Message: path + ": a rule is a map such as {type: oneof_required, vars: [A, B]}"})
			continue
		}
		for _, f := range explicitPairs(item) {
			v := resolve(f.v)
			switch f.k.Value {
			case "type", "message":
				if v.Kind != yaml.ScalarNode {
					probs = append(probs, Problem{Pos: at(v), Path: path + "." + f.k.Value, Message: path + "." + f.k.Value + ": must be a string"})
				} else if f.k.Value == "type" {
					r.Type = v.Value
				} else {
					r.Message = v.Value
				}
			case "vars":
				list, ok := scalarList(v)
				if !ok {
					probs = append(probs, Problem{Pos: at(v), Path: path + ".vars", Message: path + ".vars: must be a list of variable names"})
				}
				r.Vars = list
			default:
				probs = append(probs, Problem{Pos: at(f.k), Path: path + "." + f.k.Value, Message: fmt.Sprintf("unknown field %q in %s", f.k.Value, path), Hint: "a rule takes type, vars and message"})
			}
		}
		out = append(out, r)
	}
	return out, probs
}

// mergeDecls lays a later file's declarations over the earlier ones: a
// field the later file writes wins, the others stay.
func mergeDecls(base, later []*VarDecl) []*VarDecl {
	for _, l := range later {
		i := slices.IndexFunc(base, func(d *VarDecl) bool { return d.Name == l.Name })
		if i < 0 {
			base = append(base, l)
			continue
		}
		b := base[i]
		b.Pos = l.Pos // problems point at the latest declaration
		for field, pos := range l.fieldPos {
			b.fieldPos[field] = pos
			switch field {
			case "type":
				b.Type = l.Type
			case "required":
				b.Required = l.Required
			case "default":
				b.Default, b.defaultNode = l.Default, l.defaultNode
			case "description":
				b.Description = l.Description
			case "format":
				b.Format = l.Format
			case "pattern":
				b.Pattern = l.Pattern
			case "enum":
				b.Enum = l.Enum
			case "secret":
				b.Secret = l.Secret
			case "required_with":
				b.RequiredWith = l.RequiredWith
			case "required_without":
				b.RequiredWithout = l.RequiredWithout
			case "immutable":
				b.Immutable = l.Immutable
			}
		}
	}
	return base
}

// nodeText is the text a value reaches ${} as: a scalar as written, a list
// or map as compact JSON.
func nodeText(n *yaml.Node) (string, error) {
	if n.Kind == yaml.ScalarNode {
		return n.Value, nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return "", err
	}
	b, err := json.Marshal(v)
	return string(b), err
}

func scalarList(n *yaml.Node) ([]string, bool) {
	if n.Kind != yaml.SequenceNode {
		return nil, false
	}
	out := make([]string, 0, len(n.Content))
	for _, c := range n.Content {
		c = resolve(c)
		if c.Kind != yaml.ScalarNode {
			return nil, false
		}
		out = append(out, c.Value)
	}
	return out, true
}

// specFile is one read spec file with its vars: and rules: blocks blanked.
type specFile struct {
	name string
	src  []byte
}

// readFiles reads every spec file, lifts out the declarations, merges them
// in file order and runs the schema-level checks.
func readFiles(opts LoadOptions) ([]specFile, *Declarations, error) {
	var files []specFile
	d := &Declarations{}
	var probs Problems
	for _, file := range opts.Files {
		name, src, err := readSpecFile(file, opts.Stdin)
		if err != nil {
			return nil, nil, opts.Redactor.Error(err)
		}
		varsNode, rulesNode, rest, bprobs := extractBlocks(name, src)
		probs = append(probs, bprobs...)
		if varsNode != nil {
			vars, vprobs := decodeDecls(name, varsNode)
			probs = append(probs, vprobs...)
			d.Vars = mergeDecls(d.Vars, vars)
		}
		if rulesNode != nil {
			rules, rprobs := decodeRules(name, rulesNode)
			probs = append(probs, rprobs...)
			d.Rules = append(d.Rules, rules...)
		}
		files = append(files, specFile{name: name, src: rest})
	}
	probs = append(probs, checkDeclarations(d)...)
	if len(probs) > 0 {
		return nil, nil, finish(probs, opts.Redactor)
	}
	return files, d, nil
}

// ReadDeclarations returns the declared inputs of a spec's files (every -f,
// merged in order) after the schema-level checks, without looking at any
// value: khook vars lists them even when required ones are not set.
func ReadDeclarations(opts LoadOptions) (*Declarations, error) {
	if len(opts.Files) == 0 {
		return nil, errors.New("no spec file given: pass -f FILE (or -f - for standard input)")
	}
	_, d, err := readFiles(opts)
	return d, err
}
