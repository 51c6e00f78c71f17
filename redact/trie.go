package redact

import "sort"

// trie is a radix tree of every masked form. Inserting costs the length of
// the new form (plus a binary search per branch); finding the longest form
// that starts at a position of a text walks only as far as the text agrees
// with some form. It replaces a strings.Replacer rebuilt over every form on
// each Add, whose cost grew with everything registered so far.
type trie struct {
	root node
	// first marks the bytes some form starts with: most positions of a text
	// start none, and are passed over without a walk.
	first [256]bool
	// longest is the length of the longest form, for the fast path.
	longest int
}

// node is a branch point; label is the text on the edge into it.
type node struct {
	label    string
	children []*node // sorted by label[0]
	end      bool    // a form ends here
}

func (n *node) child(c byte) (int, bool) {
	i := sort.Search(len(n.children), func(i int) bool { return n.children[i].label[0] >= c })
	return i, i < len(n.children) && n.children[i].label[0] == c
}

// insert adds s and reports whether it was new.
func (t *trie) insert(s string) bool {
	if s == "" {
		return false
	}
	t.first[s[0]] = true
	t.longest = max(t.longest, len(s))
	n := &t.root
	for {
		i, ok := n.child(s[0])
		if !ok {
			leaf := &node{label: s, end: true}
			n.children = append(n.children, nil)
			copy(n.children[i+1:], n.children[i:])
			n.children[i] = leaf
			return true
		}
		c := n.children[i]
		k := commonPrefix(c.label, s)
		if k < len(c.label) {
			// Split the edge: c keeps the tail of its label under a new
			// branch node holding the shared head.
			mid := &node{label: c.label[:k], children: []*node{c}}
			c.label = c.label[k:]
			n.children[i] = mid
			c = mid
		}
		if k == len(s) {
			was := c.end
			c.end = true
			return !was
		}
		s = s[k:]
		n = c
	}
}

// match returns the length of the longest form that s starts with, 0 when none.
func (t *trie) match(s string) int {
	if s == "" || !t.first[s[0]] {
		return 0
	}
	n, depth, best := &t.root, 0, 0
	for depth < len(s) {
		i, ok := n.child(s[depth])
		if !ok {
			break
		}
		c := n.children[i]
		if len(s)-depth < len(c.label) || s[depth:depth+len(c.label)] != c.label {
			break
		}
		depth += len(c.label)
		if c.end {
			best = depth
		}
		n = c
	}
	return best
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// mask replaces every stretch of s that some form covers with one maskText.
// Covering, not leftmost-first: where two forms overlap ("abc" and "bcdef"
// in "abcdef") no part of either is left visible, and a form that contains
// another is masked whole whichever starts first.
func (t *trie) mask(s, maskText string) string {
	if t.longest == 0 {
		return s
	}
	var out []byte
	copied := 0  // s[:copied] is in out, masked or not
	covered := 0 // s[:covered] lies inside some match
	open := false
	for i := 0; i < len(s); i++ {
		n := t.match(s[i:])
		switch {
		case n > 0 && !open:
			if out == nil {
				out = make([]byte, 0, len(s))
			}
			out = append(out, s[copied:i]...)
			open = true
		case n == 0 && open && i >= covered:
			out = append(out, maskText...)
			copied, open = covered, false
		}
		covered = max(covered, i+n)
	}
	if open {
		out = append(out, maskText...)
		copied = covered
	}
	if out == nil {
		return s
	}
	return string(append(out, s[copied:]...))
}

// all lists every form, in no order.
func (t *trie) all() []string {
	var out []string
	var walk func(n *node, prefix string)
	walk = func(n *node, prefix string) {
		p := prefix + n.label
		if n.end {
			out = append(out, p)
		}
		for _, c := range n.children {
			walk(c, p)
		}
	}
	walk(&t.root, "")
	return out
}
