package helmstep

import (
	"encoding/json"
	"reflect"

	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
)

// SameChart reports whether the chart about to be installed is the one the
// release was made from: same metadata (name, version, ...), lock, default
// values, schema, templates and files. Comparing content, not just the
// version, catches a local chart edited without a version bump. Subcharts
// are not stored in a release; they are covered by the lock and metadata.
func SameChart(stored, next *chartv2.Chart) bool {
	if stored == nil || next == nil || stored.Metadata == nil || next.Metadata == nil {
		return false
	}
	if stored.Metadata.Name != next.Metadata.Name || stored.Metadata.Version != next.Metadata.Version {
		return false
	}
	return sameJSON(ChartContent(stored), ChartContent(next))
}

// ChartContent is what SameChart compares of a chart, in a form that
// encodes to the same JSON for the same content: a
// saved plan digests it to tell the chart apply would install.
func ChartContent(ch *chartv2.Chart) any {
	return struct {
		Metadata  any
		Lock      any
		Values    map[string]any
		Schema    []byte
		Templates map[string][]byte
		Files     map[string][]byte
	}{ch.Metadata, ch.Lock, ch.Values, ch.Schema, fileData(ch.Templates), fileData(ch.Files)}
}

// AsStored returns the chart as a release installed from it with vals
// stores it. Install and upgrade run chartutil.ProcessDependencies first,
// which sets each dependency's enabled flag and import values and merges the
// subcharts' values and vals into the chart's values: a stored chart with
// dependencies never equals a freshly loaded one. So a chart with
// dependencies is processed the same way on a fresh copy from load (ch itself
// stays unprocessed for the install or upgrade); any other chart, or one that
// cannot be processed, is returned as is.
func AsStored(ch *chartv2.Chart, load func() (*chartv2.Chart, error), vals map[string]any) *chartv2.Chart {
	if ch == nil || ch.Metadata == nil || len(ch.Metadata.Dependencies) == 0 || load == nil {
		return ch
	}
	cp, err := load()
	if err != nil {
		return ch
	}
	if err := chartutil.ProcessDependencies(cp, vals); err != nil {
		return ch
	}
	return cp
}

// SameValues compares user-supplied values in their JSON form (how Helm
// stores them); nil and empty are the same.
func SameValues(stored, next map[string]any) bool {
	if len(stored) == 0 && len(next) == 0 {
		return true
	}
	return sameJSON(stored, next)
}

func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return false
	}
	var va, vb any
	if json.Unmarshal(ja, &va) != nil || json.Unmarshal(jb, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// fileData is files by name, without modification times (a stored chart
// and the same chart loaded from disk differ in those only).
func fileData(fs []*common.File) map[string][]byte {
	out := make(map[string][]byte, len(fs))
	for _, f := range fs {
		out[f.Name] = f.Data
	}
	return out
}
