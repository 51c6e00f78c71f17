package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	k8serrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubectl/pkg/polymorphichelpers"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/readiness"
	"github.com/khook/khook/runner/kube/wait"
	"github.com/khook/khook/spec"
)

// RestartedAtAnnotation is what kubectl rollout restart sets on the pod
// template.
const RestartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"

// RolloutExecutor is kubectl rollout restart / status for deployments, daemonsets and
// statefulsets.
type RolloutExecutor struct {
	Env
	// Now stamps restartedAt; tests may fix it.
	Now func() time.Time
}

// NewRolloutExecutor returns the rollout executor.
func NewRolloutExecutor(env Env) *RolloutExecutor { return &RolloutExecutor{Env: env, Now: time.Now} }

// Execute restarts the workload or waits for its rollout to complete.
func (x *RolloutExecutor) Execute(ctx context.Context, st *spec.Step) (runner.Outcome, error) {
	r := st.Rollout
	if r == nil {
		return runner.Outcome{}, wrongStep(st, spec.TypeRollout)
	}
	if r.Restart != "" {
		out, _, err := x.restart(ctx, r, kube.DryRunNone)
		return x.finish(out, err)
	}
	out, err := x.status(ctx, r)
	return x.finish(out, err)
}

// workload resolves a kind/name argument to an apps/v1 workload.
func (x *RolloutExecutor) workload(ctx context.Context, r *spec.Rollout, arg, ns string) (kube.Resource, error) {
	res, err := x.Clients.ResolveObject(ctx, "", r)
	if err != nil {
		return res, err
	}
	gk := res.Mapping.GroupVersionKind.GroupKind()
	if gk.Group != "apps" || (gk.Kind != "Deployment" && gk.Kind != "DaemonSet" && gk.Kind != "StatefulSet") {
		return res, fmt.Errorf("%q is a %s: rollout works on deployment/x, daemonset/x and statefulset/x", arg, kube.KindName(res.Mapping))
	}
	if res.Name == "" {
		return res, fmt.Errorf("%q names no object: write kind/name (deployment/web)", arg)
	}
	return res, nil
}

// restart is the restart's one path, for Execute and (dry: the patch as a
// server-side dry run) for Plan; dry, it returns the workload as it is (what
// the plan's digest holds: the dry run's restartedAt is new every time).
func (x *RolloutExecutor) restart(ctx context.Context, r *spec.Rollout, dry kube.DryRunStrategy) (runner.Outcome, *unstructured.Unstructured, error) {
	var out runner.Outcome
	ns := spec.NamespaceOrDefault(r.Namespace)
	res, err := x.workload(ctx, r, r.Restart, ns)
	if err != nil {
		return out, nil, fmt.Errorf("restart %w", err)
	}
	name := describe(res.Mapping, ns, res.Name)
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{
		"annotations": map[string]string{RestartedAtAnnotation: x.Now().Format(time.RFC3339)},
	}}}})
	opts := metav1.PatchOptions{FieldManager: kube.FieldManager, FieldValidation: kube.FieldValidation, DryRun: dry.Options()}
	var live *unstructured.Unstructured
	if dry.IsDryRun() {
		if live, err = x.Clients.Resource(res.Mapping, ns).Get(ctx, res.Name, metav1.GetOptions{}); err != nil && !k8serrors.IsNotFound(err) {
			return out, nil, fmt.Errorf("cannot read %s: %w", name, x.Clients.Explain(err))
		}
	}
	_, err = x.Clients.Resource(res.Mapping, ns).Patch(ctx, res.Name, types.StrategicMergePatchType, patch, opts)
	if k8serrors.IsNotFound(err) {
		return out, nil, &runner.Pending{Object: runner.ObjectKey(res.Mapping.GroupVersionKind.Kind, ns, res.Name), What: name,
			Err: fmt.Errorf("cannot restart %s: not found", name)}
	}
	if r := kube.Refused(name, err); r != nil && !kube.IsUnreachable(err) {
		return out, nil, r
	}
	if err != nil {
		return out, nil, fmt.Errorf("cannot restart %s: %w", name, x.Clients.Explain(err))
	}
	out.Writes = 1
	out.Changes = []model.Change{change(model.DidRestart, res.Mapping, ns, res.Name)}
	out.Detail = "restarted " + name
	return out, live, nil
}

func (x *RolloutExecutor) status(ctx context.Context, r *spec.Rollout) (runner.Outcome, error) {
	var out runner.Outcome
	start := time.Now()
	ns := spec.NamespaceOrDefault(r.Namespace)
	res, viewer, _, err := x.statusTarget(ctx, r)
	if err != nil {
		return out, err
	}
	name := describe(res.Mapping, ns, res.Name)
	t := wait.Target{Mapping: res.Mapping, Namespace: ns, Name: res.Name}
	if err := wait.For(ctx, x.Clients, t, "rollout to complete", RolloutComplete(viewer)); err != nil {
		x.diagnose(ctx, start, &out, err, []wait.ObjectRef{{GVK: res.Mapping.GroupVersionKind, Namespace: ns, Name: res.Name}})
		return out, err
	}
	out.Detail = fmt.Sprintf("rollout of %s complete", name)
	return out, nil
}

// statusTarget resolves and reads rollout status's workload.
func (x *RolloutExecutor) statusTarget(ctx context.Context, r *spec.Rollout) (kube.Resource, polymorphichelpers.StatusViewer, *unstructured.Unstructured, error) {
	ns := spec.NamespaceOrDefault(r.Namespace)
	res, err := x.workload(ctx, r, r.Status, ns)
	if err != nil {
		return res, nil, nil, fmt.Errorf("status %w", err)
	}
	name := describe(res.Mapping, ns, res.Name)
	viewer, err := polymorphichelpers.StatusViewerFor(res.Mapping.GroupVersionKind.GroupKind())
	if err != nil {
		return res, nil, nil, fmt.Errorf("cannot follow the rollout of %s: %v", name, err)
	}
	live, err := x.Clients.Resource(res.Mapping, ns).Get(ctx, res.Name, metav1.GetOptions{})
	if k8serrors.IsNotFound(err) {
		return res, nil, nil, &runner.Pending{Object: runner.ObjectKey(res.Mapping.GroupVersionKind.Kind, ns, res.Name), What: name, Fallback: model.ActionWait,
			Err: fmt.Errorf("cannot follow the rollout of %s: not found", name)}
	} else if err != nil {
		return res, nil, nil, fmt.Errorf("cannot read %s: %w", name, x.Clients.Explain(err))
	}
	return res, viewer, live, nil
}

// Plan is Execute's path with the restart dry-run and no wait: restart
// (every apply; not counted as a change), or for status no-op when the
// rollout is complete, else wait.
func (x *RolloutExecutor) Plan(ctx context.Context, st *spec.Step, _ runner.PlanInput) (runner.Prediction, error) {
	var p runner.Prediction
	r := st.Rollout
	if r == nil {
		return p, wrongStep(st, spec.TypeRollout)
	}
	if r.Restart != "" {
		_, live, err := x.restart(ctx, r, kube.DryRunServer)
		if err != nil {
			return p, err
		}
		p.Action, p.Reason = model.ActionRestart, "a restart happens on every apply; not counted as a change"
		p.DiffNote = "a restart sets a new restartedAt annotation on the pod template"
		p.Objects = []runner.PlannedObject{{Action: model.ActionRestart, Kind: live.GetKind(), Namespace: live.GetNamespace(), Name: live.GetName(), Live: live}}
		return p, nil
	}
	_, viewer, live, err := x.statusTarget(ctx, r)
	if err != nil {
		return p, err
	}
	done, pending, err := RolloutComplete(viewer)([]*unstructured.Unstructured{live})
	switch {
	case err != nil:
		p.Action, p.Reason = model.ActionWait, err.Error()
	case done:
		p.Action, p.Reason = model.ActionNoop, "the rollout is complete"
	default:
		p.Action, p.Reason = model.ActionWait, pending
	}
	return p, nil
}

// RolloutComplete is kubectl rollout status's decision as a wait predicate:
// the viewer's verdict on every watch event; its errors (a Deployment past
// its progress deadline) end the wait.
func RolloutComplete(viewer polymorphichelpers.StatusViewer) readiness.Predicate {
	return func(objs []*unstructured.Unstructured) (bool, string, error) {
		if len(objs) == 0 {
			return false, "the object is gone", nil
		}
		msg, done, err := viewer.Status(objs[0], 0)
		if err != nil {
			return false, "", fmt.Errorf("rollout of %s failed: %v", kube.ObjectName(objs[0]), err)
		}
		return done, strings.TrimSpace(msg), nil
	}
}
