package helmstep

import (
	"context"
	"sort"
	"strings"

	helmkube "helm.sh/helm/v4/pkg/kube"
	rel "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/runner/kube"
)

// toBeDeleted lists the live objects an uninstall of last will delete,
// with their UIDs: every object of its manifest but those Helm keeps
// (helm.sh/resource-policy: keep, which keepCRDs set on its CRDs). khook
// waits for these by UID after the uninstall instead of letting Helm wait
// by name: the clusterrole-aggregation controller re-applies an aggregated
// ClusterRole it sees change, and so re-creates one an uninstall just
// deleted (kyverno's chart has several); Helm's wait would then last until
// the step timeout for an object that is not the release's any more.
// Objects that cannot be read are left out: the wait is a courtesy, and
// the uninstall itself reports what it could not delete.
func toBeDeleted(ctx context.Context, clients *kube.Clients, last *rel.Release) []kube.Deleted {
	docs := releaseutil.SplitManifests(last.Manifest)
	keys := make([]string, 0, len(docs))
	for k := range docs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	c := clients
	var out []kube.Deleted
	for _, k := range keys {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(docs[k]), &obj); err != nil || obj == nil {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.GetName() == "" || u.GetKind() == "CustomResourceDefinition" ||
			strings.EqualFold(strings.TrimSpace(u.GetAnnotations()[helmkube.ResourcePolicyAnno]), helmkube.KeepPolicy) {
			continue
		}
		gvk := u.GroupVersionKind()
		m, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			continue
		}
		ns := ""
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			if ns = u.GetNamespace(); ns == "" {
				ns = last.Namespace
			}
		}
		live, err := c.Resource(m, ns).Get(ctx, u.GetName(), metav1.GetOptions{})
		if err != nil {
			continue
		}
		out = append(out, kube.Deleted{Mapping: m, Namespace: ns, Name: u.GetName(), UID: live.GetUID()})
	}
	return out
}
