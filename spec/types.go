// Package spec holds the khook DSL (apiVersion khook.io/v1, kind Khook): its
// types, loading with source positions, variables, conditions, validation and
// JSON Schema. Everything here is decided offline: of client-go it imports
// only the JSONPath parser, to check wait conditions.
//
// May import: redact, celenv and words; of client-go only util/jsonpath;
// not sops (a var file is opened through LoadOptions.Decrypt); nothing of
// the runner, the model or the renderers.
package spec

import (
	"fmt"
	"time"
)

// APIVersion and Kind are the only accepted document envelope values.
const (
	APIVersion = "khook.io/v1"
	Kind       = "Khook"
)

// Step types, named after their action key.
const (
	TypeHelm    = "helm"
	TypeApply   = "apply"
	TypeDelete  = "delete"
	TypePatch   = "patch"
	TypeWait    = "wait"
	TypeRollout = "rollout"
	TypeJob     = "job"
)

// StepTypes lists the action keys in the order the DSL documents them.
var StepTypes = []string{TypeHelm, TypeApply, TypeDelete, TypePatch, TypeWait, TypeRollout, TypeJob}

// onError values.
const (
	OnErrorFail     = "fail"
	OnErrorContinue = "continue"
)

// Pos is a position in a spec file as the user wrote it (1-based).
type Pos struct {
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	Col  int    `json:"col,omitempty"`
}

func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// IsZero reports whether the position is unknown.
func (p Pos) IsZero() bool { return p.Line == 0 }

// Spec is a loaded, substituted and validated khook document.
type Spec struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Defaults   Defaults `json:"defaults,omitempty"`
	State      *State   `json:"state,omitempty"` // nil: no state record
	Steps      []*Step  `json:"steps"`
	// Ignore are the fields khook leaves to other owners in every helm and
	// apply step (ignore.go).
	Ignore []IgnoreRule `json:"ignore,omitempty"`
	// Prune is what khook may delete once it leaves the spec (prune.go);
	// nil prunes, keeping CRDs and Namespaces.
	Prune *Prune `json:"prune,omitempty"`
	// Policies are rules over every planned change (policy.go): the
	// spec's own, then those of the --policy files.
	Policies []*Policy `json:"policies,omitempty"`

	// PolicyFiles are the --policy files in force; Admission their
	// documents that are not khook rules (admission policies, bindings,
	// params).
	PolicyFiles []string       `json:"-"`
	Admission   []AdmissionDoc `json:"-"`

	// Files are the spec files in load order (base first, then overlays).
	Files []string `json:"-"`
	// BaseDir resolves relative file:, kustomize: and local chart paths: the
	// directory of the first spec file (the working directory for stdin).
	BaseDir string `json:"-"`
	// Vars is the merged variable map every ${} and when: saw.
	Vars map[string]string `json:"-"`
	// Declared are the inputs the vars: and rules: blocks declare (empty
	// when the spec declares none), each with the value it resolved to.
	Declared *Declarations `json:"-"`
	// Positions maps a field path ("steps.2.helm.chart", "metadata.name") to
	// where it was written, so errors and CI annotations point at the source.
	Positions map[string]Pos `json:"-"`
}

// PosOf returns the position of a field path, falling back to the nearest
// enclosing path that has one ("steps.2.helm.chart" → "steps.2.helm" → ...).
func (s *Spec) PosOf(path string) Pos {
	for {
		if p, ok := s.Positions[path]; ok {
			return p
		}
		i := lastDot(path)
		if i < 0 {
			if p, ok := s.Positions[""]; ok && path != "" {
				return p // the document root, for missing top-level fields
			}
			if len(s.Files) > 0 {
				return Pos{File: s.Files[0]}
			}
			return Pos{}
		}
		path = path[:i]
	}
}

func lastDot(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return i
		}
	}
	return -1
}

// Step returns the step with the given name, or nil.
func (s *Spec) Step(name string) *Step {
	for _, st := range s.Steps {
		if st.Name == name {
			return st
		}
	}
	return nil
}

// Metadata identifies the spec in logs and the state record.
type Metadata struct {
	Name string `json:"name"`
}

// Defaults are fallbacks for the per-step fields of the same name.
type Defaults struct {
	Timeout    Duration `json:"timeout,omitempty"`
	Retries    *int     `json:"retries,omitempty"`
	RetryDelay Duration `json:"retryDelay,omitempty"`
	OnError    string   `json:"onError,omitempty"`
	// OnImmutable is the helm and apply steps' onImmutable default.
	OnImmutable string `json:"onImmutable,omitempty"`
}

// onImmutable values: what a change the API server refuses as immutable
// does to the object.
const (
	OnImmutableFail     = "fail"     // the step fails, nothing of the object written (the default)
	OnImmutableRecreate = "recreate" // the object is deleted (foreground) and created again
)

// OnImmutableAnnotation set to recreate on one object (in a manifest or a
// chart's template) replaces that object when an immutable field of it
// changes; the only way to replace a Namespace, a CRD, a PVC or a PV.
const OnImmutableAnnotation = "khook.io/on-immutable"

// Built-in defaults of the DSL.
const (
	DefaultTimeout    = 5 * time.Minute
	DefaultRetryDelay = 10 * time.Second
	DefaultNamespace  = "default"
)

// State configures the in-cluster run-state record.
type State struct {
	Enabled   bool   `json:"enabled"`
	Namespace string `json:"namespace"` // defaulted to "default"
	Name      string `json:"name"`      // defaulted to khook-state-<metadata.name>
}

// Step is one node of the DAG. After loading, Timeout, Retries, RetryDelay
// and OnError hold the effective values (step, else defaults, else built-in).
type Step struct {
	Name  string   `json:"name"`
	Needs []string `json:"needs,omitempty"`
	// Labels are what --selector picks steps by (Kubernetes label syntax).
	Labels     map[string]string `json:"labels,omitempty"`
	When       string            `json:"when,omitempty"`
	Timeout    Duration          `json:"timeout,omitempty"`
	Retries    int               `json:"retries,omitempty"`
	RetryDelay Duration          `json:"retryDelay,omitempty"`
	OnError    string            `json:"onError,omitempty"`
	// OnImmutable (helm and apply steps): fail or recreate; after loading,
	// the effective value (step, else defaults, else fail).
	OnImmutable string `json:"onImmutable,omitempty"`

	Helm    *Helm    `json:"helm,omitempty"`
	Apply   *Apply   `json:"apply,omitempty"`
	Delete  *Delete  `json:"delete,omitempty"`
	Patch   *Patch   `json:"patch,omitempty"`
	Wait    *Wait    `json:"wait,omitempty"`
	Rollout *Rollout `json:"rollout,omitempty"`
	Job     *Job     `json:"job,omitempty"`
	// Other is a block of a type the DSL does not declare: a step type that
	// exists only in a test (spec_test's promise that a new type needs
	// nothing beyond its block, its executor and the dispatcher's wiring).
	Other Block `json:"-"`

	// Ignore are the fields this step (helm or apply) leaves to other owners,
	// after the spec's own rules (ignore.go).
	Ignore []IgnoreRule `json:"ignore,omitempty"`
	// Ignored are the rules in force for a helm or apply step: the spec's,
	// then the step's own (set at load).
	Ignored []IgnoreRule `json:"-"`
	// Drift is what drift found in this step does to a drift run: fail (the
	// default, "") or warn (reported, the run stays green).
	Drift string `json:"drift,omitempty"`
	// Prune overrides the spec's prune: for this helm or apply step.
	Prune *Prune `json:"prune,omitempty"`

	// Index is the step's position in the steps list; Path is its field path
	// ("steps.3") for Spec.PosOf.
	Index int    `json:"-"`
	Path  string `json:"-"`
	// Skip is why the step is left out before the run (SkipWhen: its when:
	// evaluated to false at load time; SkipNotSelected); "" when it runs.
	Skip Skip `json:"-"`
}

// Type returns the step's action key ("helm", "apply", ...), "" when it has
// no block.
func (s *Step) Type() string {
	if b := s.Block(); b != nil {
		return b.StepType()
	}
	return ""
}

// Source is one entry of a manifests or valuesFrom list: exactly one field set.
type Source struct {
	Inline    string `json:"inline,omitempty"`
	File      string `json:"file,omitempty"`
	URL       string `json:"url,omitempty"`
	Kustomize string `json:"kustomize,omitempty"`
	// SecretKeyRef and ConfigMapKeyRef (helm valuesFrom only) take values
	// from a key of a cluster Secret or ConfigMap, as Flux's valuesFrom.
	SecretKeyRef    *ValuesRef `json:"secretKeyRef,omitempty"`
	ConfigMapKeyRef *ValuesRef `json:"configMapKeyRef,omitempty"`
	// Path (helm valuesFrom file only) takes the values at this dotted path
	// inside the YAML file instead of the whole file: a Flux HelmRelease's
	// spec.values.
	Path string `json:"path,omitempty"`

	// At is where Inline's text is written in the spec (nil when its lines
	// are not the spec's one for one).
	At *TextAt `json:"-"`
}

// ValuesRef is a key of a Secret or ConfigMap holding a helm step's values:
// a YAML map of values merged at the root, or with TargetPath one value set
// at that path (Flux's meaning: helm --set syntax; quoted, a string).
type ValuesRef struct {
	Name       string `json:"name"`
	Namespace  string `json:"namespace,omitempty"` // default: the release's
	Key        string `json:"key,omitempty"`       // default: values.yaml
	Optional   bool   `json:"optional,omitempty"`  // a missing object or key is no values
	TargetPath string `json:"targetPath,omitempty"`
}

// DefaultValuesKey is a ValuesRef's key when it names none (Flux's valuesKey).
const DefaultValuesKey = "values.yaml"

// Auth is basic auth for a private chart repository or registry.
type Auth struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// Helm installs or upgrades a chart release.
type Helm struct {
	// Chart is the reference as written, except that Load moves an inline
	// version to Version (cilium:1.18.4, oci://.../app:1.2.3); an oci
	// @digest stays here. ParseChart classifies it.
	Chart           string         `json:"chart"`
	Repo            string         `json:"repo,omitempty"`
	Version         string         `json:"version,omitempty"` // inline name:version is normalised here
	Auth            *Auth          `json:"auth,omitempty"`
	Release         string         `json:"release,omitempty"`   // defaulted to the step name
	Namespace       string         `json:"namespace,omitempty"` // defaulted to "default"
	CreateNamespace bool           `json:"createNamespace,omitempty"`
	SkipIf          string         `json:"skipIf,omitempty"` // "installed"
	Atomic          bool           `json:"atomic,omitempty"`
	Wait            bool           `json:"wait,omitempty"`
	Values          map[string]any `json:"values,omitempty"`
	ValuesFrom      []Source       `json:"valuesFrom,omitempty"` // file or url only
	// TakeOwnership adopts objects the chart renders that exist without a
	// release (kubectl apply, scripts), as helm --take-ownership; never an
	// object another Helm release owns.
	TakeOwnership bool `json:"takeOwnership,omitempty"`
	// DependencyUpdate resolves a chart's dependencies without a Chart.lock
	// (helm dependency update); without it such a chart is refused.
	DependencyUpdate bool `json:"dependencyUpdate,omitempty"`
	// SkipSchemaValidation renders without checking the values against the
	// chart's values.schema.json (helm --skip-schema-validation): for a
	// schema that refers to a URL no longer served, or is wrong.
	SkipSchemaValidation bool `json:"skipSchemaValidation,omitempty"`
	// PostRenderers patch the rendered chart (Flux HelmRelease's shape).
	PostRenderers []PostRenderer `json:"postRenderers,omitempty"`
	// Test runs the release's test hooks (test: true or test: {...}).
	Test *HelmTest `json:"test,omitempty"`
	// CRDs is what the step does with the chart's crds/ directory:
	// CRDsUpgrade (the default, ""), CRDsCreate, CRDsSkip or CRDsOnly.
	CRDs string `json:"crds,omitempty"`
	// DeleteCRDs lets an upgrade delete a CRD the chart no longer renders
	// although custom resources of it exist (they go with it).
	DeleteCRDs bool `json:"deleteCRDs,omitempty"`
	// Verify is what the chart must be signed with (verify.go); the chart
	// is refused before it renders when its signature does not hold.
	Verify *Verify `json:"verify,omitempty"`
}

// What a helm step does with its chart's crds/ (Helm.CRDs).
const (
	CRDsUpgrade = "upgrade" // create and upgrade them, server-side (the default)
	CRDsCreate  = "create"  // create the missing ones only (Helm's behaviour)
	CRDsSkip    = "skip"    // leave them alone
	// CRDsOnly applies the chart's CRDs (crds/ and those its templates
	// render) and nothing else: no release, no hooks. It is helmfile's
	// `template --include-crds | kubectl apply` bootstrap of CRDs.
	CRDsOnly = "only"
)

// OnlyCRDs: the step applies its chart's CRDs and installs no release.
func (h *Helm) OnlyCRDs() bool { return h.CRDs == CRDsOnly }

// CRDMode is the step's crds: with its default.
func (h *Helm) CRDMode() string {
	if h.CRDs == "" {
		return CRDsUpgrade
	}
	return h.CRDs
}

// ChartKind tells where a chart comes from, implied by the chart: shape.
type ChartKind int

const (
	ChartRepo  ChartKind = iota // bare name in repo:
	ChartOCI                    // oci:// reference
	ChartLocal                  // ./, ../ or / path (directory or .tgz)
)

// Apply applies manifests.
type Apply struct {
	Manifests       []Source `json:"manifests"`
	Namespace       string   `json:"namespace,omitempty"`
	CreateNamespace bool     `json:"createNamespace,omitempty"`
	SkipIf          string   `json:"skipIf,omitempty"` // "exists"
	ServerSide      bool     `json:"serverSide,omitempty"`
	WaitFor         string   `json:"waitFor,omitempty"`
}

// Delete removes resources: exactly one of Manifests, Resource, Release.
type Delete struct {
	Manifests      []Source `json:"manifests,omitempty"`
	Resource       string   `json:"resource,omitempty"`
	Namespace      string   `json:"namespace,omitempty"`
	AllNamespaces  bool     `json:"allNamespaces,omitempty"`
	Selector       string   `json:"selector,omitempty"`
	FieldSelector  string   `json:"fieldSelector,omitempty"`
	Release        string   `json:"release,omitempty"`
	IgnoreNotFound *bool    `json:"ignoreNotFound,omitempty"` // nil means true
	// DeleteCRDs deletes a CRD that custom resources of it still use
	// (they go with it); without it such a CRD is kept.
	DeleteCRDs bool `json:"deleteCRDs,omitempty"`
	// DeleteData deletes what holds data (a PersistentVolumeClaim, a
	// PersistentVolume, a StatefulSet whose claim retention deletes its
	// claims); without it such an object is kept.
	DeleteData bool `json:"deleteData,omitempty"`
}

// IgnoresNotFound returns the effective ignoreNotFound (default true).
func (d *Delete) IgnoresNotFound() bool { return d.IgnoreNotFound == nil || *d.IgnoreNotFound }

// Patch types.
const (
	PatchStrategic = "strategic"
	PatchMerge     = "merge"
	PatchJSON      = "json"
)

// Patch modifies a resource in place.
type Patch struct {
	Target    string `json:"target"`
	Namespace string `json:"namespace,omitempty"`
	Type      string `json:"type,omitempty"` // defaulted to strategic
	Patch     any    `json:"patch"`          // map for strategic/merge, list for json
}

// Wait blocks until a condition holds.
type Wait struct {
	For           string `json:"for"`
	On            string `json:"on"`
	Namespace     string `json:"namespace,omitempty"`
	AllNamespaces bool   `json:"allNamespaces,omitempty"`
	Selector      string `json:"selector,omitempty"`
	FieldSelector string `json:"fieldSelector,omitempty"`
}

// Rollout restarts a workload or waits for its rollout: exactly one of the two.
type Rollout struct {
	Restart   string `json:"restart,omitempty"`
	Status    string `json:"status,omitempty"`
	Namespace string `json:"namespace"`
}

// Job runs a container to completion.
type Job struct {
	Image   string   `json:"image"`
	Command []string `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Env: NAME: value, or NAME: {valueFrom: {secretKeyRef: {name, key}}}
	// (job_env.go); EnvFrom and Volumes bring in whole Secrets and ConfigMaps.
	Env             map[string]EnvValue `json:"env,omitempty"`
	EnvFrom         []EnvFrom           `json:"envFrom,omitempty"`
	Volumes         []JobVolume         `json:"volumes,omitempty"`
	Namespace       string              `json:"namespace,omitempty"` // defaulted to "default"
	CreateNamespace bool                `json:"createNamespace,omitempty"`
	ServiceAccount  string              `json:"serviceAccount,omitempty"`
	SkipIf          string              `json:"skipIf,omitempty"` // "succeeded"
}
