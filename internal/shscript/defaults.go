package shscript

import (
	"path/filepath"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/khook/khook/internal/importer"
)

// Where kubectl's or helm's own default differs from the step's, the
// import writes the tool's value or says so at the line, never silently
// takes khook's: kubectl wait gives up after 30s (written), kubectl
// rollout status waits without limit (said: a step has a timeout), and
// helm and kubectl without -n work in the kubeconfig context's namespace
// (said: the step works in default). helm's own --timeout default, 5m,
// is the step's.

// kubectlWaitTimeout is kubectl wait's --timeout default.
const kubectlWaitTimeout = "30s"

// stepInfo says why at step st's line, once for a line however often it
// is walked (a function called twice); it names the step, so the note
// goes when the step is not written.
func (t *translator) stepInfo(n importer.Loc, st *importer.OutStep, why string) {
	for _, o := range t.m.Info {
		if o.Loc == n && o.Why == why {
			return
		}
	}
	t.m.Info = append(t.m.Info, importer.Note{Loc: n, What: "step " + st.Name, Why: why})
}

// rolloutUnbounded says that a rollout status without --timeout waits
// until the rollout is done, where the step stops at its timeout.
func (t *translator) rolloutUnbounded(x *cmd, st *importer.OutStep) {
	t.stepInfo(t.loc(x.stmt), st, "kubectl rollout status without --timeout waits until the rollout is done, without limit; the step fails after khook's default timeout, 5m: write a longer timeout: if the rollout takes longer")
}

// contextNamespace says, for the steps a kubectl or helm command without
// -n made, that the tool works in the kubeconfig context's namespace and
// the step in default, when a step holds namespaced objects that name
// none.
func (t *translator) contextNamespace(x *cmd, tool string, steps []*importer.Step) {
	for _, st := range steps {
		if a := st.Out.Apply; a != nil && a.Namespace == "" && len(a.Manifests) > 0 && !slices.ContainsFunc(a.Manifests, func(s importer.OutSource) bool { return s.URL == "" }) {
			// an operator's bundle by URL, whose objects mostly name their
			// namespace (46zza's N1: the note on 30 lines): said once
			if !t.urlNSSaid {
				t.urlNSSaid = true
				t.stepInfo(t.loc(x.stmt), st.Out, "if the manifests at its URL name no namespace, "+tool+" without -n applies them in the kubeconfig context's namespace, the step in default; khook does not read the URL at import (said once, for this apply and those of URLs after it): write namespace: on those whose objects need the context's")
			}
			return
		}
		if t.namespaced(st.Out) {
			why := tool + " without -n works in the kubeconfig context's namespace (default, unless the context names another); the step works in default: write namespace: if the context names another"
			if u := t.scopeUnknown(st.Out); u != "" {
				why = "if " + u + ", " + why
			}
			t.stepInfo(t.loc(x.stmt), st.Out, why)
			return
		}
	}
}

// scopeUnknown is why the import cannot tell whether st works on a
// namespaced object ("" when it can): a kind that is no built-in one (a
// NodeFeatureRule may be cluster-scoped), or manifests at a URL, which
// may name their namespace (46zzc's N2).
func (t *translator) scopeUnknown(st *importer.OutStep) string {
	target := ""
	switch {
	case st.Patch != nil:
		target = st.Patch.Target
	case st.Delete != nil && len(st.Delete.Manifests) == 0:
		target = st.Delete.Resource
	case st.Wait != nil:
		target = st.Wait.On
	case st.Apply != nil:
		builtin, other, opaque := t.unnamespaced(slices.DeleteFunc(slices.Clone(st.Apply.Manifests), func(s importer.OutSource) bool { return s.URL != "" }))
		switch {
		case builtin || opaque:
			return ""
		case slices.ContainsFunc(st.Apply.Manifests, func(s importer.OutSource) bool { return s.URL != "" }):
			return "the manifests at its URL (not read at import) name no namespace of their own"
		case len(other) > 0:
			// a ConstraintTemplate, cluster-scoped, was warned flatly (trial 46s67c's D2)
			return strings.Join(other, ", ") + " is namespaced (no built-in kind: khook cannot tell)"
		}
		return ""
	}
	kind, _, _ := strings.Cut(strings.ToLower(target), "/")
	kind, _, _ = strings.Cut(kind, ".")
	if kind == "" || namespacedKinds[strings.TrimSuffix(kind, "s")] || namespacedKinds[kind] {
		return ""
	}
	return kind + " is namespaced (no built-in kind: khook cannot tell)"
}

// namespacedKinds are the built-in namespaced kinds a script names most
// (kind, resource, short name), as clusterKinds are the cluster-scoped ones.
var namespacedKinds = map[string]bool{
	"pod": true, "po": true, "deployment": true, "deploy": true, "daemonset": true, "ds": true, "statefulset": true, "sts": true,
	"replicaset": true, "rs": true, "service": true, "svc": true, "configmap": true, "cm": true, "secret": true,
	"serviceaccount": true, "sa": true, "job": true, "cronjob": true, "cj": true, "ingress": true, "ingresse": true, "ing": true,
	"role": true, "rolebinding": true, "persistentvolumeclaim": true, "pvc": true, "networkpolicy": true, "networkpolicie": true,
	"netpol": true, "endpoint": true, "ep": true, "horizontalpodautoscaler": true, "hpa": true, "poddisruptionbudget": true,
	"pdb": true, "lease": true, "event": true, "ev": true, "limitrange": true, "resourcequota": true, "quota": true,
	"replicationcontroller": true, "rc": true, "endpointslice": true,
}

// namespaced: the step works on a namespaced object that names no
// namespace of its own (for files, manifests that do not say are).
func (t *translator) namespaced(st *importer.OutStep) bool {
	switch {
	case st.Helm != nil:
		return st.Helm.Namespace == ""
	case st.Apply != nil:
		return st.Apply.Namespace == "" && t.sourcesNamespaced(st.Apply.Manifests)
	case st.Delete != nil && len(st.Delete.Manifests) > 0:
		return st.Delete.Namespace == "" && !st.Delete.AllNamespaces && t.sourcesNamespaced(st.Delete.Manifests)
	case st.Delete != nil:
		return st.Delete.Namespace == "" && !st.Delete.AllNamespaces && !clusterScoped(st.Delete.Resource)
	case st.Wait != nil:
		return st.Wait.Namespace == "" && !st.Wait.AllNamespaces && !clusterScoped(st.Wait.On)
	case st.Patch != nil:
		return st.Patch.Namespace == "" && !clusterScoped(st.Patch.Target)
	case st.Rollout != nil: // written default: kubectl's was the context's
		return true
	}
	return false
}

// sourcesNamespaced: an object of the manifests is namespaced and names
// no namespace; a URL or kustomization, not read here, may hold one.
func (t *translator) sourcesNamespaced(srcs []importer.OutSource) bool {
	builtin, other, opaque := t.unnamespaced(srcs)
	return builtin || len(other) > 0 || opaque
}

// unnamespaced is what of the manifests names no namespace: a built-in
// namespaced kind, other kinds (a ConstraintTemplate is cluster-scoped, a
// NodeFeatureRule too: khook cannot tell), or manifests it cannot read
// (a kustomization that sets none, a file it cannot read).
func (t *translator) unnamespaced(srcs []importer.OutSource) (builtin bool, other []string, opaque bool) {
	for _, s := range srcs {
		if s.Kustomize != "" {
			if kustomizationNamespace(filepath.Join(t.specDir, s.Kustomize)) == "" {
				opaque = true
			}
			continue // it sets every object's namespace (trial 46z's N1)
		}
		text := s.Inline
		if s.File != "" {
			file := filepath.Join(t.specDir, s.File)
			if d := t.defaultPath(s.File); d != "" {
				file = d // ${REPO_ROOT_DIR}/x.yaml: read at the default (trial 46s67e's N4: warned unread)
			}
			b, err := readFile(file)
			if err != nil {
				opaque = true
				continue
			}
			text = string(b)
		} else if s.Inline == "" {
			opaque = true
			continue
		}
		dec := yaml.NewDecoder(strings.NewReader(text))
		for {
			var obj struct {
				Kind     string `yaml:"kind"`
				Metadata struct {
					Namespace string `yaml:"namespace"`
				} `yaml:"metadata"`
			}
			if err := dec.Decode(&obj); err != nil {
				break
			}
			switch k := strings.ToLower(obj.Kind); {
			case obj.Kind == "" || obj.Metadata.Namespace != "" || clusterScoped(obj.Kind):
			case namespacedKinds[k]:
				builtin = true
			case !slices.Contains(other, obj.Kind):
				other = append(other, obj.Kind)
			}
		}
	}
	return builtin, other, opaque
}

// kustomizationNamespace is the namespace: a kustomization in dir sets
// ("" when it sets none or cannot be read).
func kustomizationNamespace(dir string) string {
	for _, name := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		b, err := readFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		var k struct {
			Namespace string `yaml:"namespace"`
		}
		if yaml.Unmarshal(b, &k) != nil {
			return ""
		}
		return k.Namespace
	}
	return ""
}

// clusterScoped: a built-in kind (or a common one, cert-manager's
// ClusterIssuer) that has no namespace, as kind, resource, short name or
// TYPE/NAME.
func clusterScoped(kind string) bool {
	kind, _, _ = strings.Cut(strings.ToLower(kind), "/")
	kind, _, _ = strings.Cut(kind, ".")
	return clusterKinds[strings.TrimSuffix(kind, "s")] || clusterKinds[kind]
}

var clusterKinds = map[string]bool{
	"namespace": true, "ns": true, "node": true, "no": true, "customresourcedefinition": true, "crd": true,
	"clusterrole": true, "clusterrolebinding": true, "storageclass": true, "sc": true, "storageclasse": true,
	"persistentvolume": true, "pv": true, "priorityclass": true, "pc": true, "priorityclasse": true,
	"mutatingwebhookconfiguration": true, "validatingwebhookconfiguration": true, "apiservice": true,
	"csidriver": true, "ingressclass": true, "ingressclasse": true, "runtimeclass": true, "runtimeclasse": true,
	"clusterissuer": true, "volumesnapshotclass": true, "volumesnapshotclasse": true,
	"validatingadmissionpolicy": true, "validatingadmissionpolicybinding": true,
}
