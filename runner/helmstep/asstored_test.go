package helmstep

import (
	"encoding/json"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
)

// parentChart is a chart with a vendored dependency behind a condition,
// as prometheus-operator-crds is (its CRDs live in charts/crds).
func parentChart() *chartv2.Chart {
	child := &chartv2.Chart{
		Metadata:  &chartv2.Metadata{APIVersion: "v2", Name: "crds", Version: "0.0.0"},
		Values:    map[string]any{"size": "small"},
		Templates: []*common.File{{Name: "templates/crd.yaml", Data: []byte("kind: CustomResourceDefinition")}},
	}
	parent := &chartv2.Chart{
		Metadata: &chartv2.Metadata{APIVersion: "v2", Name: "parent", Version: "1.0.0",
			Dependencies: []*chartv2.Dependency{{Name: "crds", Version: "0.0.0", Condition: "crds.enabled"}}},
		Values:    map[string]any{"crds": map[string]any{"enabled": true}},
		Templates: []*common.File{{Name: "templates/cm.yaml", Data: []byte("kind: ConfigMap")}},
	}
	parent.AddDependency(child)
	return parent
}

// A release stores its chart after Helm processed the dependencies (enabled
// flags, merged values): comparing it with a freshly loaded chart must
// process that one the same way, or every re-run of a chart with
// dependencies looks like a chart change and upgrades.
func TestAsStoredMatchesTheReleaseChartOfAChartWithDependencies(t *testing.T) {
	vals := map[string]any{"crds": map[string]any{"size": "large"}}
	stored := parentChart()
	if err := chartutil.ProcessDependencies(stored, vals); err != nil {
		t.Fatal(err)
	}
	// Round-trip as the release storage does.
	data, err := json.Marshal(stored)
	if err != nil {
		t.Fatal(err)
	}
	stored = &chartv2.Chart{}
	if err := json.Unmarshal(data, stored); err != nil {
		t.Fatal(err)
	}

	fresh := parentChart()
	if SameChart(stored, fresh) {
		t.Fatal("test premise: a processed chart differs from a fresh one")
	}
	if !SameChart(stored, AsStored(fresh, func() (*chartv2.Chart, error) { return parentChart(), nil }, vals)) {
		t.Error("AsStored(fresh chart) differs from the chart the release stored")
	}
	if fresh.Metadata.Dependencies[0].Enabled {
		t.Error("AsStored processed the chart it was given; it must process a copy")
	}
	other := map[string]any{"crds": map[string]any{"enabled": false}}
	if SameChart(stored, AsStored(fresh, func() (*chartv2.Chart, error) { return parentChart(), nil }, other)) {
		t.Error("a chart processed with other values still compares the same")
	}
}
