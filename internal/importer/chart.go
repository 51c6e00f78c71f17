package importer

import (
	"os"
	"path/filepath"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// LocalChartVersion is why a version given with a local chart is not
// written, for both importers' note: Helm ignores --version for a chart
// on disk (action.ChartPathOptions.LocateChart returns the path as it
// is), and the spec refuses version: there. dir is the chart's directory;
// its Chart.yaml, when there, says which version Helm installs.
func LocalChartVersion(dir, version string) string {
	why := "Helm ignores --version for a chart on disk, so it is not written"
	var meta struct{ Version string }
	if b, err := os.ReadFile(filepath.Join(dir, "Chart.yaml")); err == nil && yaml.Unmarshal(b, &meta) == nil && meta.Version != "" {
		if strings.TrimPrefix(strings.TrimSpace(version), "v") == strings.TrimPrefix(meta.Version, "v") {
			why += "; its Chart.yaml has the same version"
		} else {
			why += "; its Chart.yaml says " + meta.Version + ", which is what Helm installs"
		}
	}
	return why
}
