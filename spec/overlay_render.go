package spec

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Render loads a spec as Load does — every file substituted, merged in
// order and validated — and returns the merged document as YAML, for
// khook render. Aliases are expanded (anchors of different files may share
// a name); comments are kept. Secret values are redacted. An invalid spec
// returns its Problems and no text.
func Render(opts LoadOptions) ([]byte, error) {
	_, merged, err := loadMerged(opts)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(expandAliases(merged.root)); err != nil {
		return nil, fmt.Errorf("cannot print the merged spec: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("cannot print the merged spec: %w", err)
	}
	return []byte(opts.Redactor.String(buf.String())), nil
}

// expandAliases copies a tree with every alias replaced by what it refers to.
func expandAliases(n *yaml.Node) *yaml.Node {
	n = resolve(n)
	c := *n
	c.Anchor = ""
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, ch := range n.Content {
		c.Content[i] = expandAliases(ch)
	}
	return &c
}
