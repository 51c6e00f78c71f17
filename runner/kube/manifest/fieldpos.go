package manifest

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// FieldPos finds the YAML node an API server field path names in one
// document, and returns its 1-based line and column (0, 0 when the document
// does not parse). Paths come in the API server's two spellings: strict
// decoding's "spec.template.spec.containers[0].resourcess" and server-side
// apply's ".spec.template.spec.containers[name=\"web\"].resourcess"; a map
// key in brackets ("nodeSelector[beta.kubernetes.io/os]") and keys holding
// dots ("metadata.annotations.example.com/x") resolve too. Aliases resolve
// to their anchor's node, and merge keys (<<) are followed. When the path
// leaves the document (a field the server defaulted), the position is that
// of the deepest field that is written.
func FieldPos(root *yaml.Node, path string) (line, col int) {
	if root == nil {
		return 0, 0
	}
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	n := locate(root, root, strings.TrimPrefix(path, "."))
	return n.Line, n.Column
}

// locate returns the node for path under n; at is the node that stands for
// n in the text (the mapping key that introduced it, when there is one).
func locate(n, at *yaml.Node, path string) *yaml.Node {
	n = deref(n)
	path = strings.TrimPrefix(path, ".")
	if path == "" || n == nil {
		return at
	}
	if path[0] == '[' {
		end := closingBracket(path)
		if end < 0 {
			return at
		}
		inner, rest := path[1:end], path[end+1:]
		switch n.Kind {
		case yaml.SequenceNode:
			if item := selectItem(n, inner); item != nil {
				return locate(item, item, rest)
			}
		case yaml.MappingNode:
			if k, v := lookup(n, unquote(inner)); k != nil {
				return locate(v, k, rest)
			}
		}
		return at
	}
	if n.Kind != yaml.MappingNode {
		return at
	}
	// The longest key that the path continues from: keys may hold dots.
	var bestK, bestV *yaml.Node
	for _, p := range mappingPairs(n, 0) {
		k := p[0].Value
		if !strings.HasPrefix(path, k) || (bestK != nil && len(k) <= len(bestK.Value)) {
			continue
		}
		if len(path) == len(k) || path[len(k)] == '.' || path[len(k)] == '[' {
			bestK, bestV = p[0], p[1]
		}
	}
	if bestK == nil {
		return at
	}
	return locate(bestV, bestK, path[len(bestK.Value):])
}

// selectItem picks a list item by index ("0") or by its key fields
// (`name="web"`, `containerPort=80,protocol="TCP"`).
func selectItem(seq *yaml.Node, inner string) *yaml.Node {
	if i, err := strconv.Atoi(inner); err == nil {
		if i >= 0 && i < len(seq.Content) {
			return seq.Content[i]
		}
		return nil
	}
	want := map[string]string{}
	for _, part := range splitSelector(inner) {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return nil
		}
		want[k] = unquote(v)
	}
	for _, item := range seq.Content {
		m := deref(item)
		if m == nil || m.Kind != yaml.MappingNode {
			continue
		}
		match := true
		for k, v := range want {
			if _, got := lookup(m, k); got == nil || deref(got).Value != v {
				match = false
				break
			}
		}
		if match {
			return item
		}
	}
	return nil
}

// splitSelector splits `a="x,y",b=2` at the commas outside quotes.
func splitSelector(s string) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// closingBracket is the index of the "]" that closes path[0]'s "[",
// skipping quoted text.
func closingBracket(path string) int {
	quoted := false
	for i := 1; i < len(path); i++ {
		switch path[i] {
		case '\\':
			i++
		case '"':
			quoted = !quoted
		case ']':
			if !quoted {
				return i
			}
		}
	}
	return -1
}

func unquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return s
}

// lookup finds a key in a mapping (merge keys followed).
func lookup(m *yaml.Node, key string) (k, v *yaml.Node) {
	for _, p := range mappingPairs(m, 0) {
		if p[0].Value == key {
			return p[0], p[1]
		}
	}
	return nil, nil
}

// mappingPairs lists a mapping's keys and values, explicit keys first, then
// those merged in with <<.
func mappingPairs(m *yaml.Node, depth int) [][2]*yaml.Node {
	m = deref(m)
	if m == nil || m.Kind != yaml.MappingNode || depth > 16 {
		return nil
	}
	var out, merged [][2]*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Tag == "!!merge" {
			src := deref(v)
			if src != nil && src.Kind == yaml.SequenceNode {
				for _, s := range src.Content {
					merged = append(merged, mappingPairs(s, depth+1)...)
				}
			} else {
				merged = append(merged, mappingPairs(src, depth+1)...)
			}
			continue
		}
		out = append(out, [2]*yaml.Node{deref(k), v})
	}
	return append(out, merged...)
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 64; i++ {
		n = n.Alias
	}
	return n
}

// yamlDocuments parses every document of a multi-document text, with
// positions in that text. A document that does not parse ends the list.
func yamlDocuments(text []byte) []*yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(text))
	var out []*yaml.Node
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) || err != nil {
			return out
		}
		out = append(out, &doc)
	}
}
