package chartsource

import (
	"context"
	"fmt"
	"slices"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/apischema"
	"github.com/khook/khook/runner/kube/manifest"
	"github.com/khook/khook/sops"
	"github.com/khook/khook/spec"
)

// Rendered is the objects one template of a chart renders to.
type Rendered struct {
	Source  string // "web/templates/deployment.yaml"
	Objects []*unstructured.Unstructured
}

// RenderOffline renders a helm step's chart as `helm template` does, with
// no cluster and no network, for Kubernetes kubeVersion: the install's
// manifest and install hooks (chart CRDs included), through the step's
// post-renderers, each object remembered at its line in its template's
// rendered output (manifest.RememberRendered) as the live plan reports it.
// skipped says why a step cannot be rendered offline (a chart from a
// repository or registry, values from a URL, dependencies not built);
// err is a chart that does not load or render.
func RenderOffline(ctx context.Context, baseDir string, step *spec.Step, kubeVersion apischema.KubeVersion) (out []Rendered, skipped string, err error) {
	h := step.Helm
	if h.ChartKind() != spec.ChartLocal {
		return nil, "the chart is fetched from its repository or registry", nil
	}
	for _, v := range h.ValuesFrom {
		switch {
		case v.URL != "":
			return nil, "its values come from a URL", nil
		case v.SecretKeyRef != nil || v.ConfigMapKeyRef != nil:
			return nil, "its values come from the cluster", nil
		case v.File != "" && sops.File(baseDir, v.File):
			// Offline uses no keys, and renders with no redactor of the run.
			return nil, "its values file " + v.File + " is sops-encrypted (not decrypted offline)", nil
		}
	}
	e := New(nil, baseDir, nil, Options{})
	src, err := e.localChart(h, h.Verify != nil && h.Verify.Provenance != nil)
	if err != nil {
		return nil, "", err
	}
	if err := e.verify(ctx, h, src); err != nil {
		return nil, "", err
	}
	if len(missingDependencies(src.Chart)) > 0 {
		return nil, "its chart dependencies are not built (charts/)", nil
	}
	vals, err := e.Values().Load(ctx, h)
	if err != nil {
		return nil, "", err
	}
	name, ns := Target(step)
	in := action.NewInstall(action.NewConfiguration())
	in.DryRunStrategy = action.DryRunClient
	in.ReleaseName, in.Namespace = name, ns
	in.Replace = true
	in.IncludeCRDs = true
	in.SkipSchemaValidation = h.SkipSchemaValidation
	in.KubeVersion = &common.KubeVersion{Version: kubeVersion.String() + ".0", Major: fmt.Sprint(kubeVersion.Major), Minor: fmt.Sprint(kubeVersion.Minor)}
	in.PostRenderer, in.PostRenderStrategy, in.Labels = PostRendering(h, false)
	r, err := in.RunWithContext(ctx, src.Chart, vals)
	if err != nil {
		return nil, "", fmt.Errorf("release %s (%s): cannot render the chart: %w", name, src.What, OneLine(err))
	}
	res, err := AsRelease(r)
	if err != nil {
		return nil, "", err
	}
	add := func(source, text string) error {
		objs, err := DecodeManifest(text)
		if err != nil {
			return fmt.Errorf("release %s: %s does not render to Kubernetes objects: %w", name, source, err)
		}
		if h.OnlyCRDs() { // crds: only applies nothing else
			objs = slices.DeleteFunc(objs, func(o *unstructured.Unstructured) bool { return !kube.IsCRD(o) })
		}
		manifest.RememberRendered(objs, source, []byte(text))
		out = append(out, Rendered{Source: source, Objects: objs})
		return nil
	}
	for _, doc := range SplitBySource(res.Manifest) {
		if err := add(doc.Source, doc.Text); err != nil {
			return nil, "", err
		}
	}
	for _, hk := range res.Hooks {
		if RunsOnInstallOrUpgrade(hk) && !h.OnlyCRDs() {
			if err := add(hk.Path, "---\n# Source: "+hk.Path+"\n"+hk.Manifest+"\n"); err != nil {
				return nil, "", err
			}
		}
	}
	return out, "", nil
}
