package importcmd

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Unconverted is one construct of the helmfile that has no khook form (or
// that this importer does not convert), at its line.
type Unconverted struct {
	Line int    `json:"line"`
	What string `json:"what"`
	Why  string `json:"why"`
}

func (u Unconverted) String() string { return fmt.Sprintf("line %d: %s: %s", u.Line, u.What, u.Why) }

// Converted is a helmfile turned into a khook spec.
type Converted struct {
	Spec        *outSpec
	Unconverted []Unconverted
	// Lines are the helmfile lines of Spec.Steps' releases, in step order.
	Lines []int
}

// The spec written, in the DSL's key order.
type outSpec struct {
	APIVersion string      `yaml:"apiVersion"`
	Kind       string      `yaml:"kind"`
	Metadata   outMetadata `yaml:"metadata"`
	Steps      []*outStep  `yaml:"steps"`
}

type outMetadata struct {
	Name string `yaml:"name"`
}

type outStep struct {
	Name    string     `yaml:"name"`
	Needs   []string   `yaml:"needs,omitempty"`
	Timeout string     `yaml:"timeout,omitempty"`
	Helm    *outHelm   `yaml:"helm,omitempty"`
	Delete  *outDelete `yaml:"delete,omitempty"`
}

type outHelm struct {
	Chart           string         `yaml:"chart"`
	Repo            string         `yaml:"repo,omitempty"`
	Version         string         `yaml:"version,omitempty"`
	Release         string         `yaml:"release,omitempty"`
	Namespace       string         `yaml:"namespace,omitempty"`
	CreateNamespace bool           `yaml:"createNamespace,omitempty"`
	Atomic          bool           `yaml:"atomic,omitempty"`
	Wait            bool           `yaml:"wait,omitempty"`
	ValuesFrom      []outSource    `yaml:"valuesFrom,omitempty"`
	Values          map[string]any `yaml:"values,omitempty"`
}

type outSource struct {
	File string `yaml:"file"`
}

type outDelete struct {
	Release   string `yaml:"release"`
	Namespace string `yaml:"namespace,omitempty"`
}

// repository is one entry of repositories:.
type repository struct {
	url string
	oci bool
}

// defaults are helmDefaults: the ones a release inherits.
type defaults struct {
	wait, atomic    bool
	createNamespace bool
	timeout         int
}

// release is what the importer reads of one entry of releases:.
type release struct {
	node                *yaml.Node
	name, namespace     string
	needs               []string
	needsLine           int
	step                *outStep
	installed           bool
	hasWait, hasAtomic  bool
	hasCreateNS, hasTmo bool
}

type converter struct {
	repos    map[string]repository
	defaults defaults
	out      []Unconverted
}

func (c *converter) skip(n *yaml.Node, what, why string) {
	c.out = append(c.out, Unconverted{Line: n.Line, What: what, Why: why})
}

// ConvertHelmfile converts a helmfile.yaml's common subset: repositories,
// helmDefaults (wait, atomic, timeout, createNamespace) and releases with
// chart, version, namespace, values (files and inline), set, needs,
// installed, wait, atomic, timeout and createNamespace. Everything else is
// listed, with its line, in Unconverted. name is the spec's metadata.name.
func ConvertHelmfile(data []byte, name string) (*Converted, error) {
	c := &converter{repos: map[string]repository{}, defaults: defaults{createNamespace: true}}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	var docs []*yaml.Node
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			return nil, fmt.Errorf("cannot read it as YAML (%v); a templated helmfile ({{ }}, .gotmpl) is rendered first: helmfile build > rendered.yaml, then import that", err)
		}
		if len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
			docs = append(docs, doc.Content[0])
		}
	}
	// Repositories and defaults first: a release may come before them.
	for _, doc := range docs {
		for i := 0; i+1 < len(doc.Content); i += 2 {
			k, v := doc.Content[i], doc.Content[i+1]
			switch k.Value {
			case "repositories":
				c.repositories(v)
			case "helmDefaults":
				c.helmDefaults(v)
			case "releases":
			default:
				c.skip(k, k.Value, "no khook equivalent is converted; carry it over by hand")
			}
		}
	}
	var rels []*release
	for _, doc := range docs {
		for i := 0; i+1 < len(doc.Content); i += 2 {
			if doc.Content[i].Value == "releases" && doc.Content[i+1].Kind == yaml.SequenceNode {
				for _, n := range doc.Content[i+1].Content {
					if r := c.release(n); r != nil {
						rels = append(rels, r)
					}
				}
			}
		}
	}
	spec := &outSpec{APIVersion: "khook.io/v1", Kind: "Khook", Metadata: outMetadata{Name: name}}
	c.link(rels)
	var lines []int
	for _, r := range rels {
		spec.Steps = append(spec.Steps, r.step)
		lines = append(lines, r.node.Line)
	}
	c.templates(data)
	sort.SliceStable(c.out, func(i, j int) bool { return c.out[i].Line < c.out[j].Line })
	return &Converted{Spec: spec, Unconverted: c.out, Lines: lines}, nil
}

func (c *converter) repositories(n *yaml.Node) {
	if n.Kind != yaml.SequenceNode {
		c.skip(n, "repositories", "not a list")
		return
	}
	for _, item := range n.Content {
		var name string
		var repo repository
		eachField(item, func(k, v *yaml.Node) {
			switch k.Value {
			case "name":
				name = v.Value
			case "url":
				repo.url = v.Value
			case "oci":
				repo.oci = v.Value == "true"
			case "username", "password":
				c.skip(k, "repository "+k.Value, "credentials are not converted: set auth: {username, password} on the steps with ${VARIABLES}")
			default:
				c.skip(k, "repository "+k.Value, "not converted")
			}
		})
		if name != "" {
			c.repos[name] = repo
		}
	}
}

func (c *converter) helmDefaults(n *yaml.Node) {
	eachField(n, func(k, v *yaml.Node) {
		switch k.Value {
		case "wait":
			c.defaults.wait = v.Value == "true"
		case "atomic":
			c.defaults.atomic = v.Value == "true"
		case "createNamespace":
			c.defaults.createNamespace = v.Value == "true"
		case "timeout":
			c.defaults.timeout, _ = strconv.Atoi(v.Value)
		default:
			c.skip(k, "helmDefaults."+k.Value, "not converted")
		}
	})
}

// release reads one release; nil when it cannot be converted at all.
func (c *converter) release(n *yaml.Node) *release {
	r := &release{node: n, installed: true}
	h := &outHelm{}
	var chartNode *yaml.Node
	var valuesNode, setNode *yaml.Node
	var timeout int
	eachField(n, func(k, v *yaml.Node) {
		switch k.Value {
		case "name":
			r.name = v.Value
		case "namespace":
			r.namespace = v.Value
		case "chart":
			chartNode = v
		case "version":
			h.Version = v.Value
		case "values":
			valuesNode = v
		case "set":
			setNode = v
		case "needs":
			r.needsLine = k.Line
			for _, x := range v.Content {
				r.needs = append(r.needs, x.Value)
			}
		case "installed":
			r.installed = v.Value != "false"
		case "wait":
			r.hasWait, h.Wait = true, v.Value == "true"
		case "atomic":
			r.hasAtomic, h.Atomic = true, v.Value == "true"
		case "createNamespace":
			r.hasCreateNS, h.CreateNamespace = true, v.Value == "true"
		case "timeout":
			r.hasTmo = true
			timeout, _ = strconv.Atoi(v.Value)
		default:
			c.skip(k, "release "+displayName(n)+": "+k.Value, "not converted")
		}
	})
	if r.name == "" {
		c.skip(n, "a release without a name", "not converted")
		return nil
	}
	if hasTemplate(r.name) || hasTemplate(r.namespace) || hasTemplate(h.Version) {
		c.skip(n, "release "+r.name, "its name, namespace or version is a template: render the helmfile first (helmfile build)")
		return nil
	}
	r.step = &outStep{Name: r.name}
	if !r.installed {
		r.step.Delete = &outDelete{Release: r.name, Namespace: r.namespace}
		return r
	}
	if chartNode == nil || !c.chart(chartNode, h, r.name) {
		if chartNode == nil {
			c.skip(n, "release "+r.name, "has no chart")
		}
		return nil
	}
	h.Release, h.Namespace = r.name, r.namespace
	if !r.hasWait {
		h.Wait = c.defaults.wait
	}
	if !r.hasAtomic {
		h.Atomic = c.defaults.atomic
	}
	if !r.hasCreateNS && r.namespace != "" {
		h.CreateNamespace = c.defaults.createNamespace
	}
	if !r.hasTmo {
		timeout = c.defaults.timeout
	}
	if timeout > 0 {
		r.step.Timeout = strconv.Itoa(timeout) + "s"
	}
	if valuesNode != nil {
		c.values(valuesNode, h, r.name)
	}
	if setNode != nil {
		c.set(setNode, h, r.name)
	}
	r.step.Helm = h
	return r
}

// chart resolves a release's chart: repo/name through repositories:, an
// oci:// reference or a local path as written.
func (c *converter) chart(n *yaml.Node, h *outHelm, rel string) bool {
	ref := n.Value
	switch {
	case hasTemplate(ref):
		c.skip(n, "release "+rel+": chart "+ref, "a template: render the helmfile first (helmfile build)")
		return false
	case strings.HasPrefix(ref, "oci://"), strings.HasPrefix(ref, "./"), strings.HasPrefix(ref, "../"), strings.HasPrefix(ref, "/"):
		h.Chart = ref
		return true
	}
	repoName, chart, ok := strings.Cut(ref, "/")
	repo, known := c.repos[repoName]
	if !ok || !known {
		c.skip(n, "release "+rel+": chart "+ref, "names no repository of repositories: (a local chart is written ./path)")
		return false
	}
	if repo.oci {
		h.Chart = "oci://" + strings.TrimSuffix(strings.TrimPrefix(repo.url, "oci://"), "/") + "/" + chart
		return true
	}
	h.Chart, h.Repo = chart, repo.url
	return true
}

// values: files become valuesFrom, inline mappings merge into values.
func (c *converter) values(n *yaml.Node, h *outHelm, rel string) {
	inlineSeen := false
	for _, item := range n.Content {
		switch item.Kind {
		case yaml.ScalarNode:
			switch {
			case hasTemplate(item.Value) || strings.HasSuffix(item.Value, ".gotmpl"):
				c.skip(item, "release "+rel+": values "+item.Value, "a templated values file: render it first")
				continue
			case inlineSeen:
				c.skip(item, "release "+rel+": values "+item.Value, "comes after inline values: khook applies valuesFrom files first, then values; the file was converted but no longer overrides them")
			}
			h.ValuesFrom = append(h.ValuesFrom, outSource{File: item.Value})
		case yaml.MappingNode:
			var m map[string]any
			if err := item.Decode(&m); err != nil {
				c.skip(item, "release "+rel+": inline values", err.Error())
				continue
			}
			inlineSeen = true
			if h.Values == nil {
				h.Values = map[string]any{}
			}
			mergeInto(h.Values, m)
		default:
			c.skip(item, "release "+rel+": values entry", "neither a file nor a mapping")
		}
	}
}

// set: name=value pairs become nested values (a.b.c), over everything else.
func (c *converter) set(n *yaml.Node, h *outHelm, rel string) {
	for _, item := range n.Content {
		var name string
		var value any
		var hasValue bool
		eachField(item, func(k, v *yaml.Node) {
			switch k.Value {
			case "name":
				name = v.Value
			case "value":
				hasValue = v.Decode(&value) == nil
			default:
				c.skip(k, "release "+rel+": set "+k.Value, "only set: {name, value} is converted")
			}
		})
		switch {
		case name == "" || !hasValue:
			continue
		case strings.ContainsAny(name, `[]\`):
			c.skip(item, "release "+rel+": set "+name, "list indexes and escaped dots are not converted: write the value under values:")
			continue
		case hasTemplate(fmt.Sprint(value)):
			c.skip(item, "release "+rel+": set "+name, "a template: use a khook ${VARIABLE}")
			continue
		}
		if h.Values == nil {
			h.Values = map[string]any{}
		}
		parts := strings.Split(name, ".")
		m := h.Values
		for _, p := range parts[:len(parts)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		m[parts[len(parts)-1]] = value
	}
}

// link turns needs (name, namespace/name or context/namespace/name) into
// step names.
func (c *converter) link(rels []*release) {
	byName := map[string][]*release{}
	for _, r := range rels {
		byName[r.name] = append(byName[r.name], r)
	}
	for _, r := range rels {
		if len(byName[r.name]) > 1 && r.namespace != "" {
			r.step.Name = r.namespace + "-" + r.name
		}
	}
	for _, r := range rels {
		for _, need := range r.needs {
			parts := strings.Split(need, "/")
			name, ns := parts[len(parts)-1], ""
			if len(parts) > 1 {
				ns = parts[len(parts)-2]
			}
			var found *release
			for _, cand := range byName[name] {
				if ns == "" || cand.namespace == ns {
					found = cand
					break
				}
			}
			if found == nil {
				c.out = append(c.out, Unconverted{Line: r.needsLine, What: "release " + r.name + ": needs " + need, Why: "no converted release has that name"})
				continue
			}
			r.step.Needs = append(r.step.Needs, found.step.Name)
		}
	}
}

func eachField(n *yaml.Node, fn func(k, v *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		fn(n.Content[i], n.Content[i+1])
	}
}

func displayName(n *yaml.Node) string {
	name := "?"
	eachField(n, func(k, v *yaml.Node) {
		if k.Value == "name" {
			name = v.Value
		}
	})
	return name
}

func hasTemplate(s string) bool { return strings.Contains(s, "{{") }

// mergeInto merges src over dst, mappings key by key.
func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeInto(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

// SpecName turns a directory name into a metadata.name.
func SpecName(file string) string {
	base := strings.ToLower(path.Base(path.Dir(strings.ReplaceAll(file, "\\", "/"))))
	var b strings.Builder
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0:
			b.WriteRune('-')
		}
	}
	if s := strings.Trim(b.String(), "-"); s != "" {
		return s
	}
	return "imported"
}

// templates reports each line with a Go template not reported yet: khook
// does not render helmfile's templates.
func (c *converter) templates(data []byte) {
	seen := map[int]bool{}
	for _, u := range c.out {
		seen[u.Line] = true
	}
	for i, line := range strings.Split(string(data), "\n") {
		if hasTemplate(line) && !seen[i+1] && !strings.HasPrefix(strings.TrimSpace(line), "#") {
			c.out = append(c.out, Unconverted{Line: i + 1, What: "a Go template (" + strings.TrimSpace(line) + ")",
				Why: "khook does not render helmfile templates: use ${VARIABLES} (khook vars), or render it first with helmfile build"})
		}
	}
}
