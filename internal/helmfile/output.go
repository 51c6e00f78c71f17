package helmfile

// The spec written, in the DSL's key order.
type outSpec struct {
	APIVersion string             `yaml:"apiVersion"`
	Kind       string             `yaml:"kind"`
	Metadata   outMetadata        `yaml:"metadata"`
	Vars       map[string]*outVar `yaml:"vars,omitempty"`
	Steps      []*outStep         `yaml:"steps"`
}

type outMetadata struct {
	Name string `yaml:"name"`
}

type outVar struct {
	Type        string  `yaml:"type"`
	Required    bool    `yaml:"required,omitempty"`
	Default     *string `yaml:"default,omitempty"`
	Description string  `yaml:"description,omitempty"`
}

type outStep struct {
	Name        string            `yaml:"name"`
	Needs       []string          `yaml:"needs,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Timeout     string            `yaml:"timeout,omitempty"`
	OnImmutable string            `yaml:"onImmutable,omitempty"`
	Helm        *outHelm          `yaml:"helm,omitempty"`
	Apply       *outApply         `yaml:"apply,omitempty"`
	Delete      *outDelete        `yaml:"delete,omitempty"`
	Patch       *outPatch         `yaml:"patch,omitempty"`
	Wait        *outWait          `yaml:"wait,omitempty"`
	Rollout     *outRollout       `yaml:"rollout,omitempty"`
}

type outRollout struct {
	Restart   string `yaml:"restart,omitempty"`
	Status    string `yaml:"status,omitempty"`
	Namespace string `yaml:"namespace"`
}

type outHelm struct {
	Chart            string            `yaml:"chart"`
	Repo             string            `yaml:"repo,omitempty"`
	Version          string            `yaml:"version,omitempty"`
	Release          string            `yaml:"release,omitempty"`
	Namespace        string            `yaml:"namespace,omitempty"`
	CreateNamespace  bool              `yaml:"createNamespace,omitempty"`
	Atomic           bool              `yaml:"atomic,omitempty"`
	Wait             bool              `yaml:"wait,omitempty"`
	CRDs             string            `yaml:"crds,omitempty"`
	DependencyUpdate bool              `yaml:"dependencyUpdate,omitempty"`
	ValuesFrom       []outSource       `yaml:"valuesFrom,omitempty"`
	Values           map[string]any    `yaml:"values,omitempty"`
	PostRenderers    []outPostRenderer `yaml:"postRenderers,omitempty"`
}

type outPostRenderer struct {
	Kustomize *outKustomize `yaml:"kustomize"`
}

type outKustomize struct {
	Patches []outKPatch `yaml:"patches"`
}

type outKPatch struct {
	Patch  string            `yaml:"patch"`
	Target map[string]string `yaml:"target,omitempty"`
}

type outSource struct {
	Inline    string `yaml:"inline,omitempty"`
	File      string `yaml:"file,omitempty"`
	URL       string `yaml:"url,omitempty"`
	Kustomize string `yaml:"kustomize,omitempty"`
	Path      string `yaml:"path,omitempty"`
}

type outApply struct {
	Manifests  []outSource `yaml:"manifests"`
	Namespace  string      `yaml:"namespace,omitempty"`
	ServerSide bool        `yaml:"serverSide,omitempty"`
}

type outDelete struct {
	Release   string `yaml:"release"`
	Namespace string `yaml:"namespace,omitempty"`
}

type outPatch struct {
	Target    string `yaml:"target"`
	Namespace string `yaml:"namespace,omitempty"`
	Type      string `yaml:"type,omitempty"`
	Patch     any    `yaml:"patch"`
}

type outWait struct {
	For       string `yaml:"for"`
	On        string `yaml:"on"`
	Namespace string `yaml:"namespace,omitempty"`
	Selector  string `yaml:"selector,omitempty"`
}
