package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxNodes bounds the node count of a document with every alias expanded: a
// billion-laughs alias bomb fails fast instead of eating memory.
const maxNodes = 100_000

var errTooManyNodes = fmt.Errorf("the document expands to more than %d YAML nodes, counting every alias expansion", maxNodes)

// parseDocument parses one YAML document. Positions are in the text given.
func parseDocument(text []byte, pm *posMap, file string) (*yaml.Node, Problems) {
	if est := estimateNodes(text); est > maxEstimatedNodes {
		return nil, Problems{{Pos: Pos{File: file, Line: 1, Col: 1}, Message: fmt.Sprintf("the document is too large: it holds about %d YAML nodes, the limit is %d", est, maxNodes),
			Hint: "split the spec, or move large manifests to file: sources"}}
	}
	dec := yaml.NewDecoder(bytes.NewReader(text))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, Problems{{Pos: Pos{File: file}, Message: "the spec is empty", Hint: "start with apiVersion: khook.io/v1 and kind: Khook"}}
		}
		return nil, Problems{yamlProblem(err, pm, file)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, Problems{{Pos: pm.Pos(extra.Line, extra.Column), Message: "a spec file holds one YAML document, found a second one",
			Hint: "remove the \"---\" separator, or split the documents into overlay files"}}
	} else if !errors.Is(err, io.EOF) {
		return nil, Problems{yamlProblem(err, pm, file)}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	budget := maxNodes
	if err := countNodes(root, &budget, map[*yaml.Node]bool{}); err != nil {
		hint := ""
		if errors.Is(err, errTooManyNodes) {
			hint = "split the spec, or expand fewer aliases: this looks like an alias bomb"
		}
		return nil, Problems{{Pos: pm.Pos(root.Line, root.Column), Message: err.Error(), Hint: hint}}
	}
	return root, nil
}

// countNodes walks the tree as a decoder would, expanding aliases, and fails
// when the budget runs out or an alias refers to a node that contains it.
func countNodes(n *yaml.Node, budget *int, active map[*yaml.Node]bool) error {
	*budget--
	if *budget < 0 {
		return errTooManyNodes
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return fmt.Errorf("alias *%s refers to an unknown anchor", n.Value)
		}
		if active[n.Alias] {
			return fmt.Errorf("alias *%s (line %d) refers to a node that contains it", n.Value, n.Line)
		}
		active[n.Alias] = true
		err := countNodes(n.Alias, budget, active)
		delete(active, n.Alias)
		return err
	}
	if n.Anchor != "" {
		active[n] = true
		defer delete(active, n)
	}
	for _, c := range n.Content {
		if err := countNodes(c, budget, active); err != nil {
			return err
		}
	}
	return nil
}

var (
	yamlLineErr   = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	yamlAnchorErr = regexp.MustCompile(`^yaml: unknown anchor '(.*)' referenced$`)
)

// yamlProblem turns a parser error into a Problem at the original position.
// Errors the parser gives no line for point at the alias they name, or at
// the start of the file.
func yamlProblem(err error, pm *posMap, file string) Problem {
	msg := err.Error()
	if m := yamlLineErr.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		pos := Pos{File: file, Line: line, Col: 1}
		if pm != nil {
			pos = pm.Pos(line, 1)
		}
		return Problem{Pos: pos, Message: "invalid YAML: " + m[2]}
	}
	pos := Pos{File: file, Line: 1, Col: 1}
	if m := yamlAnchorErr.FindStringSubmatch(msg); m != nil && pm != nil {
		if i := strings.Index(string(pm.out), "*"+m[1]); i >= 0 {
			pos = pm.posAt(pm.origOffset(i))
		}
		return Problem{Pos: pos, Message: fmt.Sprintf("invalid YAML: alias *%s refers to no anchor", m[1]), Hint: fmt.Sprintf("define it first with &%s", m[1])}
	}
	return Problem{Pos: pos, Message: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
}

// resolve follows aliases (cycles were rejected by countNodes).
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// pair is one key/value of a mapping, merge keys (<<) expanded.
type pair struct {
	k, v *yaml.Node
}

// pairs returns a mapping's entries with <<: merges applied (explicit keys
// win, then earlier merge sources), reporting duplicate explicit keys.
func (d *decoder) pairs(n *yaml.Node, path string) []pair {
	var out []pair
	seen := map[string]*yaml.Node{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Tag == "!!merge" {
			merges = append(merges, v)
			continue
		}
		rk := resolve(k)
		if rk.Kind != yaml.ScalarNode {
			d.problem(k, path, "", "mapping keys must be plain scalars")
			continue
		}
		if first, dup := seen[rk.Value]; dup {
			d.problem(k, joinPath(path, rk.Value), "remove one of them", "duplicate key %q (first written at line %d)", rk.Value, d.at(first).Line)
			continue
		}
		seen[rk.Value] = k
		out = append(out, pair{rk, v})
	}
	for _, m := range merges {
		m = resolve(m)
		var srcs []*yaml.Node
		switch m.Kind {
		case yaml.MappingNode:
			srcs = []*yaml.Node{m}
		case yaml.SequenceNode:
			for _, c := range m.Content {
				srcs = append(srcs, resolve(c))
			}
		}
		for _, src := range srcs {
			if src.Kind != yaml.MappingNode {
				d.problem(m, path, "", "a merge key (<<) takes a mapping or a list of mappings")
				continue
			}
			for _, p := range d.pairs(src, path) {
				if _, dup := seen[p.k.Value]; !dup {
					seen[p.k.Value] = p.k
					out = append(out, p)
				}
			}
		}
	}
	return out
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// scalarValue converts a scalar to the Go value its tag implies, the way
// values reach Helm: ints as int64, floats as float64, unknown tags as text.
func scalarValue(n *yaml.Node) any {
	switch n.Tag {
	case "!!null":
		return nil
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			return b
		}
	case "!!int":
		var i int64
		if n.Decode(&i) == nil {
			return i
		}
		var f float64
		if n.Decode(&f) == nil {
			return f
		}
	case "!!float":
		var f float64
		if n.Decode(&f) == nil {
			return f
		}
	}
	return n.Value
}
