package spec

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"go.yaml.in/yaml/v3"
)

// Overlays (issue 7, the k8shell blueprint manager's idea): -f base.yaml
// -f prod.yaml merges the documents in order before anything is decoded.
// Mappings merge recursively and a later scalar wins; steps merge by name;
// the lists in appendedLists grow; any other list is replaced. Nodes taken
// from an overlay are grafted, so every problem points at the file and line
// the value came from.

// patchKey is the strategic-merge-patch directive a step entry may carry:
// "$patch: delete" removes the step of that name, "$patch: replace" puts
// the entry in place of the step instead of merging into it. As the first
// item of an appended list, "- $patch: replace" replaces the list.
const patchKey = "$patch"

// appendedLists are the lists a later file adds to rather than replaces,
// by field path with step indexes written as "*".
var appendedLists = []string{
	"steps.*.needs",
	"steps.*.apply.manifests",
	"steps.*.helm.valuesFrom",
}

// overlay merges the overlay file's tree into ft, in place.
func (ft *fileTree) overlay(o *fileTree) Problems {
	m := &merger{base: ft, over: o}
	root := resolve(o.root)
	if root.Kind != yaml.MappingNode {
		return Problems{m.problem(root, "", "start the overlay with top-level fields such as steps:", "an overlay must be a mapping of spec fields")}
	}
	if resolve(ft.root).Kind != yaml.MappingNode {
		return nil // decoding the base reports it
	}
	m.mapping(ft.root, root, "")
	return m.probs
}

type merger struct {
	base, over *fileTree
	probs      Problems
}

func (m *merger) problem(n *yaml.Node, path, hint, format string, args ...any) Problem {
	pm := m.over.pm
	if o, ok := m.over.origin[n]; ok {
		pm = o
	}
	return Problem{Pos: pm.Pos(n.Line, n.Column), Path: path, Message: describe(path) + fmt.Sprintf(format, args...), Hint: hint}
}

func (m *merger) errorf(n *yaml.Node, path, hint, format string, args ...any) {
	m.probs = append(m.probs, m.problem(n, path, hint, format, args...))
}

// take grafts an overlay subtree into the base tree, with the anchored
// nodes its aliases refer to.
func (m *merger) take(n *yaml.Node) *yaml.Node {
	m.base.graft(m.over, n)
	var aliases func(*yaml.Node)
	aliases = func(n *yaml.Node) {
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			if _, done := m.base.origin[n.Alias]; !done {
				m.base.graft(m.over, n.Alias)
				aliases(n.Alias)
			}
		}
		for _, c := range n.Content {
			aliases(c)
		}
	}
	aliases(n)
	return n
}

// mapping merges the overlay mapping o into the base mapping b.
func (m *merger) mapping(b, o *yaml.Node, path string) {
	flatten(b)
	for _, p := range m.overlayPairs(o, path) {
		key := p.k.Value
		kpath := joinPath(path, key)
		i := keyIndex(b, key)
		if i < 0 {
			switch ov := resolve(p.v); {
			case ov.Tag == "!!null":
			case kpath == "steps" && ov.Kind == yaml.SequenceNode:
				// Directives still apply (and are reported) with no base steps.
				steps := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: ov.Line, Column: ov.Column}
				m.base.graft(m.over, steps)
				b.Content = append(b.Content, m.take(p.k), steps)
				m.steps(steps, ov)
			default:
				b.Content = append(b.Content, m.take(p.k), m.take(p.v))
			}
			continue
		}
		bv, ov := b.Content[i+1], resolve(p.v)
		switch {
		case ov.Tag == "!!null":
			// A later null removes the field, as in a JSON merge patch.
			b.Content = slices.Delete(b.Content, i, i+2)
		case ov.Kind == yaml.MappingNode && resolve(bv).Kind == yaml.MappingNode:
			bv = m.own(bv)
			b.Content[i+1] = bv
			m.mapping(bv, ov, kpath)
		case ov.Kind == yaml.SequenceNode && resolve(bv).Kind == yaml.SequenceNode && kpath == "steps":
			bv = m.own(bv)
			b.Content[i+1] = bv
			m.steps(bv, ov)
		case ov.Kind == yaml.SequenceNode && resolve(bv).Kind == yaml.SequenceNode && appended(kpath):
			bv = m.own(bv)
			b.Content[i+1] = bv
			m.appendList(bv, ov, kpath)
		default:
			b.Content[i], b.Content[i+1] = m.take(p.k), m.take(p.v)
		}
	}
}

// steps merges overlay steps into the base list by name.
func (m *merger) steps(b, o *yaml.Node) {
	for j, item := range o.Content {
		ov := resolve(item)
		path := fmt.Sprintf("steps.%d", j)
		name, directive := stepName(ov), ""
		if ov.Kind == yaml.MappingNode {
			if i := keyIndex(ov, patchKey); i >= 0 {
				directive = ov.Content[i+1].Value
				if directive != "delete" && directive != "replace" {
					m.errorf(ov.Content[i+1], path+"."+patchKey, "write $patch: delete or $patch: replace", "unknown directive %q", directive)
					continue
				}
				ov = withoutKey(ov, patchKey)
			}
		}
		at := -1
		if name != "" {
			at = slices.IndexFunc(b.Content, func(n *yaml.Node) bool { return stepName(resolve(n)) == name })
		}
		switch {
		case at < 0 && directive != "":
			m.errorf(item, path, "check the step name against the earlier files", "$patch: %s names step %q, which no earlier file defines", directive, name)
		case at < 0:
			b.Content = append(b.Content, m.take(ov))
		case directive == "delete":
			b.Content = slices.Delete(b.Content, at, at+1)
		case directive == "replace":
			b.Content[at] = m.take(ov)
		default:
			bs := m.own(b.Content[at])
			b.Content[at] = bs
			m.mapping(bs, ov, "steps.*")
		}
	}
}

// appendList adds the overlay's items to a base list, unless the overlay's
// first item is "$patch: replace".
func (m *merger) appendList(b, o *yaml.Node, path string) {
	items := o.Content
	if len(items) > 0 {
		if first := resolve(items[0]); first.Kind == yaml.MappingNode && keyIndex(first, patchKey) >= 0 {
			if d := first.Content[keyIndex(first, patchKey)+1].Value; d != "replace" || len(first.Content) != 2 {
				m.errorf(first, path, "write - $patch: replace as the first item on its own", "a list directive must be the first item, alone, and say replace")
				return
			}
			b.Content = b.Content[:0]
			items = items[1:]
		}
	}
	for _, it := range items {
		b.Content = append(b.Content, m.take(it))
	}
}

// overlayPairs lists an overlay mapping's entries with merge keys (<<)
// expanded, explicit keys first; a duplicate key is a problem, as in a base.
func (m *merger) overlayPairs(o *yaml.Node, path string) []pair {
	var out []pair
	seen := map[string]bool{}
	for _, p := range explicitPairs(o) {
		if p.k.Kind != yaml.ScalarNode {
			m.errorf(p.k, path, "", "mapping keys must be plain scalars")
			continue
		}
		if seen[p.k.Value] {
			m.errorf(p.k, joinPath(path, p.k.Value), "remove one of them", "duplicate key %q", p.k.Value)
			continue
		}
		seen[p.k.Value] = true
		out = append(out, p)
	}
	for _, p := range mergedPairs(o) {
		if !seen[p.k.Value] {
			seen[p.k.Value] = true
			out = append(out, p)
		}
	}
	return out
}

// own returns a node the merge may change: an anchored node, or one reached
// through an alias, is shared with other places and is copied first.
func (m *merger) own(n *yaml.Node) *yaml.Node {
	if n.Kind != yaml.AliasNode && n.Anchor == "" {
		return n
	}
	return m.base.copyNode(resolve(n))
}

// copyNode deep-copies a subtree, keeping each node's file.
func (ft *fileTree) copyNode(n *yaml.Node) *yaml.Node {
	c := *n
	c.Anchor = ""
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, ch := range n.Content {
		c.Content[i] = ft.copyNode(resolve(ch))
	}
	if o, ok := ft.origin[n]; ok {
		ft.origin[&c] = o
	}
	return &c
}

// flatten expands a base mapping's merge keys into explicit entries, so a
// later file can override a field the base took from an anchor.
func flatten(b *yaml.Node) {
	merged := mergedPairs(b)
	if len(merged) == 0 {
		return
	}
	var content []*yaml.Node
	for _, p := range explicitPairs(b) {
		content = append(content, p.k, p.v)
	}
	for _, p := range merged {
		if keyIndex(&yaml.Node{Content: content}, p.k.Value) < 0 {
			content = append(content, p.k, p.v)
		}
	}
	b.Content = content
}

func explicitPairs(n *yaml.Node) []pair {
	var out []pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Tag != "!!merge" {
			out = append(out, pair{resolve(n.Content[i]), n.Content[i+1]})
		}
	}
	return out
}

// mergedPairs are the entries a mapping takes from its << merge keys,
// earlier sources first.
func mergedPairs(n *yaml.Node) []pair {
	var out []pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Tag != "!!merge" {
			continue
		}
		src := resolve(n.Content[i+1])
		srcs := []*yaml.Node{src}
		if src.Kind == yaml.SequenceNode {
			srcs = nil
			for _, c := range src.Content {
				srcs = append(srcs, resolve(c))
			}
		}
		for _, s := range srcs {
			if s.Kind == yaml.MappingNode {
				out = append(out, explicitPairs(s)...)
				out = append(out, mergedPairs(s)...)
			}
		}
	}
	return out
}

// keyIndex is the index in n.Content of the key named key, or -1.
func keyIndex(n *yaml.Node, key string) int {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := resolve(n.Content[i]); k.Tag != "!!merge" && k.Value == key {
			return i
		}
	}
	return -1
}

func withoutKey(n *yaml.Node, key string) *yaml.Node {
	c := *n
	i := keyIndex(n, key)
	c.Content = slices.Delete(slices.Clone(n.Content), i, i+2)
	return &c
}

func stepName(n *yaml.Node) string {
	if n.Kind != yaml.MappingNode {
		return ""
	}
	if i := keyIndex(n, "name"); i >= 0 {
		return resolve(n.Content[i+1]).Value
	}
	return ""
}

func appended(path string) bool {
	return slices.Contains(appendedLists, path)
}

// loadMerged is Load's pipeline: every file is read, substituted and parsed
// on its own, the trees are merged in order, and the result is decoded and
// validated once. It returns the merged tree for khook render.
func loadMerged(opts LoadOptions) (*Spec, *fileTree, error) {
	if len(opts.Files) == 0 {
		return nil, nil, errors.New("no spec file given: pass -f FILE (or -f - for standard input)")
	}
	if opts.VarPrefix == "" {
		opts.VarPrefix = DefaultVarPrefix
	}
	if opts.SecretPrefix == "" {
		opts.SecretPrefix = DefaultSecretPrefix
	}
	vs, probs := gatherVars(opts)
	if len(probs) > 0 {
		return nil, nil, finish(probs, opts.Redactor)
	}
	files, decls, err := readFiles(opts)
	if err != nil {
		return nil, nil, err
	}
	if probs := resolveDeclared(decls, vs, opts); len(probs) > 0 {
		return nil, nil, finish(probs, opts.Redactor)
	}
	trees := make([]*fileTree, 0, len(files))
	pipes := newPipelines()
	for i, f := range files {
		if i > 0 && onlyComments(f.src) {
			continue // an overlay that only declares variables
		}
		ft, fprobs := parseFile(f.name, f.src, vs, pipes)
		probs = append(probs, fprobs...)
		trees = append(trees, ft)
	}
	if len(probs) > 0 {
		return nil, nil, finish(probs, opts.Redactor)
	}
	// A directive that cannot apply is skipped and reported with the
	// problems validation finds in the merged spec.
	merged := trees[0]
	for _, ft := range trees[1:] {
		probs = append(probs, merged.overlay(ft)...)
	}
	s, bprobs := build(merged, vs, opts.Redactor)
	probs = append(probs, bprobs...)
	s.Declared = decls
	probs = append(probs, immutableNeedsState(s)...)
	probs = append(probs, loadPolicies(s, merged, opts.Policies)...)
	s.Files = nil
	for _, f := range opts.Files {
		s.Files = append(s.Files, displayName(f))
	}
	// Relative paths in every file resolve against the first file's directory.
	if name := s.Files[0]; name != StdinName {
		s.BaseDir = filepath.Dir(name)
	} else if opts.StdinDir != "" {
		s.BaseDir = opts.StdinDir
	} else if wd, err := os.Getwd(); err == nil {
		s.BaseDir = wd
	}
	probs = append(probs, verifyMaterial(s)...)
	if opts.RequireVerifiedCharts {
		probs = append(probs, unverifiedCharts(s)...)
	}
	if len(probs) > 0 {
		return nil, nil, finish(probs, opts.Redactor)
	}
	return s, merged, nil
}

func displayName(file string) string {
	if file == "-" {
		return StdinName
	}
	return file
}

// onlyComments reports whether YAML text holds nothing but blank lines and comments.
func onlyComments(src []byte) bool {
	for _, line := range bytes.Split(src, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			return false
		}
	}
	return true
}
