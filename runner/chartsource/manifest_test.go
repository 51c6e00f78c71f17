package chartsource

import (
	"fmt"
	"strings"
	"testing"
)

func TestSplitBySource(t *testing.T) {
	manifest := "kind: Loose\n" +
		"---\n# Source: c/templates/a.yaml\nkind: A\n" +
		"---\n# Source: c/templates/b.yaml\nkind: B\n" +
		"---\n# Source: c/templates/a.yaml\nkind: A2\n"
	got := SplitBySource(manifest)
	want := []RenderedDoc{
		{"manifest", "kind: Loose\n"},
		{"c/templates/a.yaml", "---\n# Source: c/templates/a.yaml\nkind: A\n---\n# Source: c/templates/a.yaml\nkind: A2\n"},
		{"c/templates/b.yaml", "---\n# Source: c/templates/b.yaml\nkind: B\n"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("SplitBySource:\ngot  %q\nwant %q", got, want)
	}
}

// BenchmarkSplitBySourceLargeCRD: two templates of 1.4 MB and 20,000 lines,
// as kyverno 3.3.6's policy CRDs are. Appending line by line to a string
// took seconds of CPU per call on them.
func BenchmarkSplitBySourceLargeCRD(b *testing.B) {
	var m strings.Builder
	for doc := range 2 {
		fmt.Fprintf(&m, "---\n# Source: kyverno/charts/crds/templates/crd-%d.yaml\n", doc)
		for range 20000 {
			m.WriteString("                      description: a field of a large CRD schema\n")
		}
	}
	manifest := m.String()
	b.SetBytes(int64(len(manifest)))
	for b.Loop() {
		if docs := SplitBySource(manifest); len(docs) != 2 {
			b.Fatalf("%d docs", len(docs))
		}
	}
}
