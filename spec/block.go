package spec

import (
	"fmt"
	"strings"
)

// Block is a step's one action block (helm:, apply:, ...): every per-type
// fact code outside spec needs, so that the state record, digests, offline
// checks, producers, pruning, destroy and khook files ask the block and never
// switch on the step's type. A new step type implements it; Step.Block is the
// one place that picks the block of a step.
type Block interface {
	// StepType is the step type's key ("helm", "apply", ...).
	StepType() string
	// Inputs are the local files and directories the block reads, in spec
	// order: the one list of a step's file inputs (state hash, khook files,
	// sops detection).
	Inputs() []Input
	// Manifests are the manifest sources the block reads (apply's to apply,
	// delete's to delete); the zero value when it reads none.
	ManifestSources() Manifests
	// CreatesNamespace is the namespace the block creates before it runs
	// (createNamespace: true), "" when it creates none.
	CreatesNamespace() string
	// HelmRelease is the Helm release the block installs (ok false when it
	// installs none): what the state record says the step owns, whatever
	// its objects.
	HelmRelease() (name, namespace string, ok bool)
	// Undo is the delete that reverses the block for destroy, nil when
	// destroy leaves steps of this type alone. step is the step's name.
	Undo(step string) *Delete
}

// Manifests are the manifest sources one block reads.
type Manifests struct {
	Sources []Source
	// Field is the list's field path under the step ("apply.manifests").
	Field string
	// Applied: the block puts these objects in the cluster (apply); false
	// for a block that only names them (delete).
	Applied bool
	// Namespace is where an object without one goes (the block's namespace,
	// defaulted).
	Namespace string
}

// Input is one local file or directory a block reads, as written.
type Input struct {
	What string // InputValues, InputManifest, InputKustomize, InputChart
	Path string // relative to the spec's directory unless absolute
	// Field is its field path under the step ("helm.valuesFrom.0").
	Field string
}

// Kinds of Input.What. They are part of the state record's step hash:
// renaming one reads as "changed" for every step that has such an input.
const (
	InputValues    = "values file"
	InputManifest  = "manifest file"
	InputKustomize = "kustomize directory" // a kustomization: the files its render reads
	InputChart     = "local chart"         // a chart directory or a packaged .tgz
	InputVerify    = "verification file"   // a keyring, key or trusted root, or a local .tgz's .prov
)

// Block is the step's action block, nil when it has none (a step Load
// refused). Other is used when no DSL field is set.
func (s *Step) Block() Block {
	switch {
	case s.Helm != nil:
		return s.Helm
	case s.Apply != nil:
		return s.Apply
	case s.Delete != nil:
		return s.Delete
	case s.Patch != nil:
		return s.Patch
	case s.Wait != nil:
		return s.Wait
	case s.Rollout != nil:
		return s.Rollout
	case s.Job != nil:
		return s.Job
	}
	return s.Other
}

// Inputs are the local files and directories the step's block reads (nil
// for a step without one).
func (s *Step) Inputs() []Input {
	if b := s.Block(); b != nil {
		return b.Inputs()
	}
	return nil
}

// Manifests are the manifest sources the step's block reads.
func (s *Step) Manifests() Manifests {
	if b := s.Block(); b != nil {
		return b.ManifestSources()
	}
	return Manifests{}
}

// sourceInputs are the local files and kustomizations of a manifests list.
func sourceInputs(list []Source, field string) []Input {
	var out []Input
	for i, src := range list {
		at := fmt.Sprintf("%s.%d", field, i)
		if src.File != "" {
			out = append(out, Input{InputManifest, src.File, at})
		}
		if src.Kustomize != "" {
			out = append(out, Input{InputKustomize, src.Kustomize, at})
		}
	}
	return out
}

// IsLocalChart is the DSL's rule for a local chart: ./, ../ or /.
func IsLocalChart(ref string) bool {
	return strings.HasPrefix(ref, "./") || strings.HasPrefix(ref, "../") || strings.HasPrefix(ref, "/")
}

func (h *Helm) StepType() string    { return TypeHelm }
func (a *Apply) StepType() string   { return TypeApply }
func (d *Delete) StepType() string  { return TypeDelete }
func (p *Patch) StepType() string   { return TypePatch }
func (w *Wait) StepType() string    { return TypeWait }
func (r *Rollout) StepType() string { return TypeRollout }
func (j *Job) StepType() string     { return TypeJob }

func (h *Helm) Inputs() []Input {
	var out []Input
	if IsLocalChart(h.Chart) {
		out = append(out, Input{InputChart, h.Chart, "helm.chart"})
	}
	for i, src := range h.ValuesFrom {
		if src.File != "" {
			out = append(out, Input{InputValues, src.File, fmt.Sprintf("helm.valuesFrom.%d", i)})
		}
	}
	return append(out, h.verifyInputs()...)
}

// verifyInputs are the local files verify: reads: a plan that checks a
// signature reads them, so a change to one is a change to the plan.
func (h *Helm) verifyInputs() []Input {
	v := h.Verify
	if v == nil {
		return nil
	}
	var out []Input
	if p := v.Provenance; p != nil {
		out = append(out, Input{InputVerify, p.Keyring, "helm.verify.provenance.keyring"})
		if IsLocalChart(h.Chart) && strings.HasSuffix(h.Chart, ".tgz") {
			out = append(out, Input{InputVerify, h.Chart + ".prov", "helm.chart"})
		}
	}
	if c := v.Cosign; c != nil {
		for i, k := range c.AllKeys() {
			if !IsInlinePEM(k) && !strings.Contains(k, "${") {
				out = append(out, Input{InputVerify, k, fmt.Sprintf("helm.verify.cosign.keys.%d", i)})
			}
		}
		if c.TrustedRoot != "" {
			out = append(out, Input{InputVerify, c.TrustedRoot, "helm.verify.cosign.trustedRoot"})
		}
	}
	return out
}
func (a *Apply) Inputs() []Input  { return sourceInputs(a.Manifests, "apply.manifests") }
func (d *Delete) Inputs() []Input { return sourceInputs(d.Manifests, "delete.manifests") }
func (*Patch) Inputs() []Input    { return nil }
func (*Wait) Inputs() []Input     { return nil }
func (*Rollout) Inputs() []Input  { return nil }
func (*Job) Inputs() []Input      { return nil }

func (*Helm) ManifestSources() Manifests { return Manifests{} }
func (a *Apply) ManifestSources() Manifests {
	return Manifests{Sources: a.Manifests, Field: "apply.manifests", Applied: true, Namespace: NamespaceOrDefault(a.Namespace)}
}
func (d *Delete) ManifestSources() Manifests {
	return Manifests{Sources: d.Manifests, Field: "delete.manifests", Namespace: NamespaceOrDefault(d.Namespace)}
}
func (*Patch) ManifestSources() Manifests   { return Manifests{} }
func (*Wait) ManifestSources() Manifests    { return Manifests{} }
func (*Rollout) ManifestSources() Manifests { return Manifests{} }
func (*Job) ManifestSources() Manifests     { return Manifests{} }

func (h *Helm) CreatesNamespace() string  { return createdNamespace(h.CreateNamespace, h.Namespace) }
func (a *Apply) CreatesNamespace() string { return createdNamespace(a.CreateNamespace, a.Namespace) }
func (*Delete) CreatesNamespace() string  { return "" }
func (*Patch) CreatesNamespace() string   { return "" }
func (*Wait) CreatesNamespace() string    { return "" }
func (*Rollout) CreatesNamespace() string { return "" }
func (j *Job) CreatesNamespace() string   { return createdNamespace(j.CreateNamespace, j.Namespace) }
func createdNamespace(create bool, ns string) string {
	if !create {
		return ""
	}
	return NamespaceOrDefault(ns)
}

func (h *Helm) HelmRelease() (string, string, bool)  { return h.Release, h.Namespace, !h.OnlyCRDs() }
func (*Apply) HelmRelease() (string, string, bool)   { return "", "", false }
func (*Delete) HelmRelease() (string, string, bool)  { return "", "", false }
func (*Patch) HelmRelease() (string, string, bool)   { return "", "", false }
func (*Wait) HelmRelease() (string, string, bool)    { return "", "", false }
func (*Rollout) HelmRelease() (string, string, bool) { return "", "", false }
func (*Job) HelmRelease() (string, string, bool)     { return "", "", false }

// Undo of a release is its uninstall; of manifests, their delete (the
// delete executor walks them last first: CRs before their CRDs, objects
// before the namespaces the manifests define); of a job, the Job.
func (h *Helm) Undo(step string) *Delete {
	if h.OnlyCRDs() {
		return nil // no release; its CRDs stay, as Helm's uninstall leaves crds/
	}
	release := h.Release
	if release == "" {
		release = step
	}
	return &Delete{Release: release, Namespace: NamespaceOrDefault(h.Namespace)}
}
func (a *Apply) Undo(string) *Delete {
	return &Delete{Manifests: a.Manifests, Namespace: a.Namespace}
}
func (j *Job) Undo(step string) *Delete {
	return &Delete{Resource: "jobs.batch/" + step, Namespace: NamespaceOrDefault(j.Namespace)}
}
func (*Delete) Undo(string) *Delete  { return nil }
func (*Patch) Undo(string) *Delete   { return nil }
func (*Wait) Undo(string) *Delete    { return nil }
func (*Rollout) Undo(string) *Delete { return nil }
