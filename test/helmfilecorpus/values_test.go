package helmfilecorpus

import (
	"encoding/json"
	"fmt"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/strvals"
)

// merge is how helm merges `-f a -f b` (the files helmfile passes it):
// maps deeply, later wins.
func merge(a, b map[string]any) map[string]any { return loader.MergeMaps(a, b) }

// setPath applies one set/setString entry as helm's --set does.
func setPath(values map[string]any, name string, v any) {
	switch v := v.(type) {
	case string:
		_ = strvals.ParseIntoString(name+"="+v, values)
	default:
		_ = strvals.ParseInto(fmt.Sprintf("%s=%v", name, v), values)
	}
}

// jsonForm is values as Helm stores them (numbers float64), the form the
// runner's ValuesLoader returns.
func jsonForm(v map[string]any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		return map[string]any{"<not JSON>": err.Error()}
	}
	out := map[string]any{}
	_ = json.Unmarshal(b, &out)
	return out
}
