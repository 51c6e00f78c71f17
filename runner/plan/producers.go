package plan

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/manifest"
	"github.com/khook/khook/spec"
)

// producers knows which step makes a namespace or registers a kind, read
// from the spec alone: a plan can then say "unknown: step X creates it"
// rather than fail on something an earlier step provides.
type producers struct {
	namespaces map[string]string // namespace -> step
	kinds      map[string]string // lower-case kind, and kind.group -> step
	objects    map[string]string // objectKey -> step
	// apiVersions are the API versions the CRDs of each step serve
	// ("group/version" and "group/version/Kind", as Helm's capabilities).
	apiVersions map[string][]string
	// crds are the CRDs each apply step applies (local manifests).
	crds map[string][]*unstructured.Unstructured
}

// objectKey names an object by lower-case kind, namespace and name.
var objectKey = runner.ObjectKey

func producersOf(s *spec.Spec) *producers {
	p := &producers{namespaces: map[string]string{}, kinds: map[string]string{}, objects: map[string]string{}, apiVersions: map[string][]string{}, crds: map[string][]*unstructured.Unstructured{}}
	add := func(m map[string]string, key, step string) {
		if _, ok := m[key]; !ok && key != "" {
			m[key] = step
		}
	}
	for _, st := range s.Steps {
		if st.Excluded() {
			continue
		}
		b := st.Block()
		if b == nil {
			continue
		}
		add(p.namespaces, b.CreatesNamespace(), st.Name)
		if m := b.ManifestSources(); m.Applied {
			for _, obj := range localObjects(s.BaseDir, m.Sources) {
				ns := obj.GetNamespace()
				if ns == "" {
					ns = m.Namespace
				}
				add(p.objects, objectKey(obj.GetKind(), ns, obj.GetName()), st.Name)
				add(p.objects, objectKey(obj.GetKind(), "", obj.GetName()), st.Name) // cluster-scoped
				switch {
				case obj.GetKind() == "Namespace" && obj.GetAPIVersion() == "v1":
					add(p.namespaces, obj.GetName(), st.Name)
				case kube.IsCRD(obj):
					kind, group, plural := kube.CRDNames(obj)
					for _, k := range []string{kind, kind + "." + group, plural, plural + "." + group} {
						add(p.kinds, strings.ToLower(k), st.Name)
					}
					p.apiVersions[st.Name] = append(p.apiVersions[st.Name], crdAPIVersions(obj, group, kind)...)
					p.crds[st.Name] = append(p.crds[st.Name], obj)
				}
			}
		}
	}
	return p
}

// crdAPIVersions are the API versions a CRD serves, as Helm's
// capabilities name them.
func crdAPIVersions(crd *unstructured.Unstructured, group, kind string) []string {
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var out []string
	for _, v := range versions {
		m, _ := v.(map[string]any)
		name, _ := m["name"].(string)
		if served, ok := m["served"].(bool); name == "" || (ok && !served) {
			continue
		}
		out = append(out, group+"/"+name, group+"/"+name+"/"+kind)
	}
	return out
}

// apiVersionsBefore are the API versions the CRDs of the steps st runs
// after (its needs, transitively) serve by the time st runs.
func (p *producers) apiVersionsBefore(s *spec.Spec, st *spec.Step) []string {
	var out []string
	for _, n := range s.NeedsOf(st) {
		out = append(out, p.apiVersions[n]...)
	}
	return out
}

// crdsBefore are the CRDs the steps st needs (transitively) apply: a
// helm step's custom resources are checked against them (#36).
func (p *producers) crdsBefore(s *spec.Spec, st *spec.Step) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, n := range s.NeedsOf(st) {
		out = append(out, p.crds[n]...)
	}
	return out
}

// localObjects reads the manifests a plan can read without the network;
// errors are left for the step's own probe to report.
func localObjects(baseDir string, sources []spec.Source) []*unstructured.Unstructured {
	var local []spec.Source
	for _, src := range sources {
		if src.URL == "" {
			local = append(local, src)
		}
	}
	objs, _ := manifest.LoadManifests(context.Background(), baseDir, local, nil)
	return objs
}

// namespaceReason says why a missing namespace makes a step unknown.
func (p *producers) namespaceReason(ns string) string {
	if step, ok := p.namespaces[ns]; ok {
		return fmt.Sprintf("namespace %s does not exist yet: step %s creates it", ns, step)
	}
	return fmt.Sprintf("namespace %s does not exist and no step creates it", ns)
}

// objectReason says why a missing object (a patch or restart target, its
// objectKey) makes a step unknown; what names the object for the message.
func (p *producers) objectReason(key, what string) string {
	if step, ok := p.objects[key]; ok {
		return fmt.Sprintf("%s does not exist yet: step %s applies it", what, step)
	}
	return fmt.Sprintf("%s does not exist yet (an earlier step may create it)", what)
}

// kindReason says why an unserved kind makes a step unknown.
func (p *producers) kindReason(kind, group string) string {
	for _, k := range []string{kind + "." + group, kind} {
		if step, ok := p.kinds[strings.ToLower(k)]; ok {
			return fmt.Sprintf("kind %s is not served yet: step %s registers it", qualified(kind, group), step)
		}
	}
	return fmt.Sprintf("kind %s is not served yet (an earlier step may register it)", qualified(kind, group))
}

// registers reports whether a step of the spec registers the kind.
func (p *producers) registers(kind, group string) bool {
	_, ok := p.kinds[strings.ToLower(kind+"."+group)]
	return ok
}

var qualified = runner.Qualified

// createsNamespace reports whether a step of the spec creates namespace ns.
func (p *producers) createsNamespace(ns string) bool {
	_, ok := p.namespaces[ns]
	return ok
}
