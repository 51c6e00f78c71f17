package plan

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/report"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/steps"
	"github.com/khook/khook/spec"
)

// apply predicts create / configure / unchanged / skip per object through
// the exact request apply would send (kube.PlanApply), dry-run on the server
// for --diff and for server-side apply.
func (pr *probe) apply(ctx context.Context) error {
	a := pr.step.Apply
	c := pr.Clients
	objs, err := kube.LoadManifests(ctx, pr.spec.BaseDir, a.Manifests, pr.Redactor)
	if err != nil {
		return err
	}
	ns := spec.NamespaceOrDefault(a.Namespace)
	ownNS := map[string]bool{} // namespaces this step itself creates
	if a.CreateNamespace {
		ownNS[ns] = true
	}
	ownKinds := map[string]bool{}
	for _, obj := range objs {
		if obj.GetKind() == "Namespace" && obj.GetAPIVersion() == "v1" {
			ownNS[obj.GetName()] = true
		}
		if kube.IsCRD(obj) {
			kind, _, _ := unstructured.NestedString(obj.Object, "spec", "names", "kind")
			group, _, _ := unstructured.NestedString(obj.Object, "spec", "group")
			ownKinds[qualified(kind, group)] = true
		}
	}
	nsCache := map[string]bool{}
	var objects []report.ObjectPlan
	var diffs []string
	allExist := true
	for _, obj := range objs {
		m, err := c.MapObject(ctx, obj, ns)
		if err != nil {
			if kube.IsUnreachable(err) || kube.IsRemovedAPI(err) {
				return err
			}
			gvk := obj.GroupVersionKind()
			if ownKinds[qualified(gvk.Kind, gvk.Group)] {
				// Registered by a CRD earlier in this same step.
				if obj.GetNamespace() == "" {
					obj.SetNamespace(ns)
				}
				allExist = false
				objects = append(objects, pr.digested(objectPlan(report.ActionCreate, obj), obj, nil))
				diffs = append(diffs, pr.createDiff(obj))
				continue
			}
			pr.unknown(pr.producers.kindReason(gvk.Kind, gvk.Group))
			return nil
		}
		if objNS := obj.GetNamespace(); objNS != "" {
			exists, ok := nsCache[objNS]
			if !ok {
				if exists, err = namespaceExists(ctx, c, objNS); err != nil {
					return err
				}
				nsCache[objNS] = exists
			}
			if !exists {
				if !ownNS[objNS] {
					pr.unknown(pr.producers.namespaceReason(objNS))
					return nil
				}
				allExist = false
				objects = append(objects, pr.digested(objectPlan(report.ActionCreate, obj), obj, nil))
				diffs = append(diffs, pr.createDiff(obj))
				continue
			}
		}
		action, diff, req, err := pr.applyOne(ctx, obj, m, a.ServerSide)
		var refused *kube.CRDRefusedError
		if errors.As(err, &refused) {
			return pr.fail(err) // apply's own decision refuses it
		}
		if err != nil {
			return err
		}
		if action == report.ActionCreate {
			allExist = false
		}
		objects = append(objects, pr.digested(objectPlan(action, obj), req.Desired, req.Live))
		diffs = append(diffs, diff)
	}
	if a.SkipIf == "exists" && allExist {
		pr.out.Action, pr.out.Reason = report.ActionSkip, "every manifest object exists (skipIf: exists)"
		pr.out.Objects = objects
		if pr.Diff {
			pr.out.DiffNote = NoteNoChanges
		}
		return nil
	}
	pr.out.Objects = objects
	pr.out.Action = stepAction(objects)
	pr.setDiff(diffs)
	return nil
}

// applyOne predicts one existing-namespace object.
func (pr *probe) applyOne(ctx context.Context, obj *unstructured.Unstructured, m *meta.RESTMapping, serverSide bool) (report.Action, string, *kube.ApplyRequest, error) {
	c := pr.Clients
	req, err := c.PlanApply(ctx, obj, m, serverSide, pr.changeOptions())
	if err != nil {
		return "", "", nil, err
	}
	action := req.Action
	if action == report.ActionUnchanged && !serverSide {
		return action, "", req, nil
	}
	if !pr.Diff && !serverSide {
		return action, "", req, nil
	}
	result, err := c.Send(ctx, req, true)
	if err != nil {
		if kube.IsUnreachable(err) || kube.IsFieldError(err) {
			return "", "", nil, err // a field apply would refuse fails the plan
		}
		// Apply would fail on this object; the plan says so in the diff.
		return action, fmt.Sprintf("# %s: the server-side dry run failed: %s\n", title(obj), kube.APIMessage(err)), req, nil
	}
	// As the executor reports it (ApplyRequest.Outcome): server-side apply
	// is unchanged when the server's answer is the live object.
	if serverSide && req.Outcome(result) == report.ActionUnchanged {
		return report.ActionUnchanged, "", req, nil
	}
	if !pr.Diff {
		return action, "", req, nil
	}
	diff, err := objectDiff(title(result), req.Live, result, pr.changeOptions(), pr.Redactor)
	return action, diff, req, err
}

// createDiff is the diff of an object that cannot be dry-run yet (its
// namespace or kind comes with this step): the manifest itself.
func (pr *probe) createDiff(obj *unstructured.Unstructured) string {
	if !pr.Diff {
		return ""
	}
	d, err := objectDiff(title(obj), nil, obj, pr.changeOptions(), pr.Redactor)
	if err != nil {
		return "# " + err.Error() + "\n"
	}
	return d
}

func objectPlan(action report.Action, obj *unstructured.Unstructured) report.ObjectPlan {
	return report.ObjectPlan{Action: action, Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// stepAction folds object actions into the step's: configure when any
// object changes, create when only new ones appear, else unchanged.
func stepAction(objects []report.ObjectPlan) report.Action {
	action := report.ActionUnchanged
	for _, o := range objects {
		switch o.Action {
		case report.ActionConfigure:
			return report.ActionConfigure
		case report.ActionCreate:
			action = report.ActionCreate
		}
	}
	return action
}

// delete predicts delete (count) or no-op.
func (pr *probe) delete(ctx context.Context) error {
	d := pr.step.Delete
	c := pr.Clients
	var present []report.ObjectPlan
	switch {
	case d.Release != "":
		r, err := pr.Helm.OpenRelease(d.Release, spec.NamespaceOrDefault(d.Namespace))
		if err != nil {
			return err
		}
		if last := r.Last; r.Installed() {
			present = append(present, report.ObjectPlan{Action: report.ActionDelete, Kind: "HelmRelease", Namespace: spec.NamespaceOrDefault(d.Namespace), Name: d.Release,
				Live: pr.releaseLive(last)})
		}
	case len(d.Manifests) > 0:
		objs, err := kube.LoadManifests(ctx, pr.spec.BaseDir, d.Manifests, pr.Redactor)
		if err != nil {
			return err
		}
		for _, obj := range objs {
			m, err := c.MapObject(ctx, obj, spec.NamespaceOrDefault(d.Namespace))
			if err != nil {
				if kube.IsUnreachable(err) {
					return err
				}
				continue // an unserved kind has no objects
			}
			live, _, err := c.Live(ctx, m, obj.GetNamespace(), obj.GetName())
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return fmt.Errorf("cannot read %s: %w", kube.ObjectName(obj), c.Explain(err))
			}
			op, err := pr.deleteDecision(ctx, d, obj, live)
			if err != nil {
				return err
			}
			present = append(present, op)
		}
	default:
		res, err := c.ResolveObject(ctx, "resource", d)
		if err != nil {
			if kube.IsUnreachable(err) {
				return err
			}
			pr.unknown(err.Error())
			return nil
		}
		t := kube.Target{Mapping: res.Mapping, Name: res.Name, LabelSelector: d.Selector, FieldSelector: d.FieldSelector}
		if !d.AllNamespaces {
			t.Namespace = spec.NamespaceOrDefault(d.Namespace)
		}
		objs, err := listTarget(ctx, c, t)
		if err != nil {
			return err
		}
		for _, obj := range objs {
			op, err := pr.deleteDecision(ctx, d, obj, obj)
			if err != nil {
				return err
			}
			present = append(present, op)
		}
	}
	if len(present) == 0 {
		pr.out.Action, pr.out.Reason = report.ActionNoop, "nothing to delete: already absent"
		if pr.Diff {
			pr.out.DiffNote = NoteNoChanges
		}
		return nil
	}
	pr.out.Action, pr.out.Objects = report.ActionKeep, present
	deleted := 0
	var with []string
	for _, o := range present {
		if o.Action == report.ActionDelete {
			deleted++
			pr.out.Action = report.ActionDelete
			if o.With != "" {
				with = append(with, "CRD "+o.Name+" and "+o.With)
			}
		}
	}
	pr.out.Reason = fmt.Sprintf("%d %s to delete", deleted, pluralWord(deleted, "object", "objects"))
	if kept := len(present) - deleted; kept > 0 {
		pr.out.Reason += fmt.Sprintf(", %d kept", kept)
	}
	if len(with) > 0 {
		pr.out.Reason += "; deletes " + strings.Join(with, ", ")
	}
	if pr.Diff {
		var names []string
		for _, o := range present {
			names = append(names, "- "+o.Kind+" "+nsName(o.Namespace, o.Name))
		}
		pr.out.Diff = "# deleted:\n" + strings.Join(names, "\n") + "\n"
	}
	return nil
}

// deleteDecision is the delete executor's own decision on one live object
// (steps.DeleteDecision): delete, or keep a CRD that holds data.
func (pr *probe) deleteDecision(ctx context.Context, d *spec.Delete, obj, live *unstructured.Unstructured) (report.ObjectPlan, error) {
	action, reason, with, err := steps.DeleteDecision(ctx, pr.Clients, d, live)
	if err != nil {
		return report.ObjectPlan{}, err
	}
	op := pr.digested(objectPlan(action, obj), nil, live)
	op.Reason, op.With = reason, with
	if action == report.ActionKeep {
		kube.Warn(ctx, kube.ObjectName(live), "the delete step keeps it: "+reason)
	}
	return op, nil
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func nsName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}
