package spec

import (
	"fmt"
	"sort"
	"strings"
)

// Selector picks clusters by label: "env=prod,region!=eu" (every term must
// hold; = and == test equality, != inequality, a missing label is "").
type Selector struct {
	terms []selTerm
}

type selTerm struct {
	key, value string
	not        bool
}

// ParseSelector parses a label selector; "" selects every cluster.
func ParseSelector(s string) (Selector, error) {
	var sel Selector
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		t := selTerm{}
		var ok bool
		if k, v, found := strings.Cut(part, "!="); found {
			t.key, t.value, t.not, ok = k, v, true, true
		} else if k, v, found := strings.Cut(part, "=="); found {
			t.key, t.value, ok = k, v, true
		} else if k, v, found := strings.Cut(part, "="); found {
			t.key, t.value, ok = k, v, true
		}
		t.key, t.value = strings.TrimSpace(t.key), strings.TrimSpace(t.value)
		if !ok || t.key == "" {
			return Selector{}, fmt.Errorf("selector term %q is not LABEL=VALUE or LABEL!=VALUE (terms are separated by commas)", part)
		}
		sel.terms = append(sel.terms, t)
	}
	return sel, nil
}

// Matches reports whether every term holds for the labels.
func (s Selector) Matches(labels map[string]string) bool {
	for _, t := range s.terms {
		if (labels[t.key] == t.value) == t.not {
			return false
		}
	}
	return true
}

// Select returns the clusters of wave (0: every wave) that the selector
// matches, in the fleet file's order.
func (f *Fleet) Select(wave int, sel Selector) []*FleetCluster {
	var out []*FleetCluster
	for i := range f.Clusters {
		c := &f.Clusters[i]
		if (wave == 0 || c.Wave == wave) && sel.Matches(c.Labels) {
			out = append(out, c)
		}
	}
	return out
}

// Waves lists the fleet's waves in order.
func (f *Fleet) Waves() []int {
	seen := map[int]bool{}
	var out []int
	for _, c := range f.Clusters {
		if !seen[c.Wave] {
			seen[c.Wave] = true
			out = append(out, c.Wave)
		}
	}
	sort.Ints(out)
	return out
}
