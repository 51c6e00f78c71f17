package importer

// The spec written, in the DSL's key order and with its field names (what
// spec.Load accepts): a superset of what internal/helmfile writes today.

// OutStep is one step.
type OutStep struct {
	Name        string            `yaml:"name"`
	Needs       []string          `yaml:"needs,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	When        string            `yaml:"when,omitempty"`
	Timeout     string            `yaml:"timeout,omitempty"`
	OnImmutable string            `yaml:"onImmutable,omitempty"`
	Helm        *OutHelm          `yaml:"helm,omitempty"`
	Apply       *OutApply         `yaml:"apply,omitempty"`
	Delete      *OutDelete        `yaml:"delete,omitempty"`
	Patch       *OutPatch         `yaml:"patch,omitempty"`
	Wait        *OutWait          `yaml:"wait,omitempty"`
	Rollout     *OutRollout       `yaml:"rollout,omitempty"`
	Job         *OutJob           `yaml:"job,omitempty"`
}

// OutJob is a job step: a container run to completion.
type OutJob struct {
	Image     string            `yaml:"image"`
	Command   []string          `yaml:"command,omitempty"`
	Args      []string          `yaml:"args,omitempty"`
	Env       map[string]string `yaml:"env,omitempty"`
	Namespace string            `yaml:"namespace,omitempty"`
}

// OutHelm is a helm step.
type OutHelm struct {
	Chart                string            `yaml:"chart"`
	Repo                 string            `yaml:"repo,omitempty"`
	Version              string            `yaml:"version,omitempty"`
	Auth                 *OutAuth          `yaml:"auth,omitempty"`
	Verify               *OutVerify        `yaml:"verify,omitempty"`
	Release              string            `yaml:"release,omitempty"`
	Namespace            string            `yaml:"namespace,omitempty"`
	CreateNamespace      bool              `yaml:"createNamespace,omitempty"`
	Atomic               bool              `yaml:"atomic,omitempty"`
	Wait                 bool              `yaml:"wait,omitempty"`
	TakeOwnership        bool              `yaml:"takeOwnership,omitempty"`
	SkipSchemaValidation bool              `yaml:"skipSchemaValidation,omitempty"`
	CRDs                 string            `yaml:"crds,omitempty"`
	DependencyUpdate     bool              `yaml:"dependencyUpdate,omitempty"`
	ValuesFrom           []OutSource       `yaml:"valuesFrom,omitempty"`
	Values               map[string]any    `yaml:"values,omitempty"`
	PostRenderers        []OutPostRenderer `yaml:"postRenderers,omitempty"`
}

// OutAuth is a private repository's or registry's credentials: each a
// ${VARIABLE} (the password always a secret one), never a secret's value.
type OutAuth struct {
	Username string `yaml:"username"`
	Password string `yaml:"password"`
}

// OutVerify is the provenance (helm --verify) the chart must carry.
type OutVerify struct {
	Provenance OutProvenance `yaml:"provenance"`
}

// OutProvenance names the keyring a chart's .prov verifies with.
type OutProvenance struct {
	Keyring string `yaml:"keyring"`
}

// OutPostRenderer is one helm post-renderer: kustomize patches.
type OutPostRenderer struct {
	Kustomize *OutKustomize `yaml:"kustomize"`
}

// OutKustomize is a kustomize post-renderer's patches.
type OutKustomize struct {
	Patches []OutKPatch `yaml:"patches"`
}

// OutKPatch is one kustomize patch and its target.
type OutKPatch struct {
	Patch  string            `yaml:"patch"`
	Target map[string]string `yaml:"target,omitempty"`
}

// OutSource is one manifests or valuesFrom entry.
type OutSource struct {
	Inline    string `yaml:"inline,omitempty"`
	File      string `yaml:"file,omitempty"`
	URL       string `yaml:"url,omitempty"`
	Kustomize string `yaml:"kustomize,omitempty"`
	Path      string `yaml:"path,omitempty"`
	// SecretKeyRef (helm valuesFrom only): one value read from a key of
	// a cluster Secret when the step runs, set at TargetPath
	SecretKeyRef *OutKeyRef `yaml:"secretKeyRef,omitempty"`
}

// OutKeyRef is a key of a cluster Secret (spec.ValuesRef).
type OutKeyRef struct {
	Name       string `yaml:"name"`
	Namespace  string `yaml:"namespace,omitempty"`
	Key        string `yaml:"key"`
	TargetPath string `yaml:"targetPath,omitempty"`
}

// OutApply is an apply step.
type OutApply struct {
	Manifests  []OutSource `yaml:"manifests"`
	Namespace  string      `yaml:"namespace,omitempty"`
	ServerSide bool        `yaml:"serverSide,omitempty"`
	WaitFor    string      `yaml:"waitFor,omitempty"`
	SkipIf     string      `yaml:"skipIf,omitempty"`
}

// OutDelete is a delete step: exactly one of Manifests, Resource, Release.
type OutDelete struct {
	Manifests      []OutSource `yaml:"manifests,omitempty"`
	Resource       string      `yaml:"resource,omitempty"`
	Release        string      `yaml:"release,omitempty"`
	Namespace      string      `yaml:"namespace,omitempty"`
	AllNamespaces  bool        `yaml:"allNamespaces,omitempty"`
	Selector       string      `yaml:"selector,omitempty"`
	IgnoreNotFound *bool       `yaml:"ignoreNotFound,omitempty"`
}

// OutPatch is a patch step.
type OutPatch struct {
	Target    string `yaml:"target"`
	Namespace string `yaml:"namespace,omitempty"`
	Type      string `yaml:"type,omitempty"`
	Patch     any    `yaml:"patch"`
}

// OutWait is a wait step.
type OutWait struct {
	For           string `yaml:"for"`
	On            string `yaml:"on"`
	Namespace     string `yaml:"namespace,omitempty"`
	AllNamespaces bool   `yaml:"allNamespaces,omitempty"`
	Selector      string `yaml:"selector,omitempty"`
	FieldSelector string `yaml:"fieldSelector,omitempty"`
}

// OutRollout is a rollout step.
type OutRollout struct {
	Restart   string `yaml:"restart,omitempty"`
	Status    string `yaml:"status,omitempty"`
	Namespace string `yaml:"namespace"`
}
