package spec

import (
	"fmt"
	"strings"
)

// PostRenderer is one post-renderer of a helm step, in Flux HelmRelease's
// shape: today only kustomize.
type PostRenderer struct {
	Kustomize *KustomizePostRenderer `json:"kustomize,omitempty"`
}

// KustomizePostRenderer patches the rendered manifests with kustomize.
type KustomizePostRenderer struct {
	Patches []KustomizePatch `json:"patches,omitempty"`
	Images  []KustomizeImage `json:"images,omitempty"`
}

// KustomizePatch is a strategic merge patch or a JSON 6902 patch (a YAML
// list of operations), applied to the objects Target selects (to the
// object the patch names when Target is empty: strategic merge only).
type KustomizePatch struct {
	Patch  string           `json:"patch"`
	Target *KustomizeTarget `json:"target,omitempty"`
}

// KustomizeTarget selects objects as kustomize's patch targets do.
type KustomizeTarget struct {
	Group              string `json:"group,omitempty"`
	Version            string `json:"version,omitempty"`
	Kind               string `json:"kind,omitempty"`
	Name               string `json:"name,omitempty"`
	Namespace          string `json:"namespace,omitempty"`
	LabelSelector      string `json:"labelSelector,omitempty"`
	AnnotationSelector string `json:"annotationSelector,omitempty"`
}

// KustomizeImage overrides a container image's name, tag or digest.
type KustomizeImage struct {
	Name    string `json:"name"`
	NewName string `json:"newName,omitempty"`
	NewTag  string `json:"newTag,omitempty"`
	Digest  string `json:"digest,omitempty"`
}

// HelmTest runs the release's test hooks after a successful install or
// upgrade. test: true is the zero value.
type HelmTest struct {
	// Timeout bounds the tests (default: the rest of the step's time).
	Timeout Duration `json:"timeout,omitempty"`
	// Filter names the tests to run; a name starting with ! is skipped.
	Filter []string `json:"filter,omitempty"`
	// Always runs the tests on a converged re-run too.
	Always bool `json:"always,omitempty"`
}

// postRenderers checks what kustomize would otherwise reject mid-render.
func (v *validator) postRenderers(p string, prs []PostRenderer) {
	for i, pr := range prs {
		pp := fmt.Sprintf("%s.%d", p, i)
		if pr.Kustomize == nil {
			v.errorf(pp+".kustomize", "write kustomize: with patches: or images:", "is required in a post-renderer")
			continue
		}
		k := pr.Kustomize
		if len(k.Patches) == 0 && len(k.Images) == 0 {
			v.errorf(pp+".kustomize", "", "has neither patches: nor images: (nothing to do)")
		}
		for j, pt := range k.Patches {
			if strings.TrimSpace(pt.Patch) == "" {
				v.errorf(fmt.Sprintf("%s.kustomize.patches.%d.patch", pp, j), "write a strategic merge patch or a JSON 6902 list of operations", "is required")
			}
		}
		for j, im := range k.Images {
			ip := fmt.Sprintf("%s.kustomize.images.%d", pp, j)
			if im.Name == "" {
				v.errorf(ip+".name", "the image name as the chart writes it, e.g. nginx", "is required")
			}
			if im.NewName == "" && im.NewTag == "" && im.Digest == "" {
				v.errorf(ip, "", "changes nothing: set newName, newTag or digest")
			}
		}
	}
}

func helmPostRenderer() obj {
	target := object(obj{
		"group": obj{"type": "string"}, "version": obj{"type": "string"}, "kind": obj{"type": "string"},
		"name": obj{"type": "string"}, "namespace": obj{"type": "string"},
		"labelSelector": obj{"type": "string"}, "annotationSelector": obj{"type": "string"},
	})
	patch := object(obj{"patch": obj{"type": "string", "description": "A strategic merge patch or a JSON 6902 list of operations"}, "target": target}, "patch")
	image := object(obj{"name": obj{"type": "string"}, "newName": obj{"type": "string"}, "newTag": obj{"type": "string"}, "digest": obj{"type": "string"}}, "name")
	return object(obj{"kustomize": object(obj{
		"patches": obj{"type": "array", "items": patch},
		"images":  obj{"type": "array", "items": image},
	})}, "kustomize")
}

func helmTestSchema() obj {
	return desc(obj{"anyOf": []any{defRef("bool"), object(obj{
		"timeout": defRef("duration"),
		"filter":  obj{"type": "array", "items": obj{"type": "string"}, "description": "Tests to run by name; !name skips one"},
		"always":  defRef("bool"),
	})}}, "Run the release's test hooks after a successful install or upgrade: true, or {timeout, filter, always}")
}

// withHelmExtras adds the helm step's dependency, post-renderer and test
// properties to its schema.
func withHelmExtras(props obj) obj {
	props["dependencyUpdate"] = desc(defRef("bool"), "Resolve the chart's dependencies without a Chart.lock (helm dependency update)")
	props["postRenderers"] = obj{"type": "array", "items": helmPostRenderer(), "description": "Patch the rendered chart with kustomize (Flux HelmRelease's shape)"}
	props["test"] = helmTestSchema()
	return props
}
