package steps

import (
	"context"
	"encoding/json"
	"fmt"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	k8serrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/objdiff"
	"github.com/khook/khook/spec"
)

// PatchExecutor is kubectl patch. Unlike kubectl it first applies the patch locally
// to the object it just read (the same strategic-merge, JSON-merge and
// RFC 6902 code the API server runs) and sends nothing when that changes
// nothing: a converged re-run reports "unchanged" and writes nothing,
// without an extra request. When the local result differs, or cannot be
// computed (strategic patches of custom resources), the real patch is
// sent and the server decides. A server-side dry-run was tried first, but a
// controller updating the object between the read and the dry-run made
// converged re-runs look changed.
type PatchExecutor struct{ Env }

// NewPatchExecutor returns the patch executor.
func NewPatchExecutor(env Env) *PatchExecutor { return &PatchExecutor{env} }

// Execute patches the target, which must exist.
func (x *PatchExecutor) Execute(ctx context.Context, st *spec.Step) (runner.Outcome, error) {
	if st.Patch == nil {
		return runner.Outcome{}, wrongStep(st, spec.TypePatch)
	}
	out, _, err := x.run(ctx, st.Patch, kube.DryRunNone)
	return x.finish(out, err)
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

// PatchPreview is a patch step's resolved target, as read, and its patch:
// what run (Execute's and Plan's one path) patches.
type PatchPreview struct {
	Target kube.Resource
	Name   string // "deployment.apps/x in namespace y"
	Live   *unstructured.Unstructured

	namespace string
	patchType types.PatchType
	body      []byte
}

// resolve resolves the target and reads it; it must exist.
func (x *PatchExecutor) resolve(ctx context.Context, p *spec.Patch) (*PatchPreview, error) {
	c := x.Clients
	pt, err := PatchType(p.Type)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(p.Patch)
	if err != nil {
		return nil, fmt.Errorf("cannot encode the patch body: %v", err)
	}
	res, err := c.ResolveObject(ctx, "target", p)
	if err != nil {
		if kube.IsUnreachable(err) {
			return nil, err
		}
		return nil, &runner.Pending{Err: err}
	}
	if res.Name == "" {
		return nil, fmt.Errorf("target %q names no object: write kind/name (daemonset/aws-node)", p.Target)
	}
	ns := spec.NamespaceOrDefault(p.Namespace)
	if !res.Namespaced() {
		ns = ""
	}
	pv := &PatchPreview{Target: res, Name: describe(res.Mapping, ns, res.Name), namespace: ns, patchType: pt, body: body}
	pv.Live, err = c.Resource(res.Mapping, ns).Get(ctx, res.Name, metav1.GetOptions{})
	if k8serrors.IsNotFound(err) {
		return nil, &runner.Pending{Object: runner.ObjectKey(res.Mapping.GroupVersionKind.Kind, ns, res.Name), What: "patch target " + pv.Name,
			Err: fmt.Errorf("patch target %s not found: it must exist before it can be patched", pv.Name)}
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", pv.Name, c.Explain(err))
	}
	return pv, nil
}

// run is the patch step's one path, for Execute and (dry: the patch as a
// server-side dry run) for Plan. It returns the target as read and as
// patched (nil when unchanged).
func (x *PatchExecutor) run(ctx context.Context, p *spec.Patch, dry kube.DryRunStrategy) (runner.Outcome, *patched, error) {
	var out runner.Outcome
	pv, err := x.resolve(ctx, p)
	if err != nil {
		return out, nil, err
	}
	after, changed := PatchOutcome(pv.Live, pv.patchType, pv.body)
	if !changed {
		out.Changes = []model.Change{change(model.DidUnchanged, pv.Target.Mapping, pv.namespace, pv.Target.Name)}
		out.Detail = fmt.Sprintf("%s unchanged (the patch is already applied)", pv.Name)
		return out, &patched{preview: pv, after: after, local: after != nil}, nil
	}
	r := x.Clients.Resource(pv.Target.Mapping, pv.namespace)
	opts := metav1.PatchOptions{FieldManager: kube.FieldManager, FieldValidation: kube.FieldValidation, DryRun: dry.Options()}
	answer, err := r.Patch(ctx, pv.Target.Name, pv.patchType, pv.body, opts)
	if !dry.IsDryRun() {
		kube.InvalidateLiveOf(ctx, pv.Target.Mapping, pv.namespace)
	}
	if err != nil {
		return out, nil, x.patchError(pv.Target, pv.Name, p, err)
	}
	out.Writes = 1
	out.Changes = []model.Change{change(model.DidConfigure, pv.Target.Mapping, pv.namespace, pv.Target.Name)}
	out.Detail = fmt.Sprintf("patched %s (%s)", pv.Name, patchTypeName(p.Type))
	return out, &patched{preview: pv, after: answer, changed: true, local: after != nil}, nil
}

// patched is a patch's target before and after.
type patched struct {
	preview *PatchPreview
	after   *unstructured.Unstructured
	changed bool
	local   bool // the patch applied locally (else only the server can)
}

// Plan is Execute's path with the patch dry-run on the server: configure,
// or unchanged when the patch is already applied.
func (x *PatchExecutor) Plan(ctx context.Context, st *spec.Step, _ runner.PlanInput) (runner.Prediction, error) {
	var p runner.Prediction
	if st.Patch == nil {
		return p, wrongStep(st, spec.TypePatch)
	}
	_, pt, err := x.run(ctx, st.Patch, kube.DryRunServer)
	if err != nil {
		return p, err
	}
	live := pt.preview.Live
	o := runner.PlannedObject{Action: model.ActionConfigure, Kind: live.GetKind(), Namespace: live.GetNamespace(), Name: live.GetName(), Desired: pt.after, Live: live}
	if !pt.changed {
		o.Action, o.Desired = model.ActionUnchanged, nil
		p.Action, p.Reason = model.ActionUnchanged, "the patch is already applied"
	} else {
		p.Action = model.ActionConfigure
	}
	if !pt.local {
		// Only the server can apply this patch: the patch is what is sent.
		p.Digest = &runner.PlanDigest{Kind: "patch", Data: append([]byte(string(pt.preview.patchType)+"\x00"), pt.preview.body...)}
	}
	p.Objects = []runner.PlannedObject{o}
	return p, nil
}

func strategicOnCR(res kube.Resource) error {
	return fmt.Errorf("patch type strategic is not supported for custom resource %s/%s: use type: merge", kube.KindName(res.Mapping), res.Name)
}

func (x *PatchExecutor) patchError(res kube.Resource, name string, p *spec.Patch, err error) error {
	switch {
	case k8serrors.IsUnsupportedMediaType(err):
		return strategicOnCR(res)
	case k8serrors.IsNotFound(err):
		return fmt.Errorf("patch target %s not found: it must exist before it can be patched", name)
	}
	if r := kube.Refused(fmt.Sprintf("the %s patch of %s", patchTypeName(p.Type), name), err); r != nil && !kube.IsUnreachable(err) {
		return r
	}
	return fmt.Errorf("cannot patch %s: %w", name, x.Clients.Explain(err))
}

func patchTypeName(t string) string {
	if t == "" {
		return spec.PatchStrategic
	}
	return t
}

// PatchOutcome is the patch executor's decision, which plan shares: the
// patch applied to live locally, and whether that changes the object. A
// patch that cannot be applied locally (a strategic merge on a kind the
// scheme does not know) is a change with no result: the server has the
// last word (and the error message).
func PatchOutcome(live *unstructured.Unstructured, pt types.PatchType, body []byte) (after *unstructured.Unstructured, changed bool) {
	cur, err := live.MarshalJSON()
	if err != nil {
		return nil, true
	}
	var patched []byte
	switch pt {
	case types.MergePatchType:
		patched, err = jsonpatch.MergePatch(cur, body)
	case types.JSONPatchType:
		var ops jsonpatch.Patch
		if ops, err = jsonpatch.DecodePatch(body); err == nil {
			patched, err = ops.Apply(cur)
		}
	case types.StrategicMergePatchType:
		var typed runtime.Object
		if typed, err = scheme.Scheme.New(live.GroupVersionKind()); err == nil {
			patched, err = strategicpatch.StrategicMergePatch(cur, body, typed)
		}
	default:
		return nil, true
	}
	if err != nil {
		return nil, true
	}
	after = &unstructured.Unstructured{}
	if err := after.UnmarshalJSON(patched); err != nil {
		return nil, true
	}
	return after, objdiff.Decide(live, after, objdiff.Options{}).Changed()
}
