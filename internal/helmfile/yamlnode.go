package helmfile

import (
	"errors"

	yaml "go.yaml.in/yaml/v3"
)

// maxExpanded bounds the nodes decode expands aliases into: a document
// built to expand without end (a "billion laughs") is refused, not loaded.
const maxExpanded = 1 << 20

// decode decodes a part of a helmfile with its aliases expanded first.
// yaml.v3 refuses a node that is mostly one alias ("excessive aliasing")
// when it is decoded alone, as the import decodes each release and each
// helmfiles: entry; helmfile decodes the whole document, in which the
// anchor is decoded once (mijn-bureau-infra's 15 `values: *appvalues`).
func decode(n *yaml.Node, out any) error {
	count := 0
	x, err := dealias(n, &count, 0)
	if err != nil {
		return err
	}
	return x.Decode(out)
}

func dealias(n *yaml.Node, count *int, depth int) (*yaml.Node, error) {
	if *count++; *count > maxExpanded || depth > 1000 {
		return nil, errors.New("its aliases expand to more than a million nodes")
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return dealias(n.Alias, count, depth+1)
	}
	c := *n
	c.Anchor = ""
	if len(n.Content) > 0 {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, x := range n.Content {
			d, err := dealias(x, count, depth+1)
			if err != nil {
				return nil, err
			}
			c.Content[i] = d
		}
	}
	return &c, nil
}
