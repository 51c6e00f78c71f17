package steps

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/spec"
)

// SkipReasonExists is the skip reason of apply's skipIf: exists.
const SkipReasonExists = "every manifest object already exists"

// ApplyExecutor is kubectl apply through the dynamic client: create what is
// missing, patch what differs (client-side three-way patch, or server-side
// apply), send nothing for what already matches.
type ApplyExecutor struct{ Env }

// NewApplyExecutor returns the apply executor.
func NewApplyExecutor(env Env) *ApplyExecutor { return &ApplyExecutor{env} }

// Execute applies the step's manifests, then waits for waitFor.
func (x *ApplyExecutor) Execute(ctx context.Context, st *spec.Step) (runner.Outcome, error) {
	if st.Apply == nil {
		return runner.Outcome{}, wrongStep(st, spec.TypeApply)
	}
	opts, err := kube.IgnoreOptions(st.Ignored)
	if err != nil {
		return runner.Outcome{}, fmt.Errorf("step %q: %w", st.Name, err)
	}
	out, err := x.run(ctx, st.Apply, opts)
	return x.finishStep(st, out, err)
}

func (x *ApplyExecutor) run(ctx context.Context, a *spec.Apply, opts kube.ChangeOptions) (runner.Outcome, error) {
	var out runner.Outcome
	start := time.Now()
	var cond *kube.Condition
	w, err := a.Condition()
	if err != nil {
		return out, fmt.Errorf("waitFor: %w", err)
	}
	if w != nil {
		c, err := kube.NewCondition(*w)
		if err != nil {
			return out, fmt.Errorf("waitFor: %w", err)
		}
		cond = &c
	}
	objs, err := kube.LoadManifests(ctx, x.BaseDir, a.Manifests, x.Redactor)
	if err != nil {
		return out, err
	}
	if len(objs) == 0 {
		out.Detail = "the manifests define no objects"
		out.Inventory = &model.Inventory{}
		return out, nil
	}
	c := x.Clients
	ns := spec.NamespaceOrDefault(a.Namespace)
	if a.CreateNamespace {
		wrote, err := c.EnsureNamespace(ctx, ns)
		if wrote {
			out.Writes++
			out.Changes = append(out.Changes, namespaceCreated(ns))
		}
		if err != nil {
			return out, err
		}
	}

	var applied []appliedObject
	if a.SkipIf == "exists" {
		if applied, err = x.allExist(ctx, objs, ns); err != nil {
			return out, err
		}
		if applied != nil {
			out.Skipped, out.SkipReason = true, SkipReasonExists
		}
	}
	if !out.Skipped {
		out.Inventory = &model.Inventory{}
		counts := map[model.Did]int{}
		for _, obj := range objs {
			// Map each object only now: a CRD earlier in the list must be
			// applied (and Established) before its custom resources map.
			m, err := c.MapObject(ctx, obj, ns)
			if err != nil {
				return out, err
			}
			req, err := c.PlanApply(ctx, obj, m, a.ServerSide, opts)
			if err != nil {
				return out, err
			}
			res, err := c.Send(ctx, req, false)
			if err != nil {
				return out, err
			}
			if req.Action != model.ActionUnchanged {
				out.Writes++
			}
			did := req.Outcome(res).Done()
			counts[did]++
			out.Changes = append(out.Changes, change(did, m, obj.GetNamespace(), obj.GetName()))
			out.Inventory.Items = append(out.Inventory.Items, owned(m, res, req.Adopts()))
			applied = append(applied, appliedObject{obj: obj, mapping: m})
		}
		out.Detail = applyDetail(counts)
	}
	if cond != nil {
		if err := waitApplied(ctx, c, applied, *cond); err != nil {
			refs := make([]kube.ObjectRef, len(applied))
			for i, o := range applied {
				refs[i] = kube.ObjectRef{GVK: o.mapping.GroupVersionKind, Namespace: o.obj.GetNamespace(), Name: o.obj.GetName()}
			}
			x.diagnose(ctx, start, &out, err, refs)
			return out, err
		}
		out.Detail = joinDetail(out.Detail, fmt.Sprintf("%s met on %s", cond, plural(len(applied), "object", "objects")))
	}
	return out, nil
}

type appliedObject struct {
	obj     *unstructured.Unstructured
	mapping *meta.RESTMapping
}

// allExist returns the mapped objects when every one exists, nil otherwise.
// A kind the server does not know yet means its object cannot exist.
func (x *ApplyExecutor) allExist(ctx context.Context, objs []*unstructured.Unstructured, ns string) ([]appliedObject, error) {
	c := x.Clients
	var found []appliedObject
	for _, obj := range objs {
		m, err := c.MapObject(ctx, obj, ns)
		if err != nil {
			if kube.IsUnreachable(err) {
				return nil, err
			}
			return nil, nil
		}
		_, _, err = c.Live(ctx, m, obj.GetNamespace(), obj.GetName())
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", kube.ObjectName(obj), c.Explain(err))
		}
		found = append(found, appliedObject{obj: obj, mapping: m})
	}
	return found, nil
}

func applyDetail(counts map[model.Did]int) string {
	var parts []string
	total := 0
	for _, did := range []model.Did{model.DidCreate, model.DidConfigure, model.DidUnchanged} {
		if n := counts[did]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", did, n))
			total += n
		}
	}
	return strings.Join(parts, ", ") + " " + map[bool]string{true: "object", false: "objects"}[total == 1]
}

func joinDetail(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// waitApplied waits for each applied object in turn; they progress in the
// cluster concurrently, so the total is the slowest one's time.
func waitApplied(ctx context.Context, c *kube.Clients, objs []appliedObject, cond kube.Condition) error {
	for _, o := range objs {
		t := kube.Target{Mapping: o.mapping, Namespace: o.obj.GetNamespace(), Name: o.obj.GetName()}
		if err := kube.WaitFor(ctx, c, t, cond.String(), cond.Predicate()); err != nil {
			return fmt.Errorf("waitFor: %w", err)
		}
	}
	return nil
}
