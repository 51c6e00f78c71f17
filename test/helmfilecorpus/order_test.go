package helmfilecorpus

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// buildDoc is one state helmfile build printed: the file it came from,
// its helmfiles: entries and the indexes (into the resolved releases) of
// its enabled releases.
type buildDoc struct {
	source    string
	helmfiles []string
	rels      []int
	used      bool
}

// orderNeeds adds to each installed release the needs helmfile's order
// of helmfiles: implies, which helmfile build does not print: helmfile
// v1.8.0 pkg/app/app.go processNestedHelmfiles runs the entries of
// helmfiles: one after the other (visitStatesWithContext, each state
// converged — synced — before it returns), the files of one entry that is
// a glob or a folder in parallel (processStateFileParallel, unless
// --sequential-helmfiles), and processStateFileParallel converges a
// file's own releases after its helmfiles: (before them only with
// Reverse, for destroy/delete). So a release waits for every release of
// the entry before its file's, as the import writes it (trial 46p's D3).
// A release that is not installed is a delete step, whose needs the
// comparison reads through (releaseNeeds): a need of one is its own.
func orderNeeds(rs []resolved, docs []*buildDoc) {
	prevOf := map[int][]int{}
	id := func(i int) string { return rs[i].Namespace + "/" + rs[i].Name }
	var needsOf func(i int) []string
	needsOf = func(i int) []string {
		if rs[i].Installed {
			return []string{id(i)}
		}
		var out []string
		for _, p := range prevOf[i] {
			out = append(out, needsOf(p)...)
		}
		return out
	}
	var tree func(d *buildDoc, prev []int) []int
	tree = func(d *buildDoc, prev []int) []int {
		d.used = true
		for _, h := range d.helmfiles {
			var tail []int
			for _, m := range matchDocs(docs, filepath.Join(filepath.Dir(d.source), h)) {
				for _, r := range tree(m, prev) {
					if !slices.Contains(prev, r) && !slices.Contains(tail, r) {
						tail = append(tail, r)
					}
				}
			}
			if tail != nil {
				prev = tail
			}
		}
		for _, i := range d.rels {
			prevOf[i] = prev
			if !rs[i].Installed {
				continue
			}
			for _, p := range prev {
				for _, n := range needsOf(p) {
					if !slices.Contains(rs[i].Needs, n) {
						rs[i].Needs = append(rs[i].Needs, n)
					}
				}
			}
		}
		if len(d.rels) > 0 {
			return d.rels
		}
		return prev
	}
	// The files no helmfiles: names are the ones helmfile was given (the
	// last printed, or a helmfile.d's files, in parallel); a sub-helmfile
	// is printed before the file that names it.
	referenced := map[*buildDoc]bool{}
	for _, d := range docs {
		for _, h := range d.helmfiles {
			for _, m := range matchDocs(docs, filepath.Join(filepath.Dir(d.source), h)) {
				referenced[m] = true
			}
		}
		for _, m := range docs {
			m.used = false
		}
	}
	for _, d := range docs {
		if !referenced[d] && !d.used {
			tree(d, nil)
		}
	}
}

// matchDocs are the printed states an entry of helmfiles: (a path, a
// glob, a folder) names, not yet taken, by file name.
func matchDocs(docs []*buildDoc, pattern string) []*buildDoc {
	var out []*buildDoc
	taken := map[string]bool{}
	for _, d := range docs {
		if d.used || taken[d.source] {
			continue
		}
		ok, _ := filepath.Match(pattern, d.source)
		if fi, err := os.Stat(pattern); err == nil && fi.IsDir() {
			ok = filepath.Dir(d.source) == filepath.Clean(pattern)
		}
		if ok {
			taken[d.source] = true
			d.used = true
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].source < out[j].source })
	return out
}

// helmfile build prints no needs for the order of helmfiles:, which
// helmfile sync keeps: the comparison derives them, as the import writes
// them (trial 46p's D3). Here parts/b.yaml waits for parts/a.yaml; a
// glob's files run in parallel after the entry before.
func TestOrderNeedsFromHelmfiles(t *testing.T) {
	doc := func(src, body string) string { return "---\n#  Source: /w/" + src + "\n\nfilepath: x\n" + body }
	rel := func(name string) string { return "  - chart: ../chart\n    name: " + name + "\n    namespace: demo\n" }
	out := doc("parts/a.yaml", "releases:\n"+rel("first")) +
		doc("parts/b.yaml", "releases:\n"+rel("second")+rel("third")) +
		doc("more/c.yaml", "releases:\n"+rel("c")) + doc("more/d.yaml", "releases:\n"+rel("d")+"    installed: false\n") +
		doc("last.yaml", "releases:\n"+rel("last")) +
		doc("helmfile.yaml", "helmfiles:\n  - path: parts/a.yaml\n  - path: parts/b.yaml\n  - path: more/*.yaml\n  - path: last.yaml\nreleases:\n"+rel("own"))
	rs, dangling, err := resolveBuild([]byte(out), "/w", "helmfile.yaml")
	if err != nil || len(dangling) > 0 {
		t.Fatal(err, dangling)
	}
	want := map[string]string{"first": "", "second": "demo/first", "third": "demo/first", "c": "demo/second demo/third", "d": "",
		"last": "demo/c demo/second demo/third", "own": "demo/last"}
	for _, r := range rs {
		if got := strings.Join(r.Needs, " "); got != want[r.Name] {
			t.Errorf("%s needs %q, want %q", r.Name, got, want[r.Name])
		}
	}
}
