package helmstep

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	rel "helm.sh/helm/v4/pkg/release/v1"

	"github.com/khook/khook/runner/chartsource"
	"github.com/khook/khook/runner/kube"
)

// CheckNamespaces finds the namespaces other than the release's that a
// dry-run release writes into (its manifest and the hooks an install or
// upgrade runs) and that do not exist: unless the chart itself renders the
// Namespace or created says an earlier step creates it, apply's install
// would fail there (Helm's `namespaces "X" not found`), so the plan fails
// with apply's sentence, naming the objects. A kind the cluster does not
// serve yet is left out (its scope is not known).
func (e *Executor) CheckNamespaces(ctx context.Context, r *Release, res *rel.Release, created func(ns string) bool) error {
	manifest := res.Manifest
	for _, h := range res.Hooks {
		if chartsource.RunsOnInstallOrUpgrade(h) {
			manifest += "\n---\n" + h.Manifest
		}
	}
	objs, err := chartsource.DecodeManifest(manifest)
	if err != nil {
		return nil // Helm's render read it; apply reports what it cannot
	}
	chartMakes := map[string]bool{}
	writes := map[string][]string{} // namespace -> "Kind ns/name"
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		if gvk.Group == "" && gvk.Kind == "Namespace" {
			chartMakes[obj.GetName()] = true
			continue
		}
		ns := obj.GetNamespace()
		if ns == "" || ns == r.Namespace {
			continue // the release's namespace: checked before the render
		}
		mapping, err := e.clients.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil || mapping.Scope.Name() != meta.RESTScopeNameNamespace {
			continue
		}
		writes[ns] = append(writes[ns], gvk.Kind+" "+ns+"/"+obj.GetName())
	}
	var missing []string
	for ns := range writes {
		if chartMakes[ns] || (created != nil && created(ns)) {
			continue
		}
		_, _, err := e.clients.Live(ctx, kube.NamespaceMapping, "", ns)
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, ns)
		case err != nil:
			return fmt.Errorf("release %s: cannot read namespace %s: %w", r.Name, ns, e.clients.Explain(err))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	ns := missing[0] // apply stops at the first
	return e.failure(r, namespaceNotCreated(ns, writes[ns]))
}

// namespaceNotCreated is the sentence of a namespace the chart writes into
// that neither it nor an earlier step creates: plan's (with the objects)
// and apply's (from Helm's error) alike.
func namespaceNotCreated(ns string, objects []string) error {
	what := "objects"
	if len(objects) > 0 {
		what += " (" + strings.Join(objects, ", ") + ")"
	}
	return fmt.Errorf("namespace %s not found: the chart writes %s there, and neither the chart nor an earlier step creates it; create the namespace in a step this one needs", ns, what)
}

// helmNamespaceNotFound is Helm's error for an object whose namespace does
// not exist.
var helmNamespaceNotFound = regexp.MustCompile(`namespaces "([^"]+)" not found`)

// namespaceFailure turns Helm's install error for an object outside the
// release's namespace into namespaceNotCreated; nil for any other error.
func namespaceFailure(err error, release string) error {
	m := helmNamespaceNotFound.FindStringSubmatch(err.Error())
	if m == nil || m[1] == release {
		return nil
	}
	return namespaceNotCreated(m[1], nil)
}
