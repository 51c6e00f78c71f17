package shscript

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/khook/khook/internal/importer"
	"github.com/khook/khook/words"
)

// inlineAccepted: an apply step's file of which some objects are of
// removed API versions keeps the others, written inline from the file, as
// kubectl applies them and refuses only those (trial 46s70j's D3: the
// whole file dropped, "the script's own apply fails on a current cluster
// too", though the script makes its Service); false when no file is so.
func (t *translator) inlineAccepted(m *importer.Model, probs []importer.Problem) bool {
	refused, whole := map[[2]int][]importer.Problem{}, map[int]bool{} // step, manifest → its problems
	for _, p := range probs {
		i := importer.StepOf(p.Path)
		if i < 0 || i >= len(m.Steps) {
			continue
		}
		var j int
		_, err := fmt.Sscanf(strings.TrimPrefix(p.Path, fmt.Sprintf("steps.%d.", i)), "apply.manifests.%d", &j)
		if err != nil || m.Steps[i].Out.Apply == nil || !strings.Contains(p.Message, " was removed in ") || p.Pos.Line == 0 {
			whole[i] = true
			continue
		}
		refused[[2]int{i, j}] = append(refused[[2]int{i, j}], p)
	}
	keys := slices.SortedFunc(maps.Keys(refused), cmpInts)
	inlined := false
	for _, k := range keys {
		if !whole[k[0]] && t.inlineFile(m.Steps[k[0]], k[1], refused[k]) {
			inlined = true
		}
	}
	return inlined
}

func cmpInts(a, b [2]int) int {
	if a[0] != b[0] {
		return a[0] - b[0]
	}
	return a[1] - b[1]
}

// inlineFile writes manifest j of st inline, without the documents the
// problems name, and says so at the step's line: false where its file
// holds nothing else, or a Secret, whose content the spec never copies.
func (t *translator) inlineFile(st *importer.Step, j int, probs []importer.Problem) bool {
	src := &st.Out.Apply.Manifests[j]
	b, err := readFile(probs[0].Pos.File)
	if src.File == "" || err != nil || sopsMeta.Match(b) {
		return false // a sops file's documents are read with its keys only
	}
	var kept, names []string
	for _, d := range yamlDocs(string(b)) {
		if slices.ContainsFunc(probs, func(p importer.Problem) bool { return p.Pos.Line >= d.start && p.Pos.Line < d.end }) {
			continue
		}
		var o struct {
			Kind     string
			Metadata struct{ Name string }
		}
		if yaml.Unmarshal([]byte(d.text), &o) != nil || o.Kind == "" {
			continue // a comment, an empty document
		}
		if secretKind.MatchString(d.text) {
			return false
		}
		kept, names = append(kept, trimBlankLines(d.text)+"\n"), append(names, strings.ToLower(o.Kind)+"/"+o.Metadata.Name)
	}
	if len(kept) == 0 {
		return false
	}
	var msgs []string
	for _, p := range probs {
		msgs = append(msgs, p.Message)
	}
	then := "the script goes on past that error"
	if t.ends[st.Out] {
		then = "under set -e the script stops there, so bash never runs what comes after it"
	}
	n := len(probs)
	t.m.NotCarried = append(t.m.NotCarried, importer.Note{Loc: st.From, What: src.File,
		Why: t.masked(src.File+" holds "+words.Plural(n, "an object", "objects")+" of an API version the cluster no longer serves ("+removedList(msgs)+"): kubectl refuses "+words.Plural(n, "it", "them")+" and applies the others ("+strings.Join(names, ", ")+"), and "+then+"; the step applies those, written inline from the file (update "+words.Plural(n, "that object", "those objects")+" to the API version named, and import again: the step then reads the file)") + st.Call})
	*src = importer.OutSource{Inline: strings.ReplaceAll(strings.Join(kept, "---\n"), "${", "$${")}
	return true
}

var sopsMeta = regexp.MustCompile(`(?m)^sops:`)

// doc is one YAML document of a file: its text, and its lines [start, end).
type doc struct {
	text       string
	start, end int
}

// yamlDocs splits a file at its --- lines.
func yamlDocs(text string) []doc {
	var docs []doc
	cur := doc{start: 1}
	lines := strings.SplitAfter(text, "\n")
	for n, line := range lines {
		if l := strings.TrimRight(line, " \t\r\n"); l == "---" || strings.HasPrefix(l, "--- ") {
			cur.end = n + 1
			docs = append(docs, cur)
			cur = doc{start: n + 2}
			continue
		}
		cur.text += line
	}
	cur.end = len(lines) + 1
	return append(docs, cur)
}

// trimBlankLines is text without the empty lines it starts and ends with.
func trimBlankLines(text string) string {
	lines := strings.Split(text, "\n")
	blank := func(l string) bool { return strings.TrimSpace(l) == "" }
	for len(lines) > 0 && blank(lines[0]) {
		lines = lines[1:]
	}
	for len(lines) > 0 && blank(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}
