package steps

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/apischema"
	"github.com/khook/khook/runner/kube/manifest"
	"github.com/khook/khook/runner/kube/objdiff"
	"github.com/khook/khook/runner/kube/readiness"
	"github.com/khook/khook/runner/kube/wait"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/words"
)

// SkipReasonExists is the skip reason of apply's skipIf: exists.
const SkipReasonExists = "every manifest object already exists (skipIf: exists)"

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
	opts, err := objdiff.IgnoreOptions(st.Ignored)
	if err != nil {
		return runner.Outcome{}, fmt.Errorf("step %q: %w", st.Name, err)
	}
	out, err := x.run(ctx, st, opts)
	return x.finish(out, err)
}

func (x *ApplyExecutor) run(ctx context.Context, st *spec.Step, opts objdiff.Options) (runner.Outcome, error) {
	var out runner.Outcome
	a := st.Apply
	start := time.Now()
	var cond *readiness.Condition
	w, err := a.Condition()
	if err != nil {
		return out, fmt.Errorf("waitFor: %w", err)
	}
	if w != nil {
		c, err := readiness.NewCondition(*w)
		if err != nil {
			return out, fmt.Errorf("waitFor: %w", err)
		}
		cond = &c
	}
	s, err := x.apply(ctx, st, opts, kube.DryRunNone)
	out.Writes, out.Changes = s.writes, s.changes
	if err != nil || s.empty {
		if s.empty {
			out.Detail = "the manifests define no objects"
			out.Inventory = &model.Inventory{}
		}
		return out, err
	}
	if s.skipped {
		out.Skipped, out.SkipReason = true, SkipReasonExists
	} else {
		out.Inventory = &model.Inventory{}
		counts := map[model.Did]int{}
		for _, c := range s.changes { // the namespace is an object the step created
			counts[c.Action]++
		}
		for _, o := range s.objects {
			did := o.action.Done()
			counts[did]++
			out.Changes = append(out.Changes, change(did, o.mapping, o.obj.GetNamespace(), o.obj.GetName()))
			out.Inventory.Items = append(out.Inventory.Items, owned(o.mapping, o.answer, o.req.Adopts()))
		}
		out.Detail = applyDetail(counts)
		for _, o := range s.objects {
			if o.action == model.ActionReplace && o.loses != "" {
				out.Detail = joinDetail(out.Detail, fmt.Sprintf("replaced %s %s: %s", o.obj.GetKind(), nsName(o.obj.GetNamespace(), o.obj.GetName()), o.loses))
			}
		}
	}
	if cond != nil {
		applied := s.objects
		if err := waitApplied(ctx, x.Clients, applied, *cond); err != nil {
			refs := make([]wait.ObjectRef, len(applied))
			for i, o := range applied {
				refs[i] = wait.ObjectRef{GVK: o.mapping.GroupVersionKind, Namespace: o.obj.GetNamespace(), Name: o.obj.GetName()}
			}
			x.diagnose(ctx, start, &out, err, refs)
			return out, err
		}
		out.Detail = joinDetail(out.Detail, fmt.Sprintf("%s met on %s", cond, words.Count(len(applied), "object", "objects")))
	}
	return out, nil
}

// applied is what the one path of an apply step did, or (dry) would do.
type applied struct {
	empty   bool // the manifests define no objects
	skipped bool // skipIf: exists holds
	objects []appliedObject
	writes  int
	changes []model.Change // createNamespace's
}

// apply is the apply step's one path, for Execute and (dry) for Plan:
// createNamespace, skipIf: exists, then per object the request apply sends
// (kube.PlanApply), sent for real or as a server-side dry run. A dry run
// cannot create a namespace or register a kind: objects whose namespace or
// kind this same step brings are predicted as created, unsent.
func (x *ApplyExecutor) apply(ctx context.Context, st *spec.Step, opts objdiff.Options, dry kube.DryRunStrategy) (applied, error) {
	a := st.Apply
	objs, err := manifest.LoadManifests(ctx, x.BaseDir, a.Manifests, x.Redactor)
	if err != nil {
		return applied{}, err
	}
	if len(objs) == 0 {
		return applied{empty: true}, nil
	}
	p := &applyPass{x: x, st: st, ns: spec.NamespaceOrDefault(a.Namespace), opts: opts, dry: dry, own: map[string]bool{}, exists: map[string]bool{}}
	if a.CreateNamespace {
		// The namespace apply would create is one of the step's changes,
		// dry run or not.
		created, wrote, err := createNamespace(ctx, x.Clients, p.ns, dry)
		if wrote {
			p.s.writes++
		}
		if created {
			p.s.changes = append(p.s.changes, namespaceCreated(p.ns))
		}
		if err != nil {
			return p.s, err
		}
		p.own[p.ns], p.exists[p.ns] = true, !created
	}
	if a.SkipIf == "exists" {
		found, err := x.allExist(ctx, objs, p.ns)
		if err != nil {
			return p.s, err
		}
		if found != nil {
			p.s.skipped, p.s.objects = true, found
			return p.s, nil
		}
	}
	if dry.IsDryRun() {
		for _, obj := range objs {
			if obj.GetKind() == "Namespace" && obj.GetAPIVersion() == "v1" {
				p.own[obj.GetName()] = true
			}
			if kind, group, _ := kube.CRDNames(obj); kind != "" {
				p.own[runner.Qualified(kind, group)] = true
			}
		}
	}
	for _, obj := range objs {
		if err := p.object(ctx, obj); err != nil {
			return p.s, err
		}
	}
	return p.s, nil
}

// applyPass is one pass of the apply path over a step's objects.
type applyPass struct {
	x      *ApplyExecutor
	st     *spec.Step
	ns     string
	opts   objdiff.Options
	dry    kube.DryRunStrategy
	own    map[string]bool // namespaces and kinds (Kind.group) this step brings
	exists map[string]bool // dry: whether a namespace in own exists, read once
	s      applied
}

// object sends one object's request (or, dry, predicts an object whose
// namespace or kind the step brings as created), replacing it under
// onImmutable: recreate.
func (p *applyPass) object(ctx context.Context, obj *unstructured.Unstructured) error {
	c, st := p.x.Clients, p.st
	// Map each object only now: a CRD earlier in the list must be
	// applied (and Established) before its custom resources map.
	m, err := c.MapObject(ctx, obj, p.ns)
	if err != nil {
		gvk := obj.GroupVersionKind()
		switch {
		case kube.IsUnreachable(err) || apischema.IsRemovedAPI(err):
			return err
		case p.dry.IsDryRun() && p.own[runner.Qualified(gvk.Kind, gvk.Group)]:
			p.s.objects = append(p.s.objects, unsent(obj, p.ns))
			return nil
		}
		return runner.PendingKind(gvk.Kind, gvk.Group, err)
	}
	if objNS := obj.GetNamespace(); p.dry.IsDryRun() && p.own[objNS] {
		ok, seen := p.exists[objNS]
		if !seen {
			if ok, err = namespaceExists(ctx, c, objNS); err != nil {
				return err
			}
			p.exists[objNS] = ok
		}
		if !ok {
			p.s.objects = append(p.s.objects, unsent(obj, p.ns))
			return nil
		}
	}
	req, err := c.PlanApply(ctx, obj, m, st.Apply.ServerSide, p.opts)
	if err != nil {
		return err
	}
	res, err := c.Send(ctx, req, p.dry)
	var refused *kube.RefusedError
	if errors.As(err, &refused) && refused.Field != "" && req.Live != nil && st.OnImmutable == spec.OnImmutableRecreate {
		if err := c.ReplaceHeldBack(ctx, obj, req.Live); err != nil {
			return err
		}
	}
	if errors.As(err, &refused) && refused.Field != "" && req.Live != nil && kube.Recreates(obj, st.OnImmutable) {
		o, err := p.x.replace(ctx, obj, req, p.opts, p.dry)
		if err != nil {
			return err
		}
		if !p.dry.IsDryRun() {
			p.s.writes += 2
		}
		p.s.objects = append(p.s.objects, o)
		return nil
	}
	if err != nil {
		var missing *kube.MissingNamespaceError
		if errors.As(err, &missing) {
			if missing.Namespace == p.ns && !st.Apply.CreateNamespace {
				// createNamespace creates only the step's namespace.
				err = fmt.Errorf("%w or set createNamespace: true", err)
			}
			return runner.PendingNamespace(missing.Namespace, err)
		}
		return err
	}
	if req.Action != model.ActionUnchanged {
		p.s.writes++
	}
	p.s.objects = append(p.s.objects, appliedObject{obj: obj, mapping: m, req: req, answer: res, action: req.Outcome(res)})
	return nil
}

// replace is onImmutable: recreate for an object whose immutable field
// changes: dry, the prediction (replace, its diff from the live object to
// the manifest); else delete it (foreground), wait until it is gone and
// create it, within the step's timeout (ctx).
func (x *ApplyExecutor) replace(ctx context.Context, obj *unstructured.Unstructured, req *kube.ApplyRequest, opts objdiff.Options, dry kube.DryRunStrategy) (appliedObject, error) {
	o := appliedObject{obj: obj, mapping: req.Mapping, req: req, action: model.ActionReplace}
	c := x.Clients
	loses, err := c.ReplaceLoses(ctx, req.Live)
	if err != nil {
		return o, err
	}
	o.loses = loses
	if dry.IsDryRun() {
		return o, nil
	}
	if err := c.Replace(ctx, req.Mapping, req.Live); err != nil {
		return o, err
	}
	fresh, err := c.PlanApply(ctx, obj, req.Mapping, req.ServerSide, opts)
	if err != nil {
		return o, err
	}
	o.answer, err = c.Send(ctx, fresh, kube.DryRunNone)
	o.req = fresh
	return o, err
}

// unsent is an object a dry run cannot send yet: it will be created.
func unsent(obj *unstructured.Unstructured, ns string) appliedObject {
	if obj.GetNamespace() == "" {
		obj.SetNamespace(ns)
	}
	return appliedObject{obj: obj, action: model.ActionCreate}
}

// createNamespace is createNamespace: true under the strategy: created
// says the step creates the namespace (a change), wrote that it did (for
// real; a dry run only reads whether it exists).
func createNamespace(ctx context.Context, c *kube.Clients, ns string, dry kube.DryRunStrategy) (created, wrote bool, err error) {
	if dry.IsDryRun() {
		ok, err := namespaceExists(ctx, c, ns)
		return err == nil && !ok, false, err
	}
	wrote, err = c.EnsureNamespace(ctx, ns)
	return wrote, wrote, err
}

// namespaceExists reads a namespace; a missing one is (false, nil).
func namespaceExists(ctx context.Context, c *kube.Clients, ns string) (bool, error) {
	_, _, err := c.Live(ctx, kube.NamespaceMapping, "", ns)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("cannot read namespace %s: %w", ns, c.Explain(err))
	}
	return true, nil
}

// Plan is Execute's path with a server-side dry run and no wait: per
// object create, configure or unchanged as apply would report it, with the
// server's answer to diff; skip when skipIf: exists holds.
func (x *ApplyExecutor) Plan(ctx context.Context, st *spec.Step, _ runner.PlanInput) (runner.Prediction, error) {
	var p runner.Prediction
	if st.Apply == nil {
		return p, wrongStep(st, spec.TypeApply)
	}
	opts, err := objdiff.IgnoreOptions(st.Ignored)
	if err != nil {
		return p, fmt.Errorf("step %q: %w", st.Name, err)
	}
	s, err := x.apply(ctx, st, opts, kube.DryRunServer)
	if err != nil {
		return p, err
	}
	if s.skipped {
		p.Action, p.Reason = model.ActionSkip, SkipReasonExists
		return p, nil
	}
	var actions []model.Action
	for _, c := range s.changes {
		p.Objects = append(p.Objects, namespacePlanned(c.Name))
		actions = append(actions, model.ActionCreate)
	}
	for _, o := range s.objects {
		po := runner.PlannedObject{Action: o.action, Kind: o.obj.GetKind(), Namespace: o.obj.GetNamespace(), Name: o.obj.GetName(), Desired: o.obj}
		if o.req != nil {
			po.Desired, po.Live = o.answer, o.req.Live
			if o.action == model.ActionUnchanged || o.answer == nil {
				po.Desired = o.req.Desired
			}
		}
		if o.action == model.ActionReplace {
			p.Reason = joinDetail(p.Reason, fmt.Sprintf("replaces %s %s (an immutable field changes; onImmutable: recreate)", po.Kind, nsName(po.Namespace, po.Name)))
			if o.loses != "" {
				p.Reason += ": " + o.loses
				po.Reason = o.loses
			}
		}
		p.Objects = append(p.Objects, po)
		actions = append(actions, o.action)
	}
	p.Action = stepAction(actions)
	return p, nil
}

// stepAction folds object actions into the step's: configure when any
// object changes, create when only new ones appear, else unchanged.
func stepAction(objects []model.Action) model.Action {
	action := model.ActionUnchanged
	for _, a := range objects {
		switch a {
		case model.ActionConfigure, model.ActionReplace:
			return model.ActionConfigure
		case model.ActionCreate:
			action = model.ActionCreate
		}
	}
	return action
}

type appliedObject struct {
	obj     *unstructured.Unstructured
	mapping *meta.RESTMapping // nil: not sent (dry, see unsent)
	req     *kube.ApplyRequest
	answer  *unstructured.Unstructured
	action  model.Action
	loses   string // what replacing it loses: its claims' data, its load balancer address
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
	for _, did := range []model.Did{model.DidCreate, model.DidConfigure, model.DidReplace, model.DidUnchanged} {
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
func waitApplied(ctx context.Context, c *kube.Clients, objs []appliedObject, cond readiness.Condition) error {
	for _, o := range objs {
		t := wait.Target{Mapping: o.mapping, Namespace: o.obj.GetNamespace(), Name: o.obj.GetName()}
		if err := wait.For(ctx, c, t, cond.String(), cond.Predicate()); err != nil {
			return fmt.Errorf("waitFor: %w", err)
		}
	}
	return nil
}

func nsName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}
