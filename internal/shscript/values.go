package shscript

import (
	"maps"
	"slices"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/khook/khook/internal/importer"
	"github.com/khook/khook/words"
)

// holeMark stands, in a values document read with holes, for an
// expansion only the run knows; no script writes it.
const holeMark = "KHOOKxHOLEx46s70d"

// partialValues carries a values here-document that khook knows but for
// some expansions (provider: ${GCP_PROJECT:+bigquery}): every key but those
// holding one, which are named at the line (trial 46s69c's D1: one such
// line left the whole document out, its 60 settings, secrets among them,
// the chart's defaults). False where the rest is not a YAML map either.
func (t *translator) partialValues(x *cmd, h *importer.OutHelm, what string) bool {
	if x.stdin == nil || x.stdin.doc == nil {
		return false
	}
	var whys []string
	t.holes = &whys
	text, ok, _ := t.heredoc(x.stdin.doc)
	t.holes = nil
	if !ok || len(whys) == 0 {
		return false
	}
	m, err := t.helmValues(x, what, text)
	if err != nil {
		return false
	}
	var dropped []string
	dropHoles(m, "", &dropped)
	if len(dropped) == 0 || hasHole(m) { // a hole in a key: which key is not known
		return false
	}
	sort.Strings(dropped)
	t.secretValues(x, m, "")
	t.quotedDefaults(x, m, "")
	h.Values = mergeMaps(h.Values, m)
	t.notCarried(x.stmt, what, words.Plural(len(dropped), "the value ", "the values ")+strings.Join(dropped, ", ")+words.Plural(len(dropped), " is", " are")+" left out (Helm takes the chart's default there; the document's other values are carried): "+whys[0])
	return true
}

// dropHoles deletes from m each value holding holeMark (a list whole),
// naming its path in dropped.
func dropHoles(m map[string]any, prefix string, dropped *[]string) {
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			dropHoles(sub, prefix+k+".", dropped)
			continue
		}
		if hasHole(v) {
			delete(m, k)
			*dropped = append(*dropped, prefix+k)
		}
	}
}

// hasHole: holeMark is somewhere in v, a key or a value.
func hasHole(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.Contains(x, holeMark)
	case []any:
		for _, e := range x {
			if hasHole(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range x {
			if strings.Contains(k, holeMark) || hasHole(e) {
				return true
			}
		}
	}
	return false
}

// quotedDefaults writes through toJson a value of m that is one variable
// whose default is no YAML scalar unquoted (GOTRUE_URI_ALLOW_LIST:
// ${ADDITIONAL_REDIRECT_URLS:-*}, an alias to YAML): khook substitutes it
// into the spec's text, which then is no YAML, and the step was refused
// (trial 46s69c's D1); helm refuses the script's document alike, said.
func (t *translator) quotedDefaults(x *cmd, m map[string]any, prefix string) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch v := m[k].(type) {
		case map[string]any:
			t.quotedDefaults(x, v, prefix+k+".")
		case string:
			if !wholeRef.MatchString(v) {
				continue
			}
			name := v[2 : len(v)-1]
			d := t.m.Var(name)
			if d == nil || d.Default == nil || d.Secret {
				continue
			}
			var out map[string]any
			if yaml.Unmarshal([]byte("k: "+*d.Default+"\n"), &out) == nil {
				continue
			}
			m[k] = "${" + name + " | toJson}"
			t.info(x.stmt, "values "+prefix+k, "the default of "+name+", "+*d.Default+", is no YAML value unquoted: where "+name+" is not set, helm refuses the script's document and the script stops here, while the step quotes it and installs")
		}
	}
}
