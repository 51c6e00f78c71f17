package scriptapply

import (
	"slices"
	"testing"
)

// A field that differs is named with both values, an object on one side
// only is named as such: the comparison cannot pass by saying nothing.
func TestDifferencesNameEachObject(t *testing.T) {
	cm := func(tier string) map[string]any {
		return map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": "s", "namespace": "p"}, "data": map[string]any{"tier": tier}}
	}
	script := map[key]map[string]any{{"ConfigMap", "p", "s"}: cm("gold"), {"Namespace", "", "p"}: {"kind": "Namespace"}}
	khook := map[key]map[string]any{{"ConfigMap", "p", "s"}: cm("silver"), {"ServiceAccount", "p", "d"}: {"kind": "ServiceAccount"}}
	want := []string{
		"ConfigMap p/s differs at data.tier (script gold, khook silver).",
		"Namespace p was made by the script, not by khook's apply.",
		"ServiceAccount p/d was made by khook's apply, not by the script.",
	}
	if got := differences(script, khook); !slices.Equal(got, want) {
		t.Errorf("differences:\n%q\nwant:\n%q", got, want)
	}
}
