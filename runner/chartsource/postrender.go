package chartsource

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/postrenderer"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/spec"
)

// postRenderLabel is the release label holding a digest of the step's
// post-renderers: the rendered objects depend on them as on the chart, so a
// release whose label differs has not converged.
const postRenderLabel = "khook.io/post-renderers"

// PostRendering is what install and upgrade set for h's post-renderers:
// the renderer (nil for none) and the release labels recording them. Hooks
// and the other templates go through kustomize separately, so a hook that
// repeats an object does not collide with it.
func PostRendering(h *spec.Helm, upgrade bool) (postrenderer.PostRenderer, action.PostRenderStrategy, map[string]string) {
	d := postRenderDigest(h)
	if d == "" {
		if upgrade {
			return nil, "", map[string]string{postRenderLabel: "null"} // Helm's way to drop a label
		}
		return nil, "", nil
	}
	return kustomizeRenderer{steps: h.PostRenderers}, action.PostRenderStrategySeparate, map[string]string{postRenderLabel: d}
}

// postRenderDigest identifies h's post-renderers ("" for none), short
// enough for a label value.
func postRenderDigest(h *spec.Helm) string {
	if len(h.PostRenderers) == 0 {
		return ""
	}
	b, err := json.Marshal(h.PostRenderers)
	if err != nil {
		return "unencodable"
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// SamePostRender: the release was made with the step's post-renderers.
func SamePostRender(labels map[string]string, h *spec.Helm) bool {
	return labels[postRenderLabel] == postRenderDigest(h)
}

// kustomizeRenderer runs a step's kustomize post-renderers in order, each
// in-process over an in-memory file system (no plugins, no files read).
type kustomizeRenderer struct {
	steps []spec.PostRenderer
}

func (k kustomizeRenderer) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	if strings.TrimSpace(strings.ReplaceAll(in.String(), "---", "")) == "" {
		return in, nil // nothing rendered (a chart without hooks)
	}
	out := in.Bytes()
	for i, pr := range k.steps {
		if pr.Kustomize == nil {
			continue
		}
		b, err := runKustomize(out, pr.Kustomize)
		if err != nil {
			return nil, fmt.Errorf("postRenderers[%d] (kustomize): %w", i, err)
		}
		out = b
	}
	return bytes.NewBuffer(out), nil
}

func runKustomize(manifests []byte, k *spec.KustomizePostRenderer) ([]byte, error) {
	kz := types.Kustomization{
		TypeMeta:  types.TypeMeta{APIVersion: types.KustomizationVersion, Kind: types.KustomizationKind},
		Resources: []string{"rendered.yaml"},
	}
	for _, p := range k.Patches {
		tp := types.Patch{Patch: p.Patch}
		if t := p.Target; t != nil {
			tp.Target = &types.Selector{
				ResId:              resid.NewResIdWithNamespace(resid.Gvk{Group: t.Group, Version: t.Version, Kind: t.Kind}, t.Name, t.Namespace),
				LabelSelector:      t.LabelSelector,
				AnnotationSelector: t.AnnotationSelector,
			}
		}
		kz.Patches = append(kz.Patches, tp)
	}
	for _, im := range k.Images {
		kz.Images = append(kz.Images, types.Image{Name: im.Name, NewName: im.NewName, NewTag: im.NewTag, Digest: im.Digest})
	}
	kb, err := yaml.Marshal(kz)
	if err != nil {
		return nil, err
	}
	fs := filesys.MakeFsInMemory()
	if err := fs.WriteFile("/render/kustomization.yaml", kb); err != nil {
		return nil, err
	}
	if err := fs.WriteFile("/render/rendered.yaml", manifests); err != nil {
		return nil, err
	}
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsRootOnly
	opts.PluginConfig = types.DisabledPluginConfig()
	rm, err := krusty.MakeKustomizer(opts).Run(fs, "/render")
	if err != nil {
		return nil, err
	}
	return rm.AsYaml()
}
