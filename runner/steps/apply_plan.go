package steps

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/spec"
)

// ActionUnknown is a plan prediction that cannot be made yet.
const ActionUnknown = "unknown"

// ApplyPlan is what an apply step would do, predicted without writing.
type ApplyPlan struct {
	// Skip is true when skipIf: exists holds (every object exists).
	Skip    bool
	Objects []ObjectPlan
}

// ObjectPlan is the prediction for one manifest object.
type ObjectPlan struct {
	Name string // "deployment.apps/web in namespace demo"
	// Action is create, configure, unchanged or unknown.
	Action string
	Reason string // why unknown
	// Live is the object in the cluster (nil when missing); Result is the
	// server's dry-run answer to the exact request apply would send (with
	// diff, or for server-side apply), else nil.
	Live   *unstructured.Unstructured
	Result *unstructured.Unstructured
}

// Plan predicts the step from the cluster as it is: for each object the
// request apply would send (kube.PlanApply), and with diff that request sent
// as a server-side dry-run. Server-side apply is always dry-run, since only
// the server can tell unchanged from configure. Kinds and namespaces that an
// earlier step would create are "unknown" with the reason, never an error.
func (x *Apply) Plan(ctx context.Context, a *spec.Apply, diff bool) (*ApplyPlan, error) {
	objs, err := kube.LoadManifests(ctx, x.BaseDir, a.Manifests)
	if err != nil {
		return nil, x.Redactor.Error(err)
	}
	ns := spec.NamespaceOrDefault(a.Namespace)
	plan := &ApplyPlan{}
	if a.SkipIf == "exists" {
		found, err := x.allExist(ctx, objs, ns)
		if err != nil {
			return nil, x.Redactor.Error(err)
		}
		if found != nil {
			plan.Skip = true
			return plan, nil
		}
	}
	nsExists := map[string]bool{}
	for _, obj := range objs {
		p, err := x.planObject(ctx, obj, a, ns, diff, nsExists)
		if err != nil {
			return nil, x.Redactor.Error(err)
		}
		plan.Objects = append(plan.Objects, p)
	}
	return plan, nil
}

func (x *Apply) planObject(ctx context.Context, obj *unstructured.Unstructured, a *spec.Apply, ns string, diff bool, nsExists map[string]bool) (ObjectPlan, error) {
	c := x.Clients
	m, err := c.MapObject(ctx, obj, ns)
	if err != nil {
		if kube.IsUnreachable(err) {
			return ObjectPlan{}, err
		}
		return ObjectPlan{Name: kube.ObjectName(obj), Action: ActionUnknown,
			Reason: fmt.Sprintf("the server does not know kind %s yet (an earlier step or manifest may install its CRD)", obj.GroupVersionKind().GroupKind())}, nil
	}
	p := ObjectPlan{Name: kube.ObjectName(obj)}
	if objNS := obj.GetNamespace(); objNS != "" {
		exists, err := x.namespaceExists(ctx, objNS, nsExists)
		if err != nil {
			return p, err
		}
		if !exists {
			// Nothing in a missing namespace exists: it will be created,
			// but the server cannot dry-run into it.
			p.Action = ActionUnknown
			p.Reason = fmt.Sprintf("namespace %s does not exist yet (an earlier step may create it)", objNS)
			if a.CreateNamespace && objNS == ns {
				p.Action, p.Reason = kube.ActionCreate, ""
			}
			return p, nil
		}
	}
	req, err := c.PlanApply(ctx, obj, m, a.ServerSide)
	if err != nil {
		return p, err
	}
	p.Action, p.Live = req.Action, req.Live
	if diff || a.ServerSide {
		res, err := c.Send(ctx, req, true)
		if err != nil {
			return p, err
		}
		p.Result = res
		if a.ServerSide && req.Live != nil && sameObject(req.Live, res) {
			p.Action = kube.ActionUnchanged
		}
	}
	return p, nil
}

func (x *Apply) namespaceExists(ctx context.Context, ns string, seen map[string]bool) (bool, error) {
	if exists, ok := seen[ns]; ok {
		return exists, nil
	}
	_, err := x.Clients.Typed.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	switch {
	case err == nil:
		seen[ns] = true
	case apierrors.IsNotFound(err):
		seen[ns] = false
	default:
		return false, fmt.Errorf("cannot read namespace %s: %w", ns, x.Clients.Explain(err))
	}
	return seen[ns], nil
}
