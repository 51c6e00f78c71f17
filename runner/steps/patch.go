package steps

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	k8serrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/spec"
)

// Patch is kubectl patch. Unlike kubectl it first sends the patch as a
// server-side dry-run and skips the real request when the result equals the
// live object (ignoring resourceVersion, managedFields and status): a converged
// re-run then reports "unchanged" and writes nothing, at the cost of one
// extra dry-run request when something does change.
type Patch struct{ Env }

// NewPatch returns the patch executor.
func NewPatch(env Env) *Patch { return &Patch{env} }

// Execute patches the target, which must exist.
func (x *Patch) Execute(ctx context.Context, st *spec.Step) (runner.Outcome, error) {
	if st.Patch == nil {
		return runner.Outcome{}, wrongStep(st, spec.TypePatch)
	}
	return x.finish(x.run(ctx, st.Patch))
}

// PatchType maps the DSL's patch type to the API's.
func PatchType(t string) (types.PatchType, error) {
	switch t {
	case "", spec.PatchStrategic:
		return types.StrategicMergePatchType, nil
	case spec.PatchMerge:
		return types.MergePatchType, nil
	case spec.PatchJSON:
		return types.JSONPatchType, nil
	}
	return "", fmt.Errorf("unknown patch type %q: use strategic, merge or json", t)
}

func (x *Patch) run(ctx context.Context, p *spec.Patch) (runner.Outcome, error) {
	var out runner.Outcome
	c := x.Clients
	pt, err := PatchType(p.Type)
	if err != nil {
		return out, err
	}
	body, err := json.Marshal(p.Patch)
	if err != nil {
		return out, fmt.Errorf("cannot encode the patch body: %v", err)
	}
	res, err := c.ResolveArg(ctx, p.Target)
	if err != nil {
		return out, fmt.Errorf("target %q: %w", p.Target, err)
	}
	if res.Name == "" {
		return out, fmt.Errorf("target %q names no object: write kind/name (daemonset/aws-node)", p.Target)
	}
	ns := namespaceOr(p.Namespace)
	if !res.Namespaced() {
		ns = ""
	}
	name := describe(res.Mapping, ns, res.Name)
	r := c.Resource(res.Mapping, ns)
	live, err := r.Get(ctx, res.Name, metav1.GetOptions{})
	if k8serrors.IsNotFound(err) {
		return out, fmt.Errorf("patch target %s not found: it must exist before it can be patched", name)
	}
	if err != nil {
		return out, fmt.Errorf("cannot read %s: %w", name, c.Explain(err))
	}
	opts := metav1.PatchOptions{FieldManager: kube.FieldManager, DryRun: []string{metav1.DryRunAll}}
	dry, err := r.Patch(ctx, res.Name, pt, body, opts)
	if err != nil {
		return out, x.patchError(res, name, p, err)
	}
	if sameObject(live, dry) {
		out.Detail = fmt.Sprintf("%s unchanged (the patch is already applied)", name)
		return out, nil
	}
	opts.DryRun = nil
	if _, err := r.Patch(ctx, res.Name, pt, body, opts); err != nil {
		return out, x.patchError(res, name, p, err)
	}
	out.Writes = 1
	out.Detail = fmt.Sprintf("patched %s (%s)", name, patchTypeName(p.Type))
	return out, nil
}

func strategicOnCR(res kube.Resource) error {
	return fmt.Errorf("patch type strategic is not supported for custom resource %s/%s: use type: merge", kube.KindName(res.Mapping), res.Name)
}

func (x *Patch) patchError(res kube.Resource, name string, p *spec.Patch, err error) error {
	switch {
	case k8serrors.IsUnsupportedMediaType(err):
		return strategicOnCR(res)
	case k8serrors.IsNotFound(err):
		return fmt.Errorf("patch target %s not found: it must exist before it can be patched", name)
	case k8serrors.IsInvalid(err), k8serrors.IsBadRequest(err):
		return fmt.Errorf("the API server rejected the %s patch of %s: %s", patchTypeName(p.Type), name, kube.APIMessage(err))
	}
	return fmt.Errorf("cannot patch %s: %w", name, x.Clients.Explain(err))
}

func patchTypeName(t string) string {
	if t == "" {
		return spec.PatchStrategic
	}
	return t
}

// sameObject compares two versions of an object, ignoring what every write
// (even a no-op dry-run) may touch.
func sameObject(a, b *unstructured.Unstructured) bool {
	strip := func(u *unstructured.Unstructured) map[string]any {
		c := u.DeepCopy()
		unstructured.RemoveNestedField(c.Object, "metadata", "resourceVersion")
		unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
		// Controllers update status concurrently; a patch of the main
		// resource never changes it.
		unstructured.RemoveNestedField(c.Object, "status")
		return c.Object
	}
	return equality.Semantic.DeepEqual(strip(a), strip(b))
}
