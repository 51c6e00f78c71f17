package helmfilecorpus

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/strvals"
)

// merge is how helm merges `-f a -f b` (the files helmfile passes it):
// maps deeply, later wins.
func merge(a, b map[string]any) map[string]any { return loader.MergeMaps(a, b) }

// setValues applies a release's set and setString entries as helmfile
// v1.8.0 passes them to helm (pkg/state setFlags, setStringFlags: a
// non-empty value, else for set a file, else a non-empty values list;
// names and values escaped) and helm merges them (pkg/cli/values: every
// --set, then every --set-string, then every --set-file). Files are
// relative to base.
func setValues(values map[string]any, set, setString []buildSetValue, base string) map[string]any {
	var files []buildSetValue
	for i, list := range [][]buildSetValue{set, setString} {
		parse := strvals.ParseInto
		if i == 1 {
			parse = strvals.ParseIntoString
		}
		for _, s := range list {
			switch {
			case s.Value != "":
				_ = parse(escape(s.Name)+"="+escape(s.Value), values)
			case s.File != "" && i == 0:
				files = append(files, s)
			case len(s.Vals) > 0:
				items := make([]string, len(s.Vals))
				for j, v := range s.Vals {
					items[j] = escape(v)
				}
				_ = parse(escape(s.Name)+"={"+strings.Join(items, ",")+"}", values)
			}
		}
	}
	for _, s := range files {
		read := func([]rune) (any, error) {
			data, err := os.ReadFile(filepath.Join(base, s.File))
			return string(data), err
		}
		_ = strvals.ParseIntoFile(escape(s.Name)+"="+escape(s.File), values, read)
	}
	return values
}

// escape is helmfile's escaping of a --set name or value (pkg/state).
func escape(v string) string {
	return strings.NewReplacer("{", `\{`, "}", `\}`, ",", `\,`).Replace(v)
}

// jsonForm is values as Helm stores them (numbers float64), the form the
// runner's ValuesLoader returns.
func jsonForm(v map[string]any) map[string]any {
	b, err := json.Marshal(stringKeys(v))
	if err != nil {
		return map[string]any{"<not JSON>": err.Error()}
	}
	out := map[string]any{}
	_ = json.Unmarshal(b, &out)
	return out
}

// stringKeys gives a map yaml.v3 read with keys that are not strings
// (tcp: {5432: …}, as helmfile build prints a values file) string keys,
// as helm reads them: sigs.k8s.io/yaml turns YAML into JSON, whose keys
// are strings (trial 46zq: "json: unsupported type" for the helmfile side).
func stringKeys(v any) any {
	switch t := v.(type) {
	case map[any]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[fmt.Sprint(k)] = stringKeys(x)
		}
		return out
	case map[string]any:
		for k, x := range t {
			t[k] = stringKeys(x)
		}
	case []any:
		for i, x := range t {
			t[i] = stringKeys(x)
		}
	}
	return v
}
