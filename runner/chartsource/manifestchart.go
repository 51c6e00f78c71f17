package chartsource

import (
	"cmp"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/khook/khook/spec"
)

// A local chart: that is a folder of plain manifests, with no Chart.yaml,
// is made a chart as helmfile makes it (chartify): every *.yaml under the
// folder a template, in the order of a walk, named <i>-<file>, the chart
// named after the release, version 1.0.0. So a release helmfile installed
// from such a folder moves in as the same release, and a team's manifests
// folder can be a release of its own. A kustomization is not a chart of
// manifests: an apply step with kustomize: applies it.

// manifestChartVersion is chartify's version for a chart it makes.
const manifestChartVersion = "1.0.0"

// LoadLocal loads a step's local chart (chart: ./path) as a run loads it,
// its dependencies not built: a check that the path is a chart khook can
// install, with no cluster and no network.
func LoadLocal(baseDir string, h *spec.Helm) (*chartv2.Chart, error) {
	src, err := New(nil, baseDir, nil, Options{}).localChart(h, false)
	if err != nil {
		return nil, err
	}
	return src.Chart, nil
}

func manifestChart(chart, dir, release string) (*Source, error) {
	if exists(filepath.Join(dir, "kustomization.yaml")) {
		return nil, fmt.Errorf("local chart %s is a kustomization, not a chart: apply it with an apply step (manifests: [{kustomize: %s}])", chart, chart)
	}
	name := cmp.Or(release, filepath.Base(dir))
	load := func() (*chartv2.Chart, error) {
		ch := &chartv2.Chart{Metadata: &chartv2.Metadata{APIVersion: chartv2.APIVersionV2, Name: name,
			Version: manifestChartVersion, AppVersion: manifestChartVersion}}
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, "yaml") {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			ch.Templates = append(ch.Templates, &common.File{Name: fmt.Sprintf("templates/%d-%s", len(ch.Templates), filepath.Base(p)), Data: data})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("cannot read local chart %s: %w", chart, unwrapPathError(err))
		}
		if len(ch.Templates) == 0 {
			return nil, fmt.Errorf("local chart %s has neither a Chart.yaml nor manifests (*.yaml) to make one of", chart)
		}
		return ch, nil
	}
	ch, err := load()
	if err != nil {
		return nil, err
	}
	return &Source{Chart: ch, Load: load,
		What: fmt.Sprintf("chart %s %s made of the manifests in %s", name, manifestChartVersion, chart)}, nil
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }
