package plan

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/kubectl/pkg/polymorphichelpers"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/steps"
	"github.com/khook/khook/spec"
)

// patch predicts configure or unchanged by the patch executor's own
// decision (steps.PatchOutcome: the patch applied to the live object); a
// missing target or kind is unknown.
func (pr *probe) patch(ctx context.Context) error {
	p := pr.step.Patch
	c := pr.Clients
	pt, err := steps.PatchType(p.Type)
	if err != nil {
		return err
	}
	body, err := json.Marshal(p.Patch)
	if err != nil {
		return fmt.Errorf("cannot encode the patch body: %v", err)
	}
	res, err := c.ResolveObject(ctx, "target", p)
	if err != nil {
		if kube.IsUnreachable(err) {
			return err
		}
		pr.unknown(err.Error())
		return nil
	}
	ns := spec.NamespaceOrDefault(p.Namespace)
	if !res.Namespaced() {
		ns = ""
	}
	r := c.Resource(res.Mapping, ns)
	live, err := r.Get(ctx, res.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		pr.unknown(pr.producers.objectReason(res.Mapping.GroupVersionKind.Kind, ns, res.Name,
			fmt.Sprintf("patch target %s/%s %s", kube.KindName(res.Mapping), res.Name, inNS(ns))))
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot read %s/%s: %w", kube.KindName(res.Mapping), res.Name, c.Explain(err))
	}
	after, changed := steps.PatchOutcome(live, pt, body)
	pr.out.Objects = []model.ObjectPlan{pr.digested(objectPlan(model.ActionConfigure, live), after, live)}
	if after == nil && pr.Digest != nil {
		// Only the server can apply this patch: the patch is what is sent.
		pr.out.Objects[0].Desired = pr.Digest.Sum("patch", append([]byte(string(pt)+"\x00"), body...))
	}
	if !changed {
		pr.out.Action, pr.out.Reason = model.ActionUnchanged, "the patch is already applied"
		pr.out.Objects[0].Action = model.ActionUnchanged
		pr.setDiff(nil)
		return nil
	}
	pr.out.Action = model.ActionConfigure
	if pr.Diff {
		if after == nil {
			// Only the server can apply this patch: its dry run is the diff.
			dry, err := r.Patch(ctx, res.Name, pt, body, metav1.PatchOptions{FieldManager: kube.FieldManager, FieldValidation: kube.FieldValidation, DryRun: []string{metav1.DryRunAll}})
			if err != nil {
				if kube.IsUnreachable(err) {
					return c.Explain(err)
				}
				pr.setDiff([]string{fmt.Sprintf("# %s: the server-side dry run failed: %s\n", title(live), kube.APIMessage(err))})
				return nil
			}
			after = dry
		}
		d, err := objectDiff(title(live), live, after, kube.ChangeOptions{}, pr.Redactor)
		if err != nil {
			return err
		}
		pr.setDiff([]string{d})
	}
	return nil
}

func inNS(ns string) string {
	if ns == "" {
		return "(cluster-scoped)"
	}
	return "in namespace " + ns
}

// wait predicts no-op (the condition already holds) or wait.
func (pr *probe) wait(ctx context.Context) error {
	w := pr.step.Wait
	c := pr.Clients
	// The wait executor's own target and condition.
	t, cond, err := steps.WaitTarget(ctx, c, w)
	if err != nil {
		if kube.IsUnreachable(err) {
			return err
		}
		pr.out.Action, pr.out.Reason = model.ActionWait, err.Error()
		pr.noDiff()
		return nil
	}
	objs, err := listTarget(ctx, c, t)
	if err != nil {
		return err
	}
	if done, pending := cond.Evaluate(objs); done {
		pr.out.Action, pr.out.Reason = model.ActionNoop, fmt.Sprintf("%s already holds on %s", cond, t)
	} else {
		pr.out.Action, pr.out.Reason = model.ActionWait, pending
	}
	pr.noDiff()
	return nil
}

// rollout predicts restart (always: it is imperative), or for status no-op
// when the rollout is complete, else wait.
func (pr *probe) rollout(ctx context.Context) error {
	r := pr.step.Rollout
	c := pr.Clients
	ns := spec.NamespaceOrDefault(r.Namespace)
	res, err := c.ResolveObject(ctx, "", r)
	if err != nil {
		if kube.IsUnreachable(err) {
			return err
		}
		pr.unknown(err.Error())
		return nil
	}
	live, err := c.Resource(res.Mapping, ns).Get(ctx, res.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if r.Restart != "" {
			pr.unknown(pr.producers.objectReason(res.Mapping.GroupVersionKind.Kind, ns, res.Name,
				fmt.Sprintf("%s/%s in namespace %s", kube.KindName(res.Mapping), res.Name, ns)))
		} else {
			pr.out.Action, pr.out.Reason = model.ActionWait, fmt.Sprintf("%s/%s in namespace %s does not exist yet", kube.KindName(res.Mapping), res.Name, ns)
			pr.noDiff()
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot read %s/%s: %w", kube.KindName(res.Mapping), res.Name, c.Explain(err))
	}
	if r.Restart != "" {
		pr.out.Action, pr.out.Objects = model.ActionRestart, []model.ObjectPlan{pr.digested(objectPlan(model.ActionRestart, live), nil, live)}
		pr.out.Reason = "a restart happens on every apply; not counted as a change"
		if pr.Diff {
			pr.out.DiffNote = unavailable("a restart sets a new restartedAt annotation on the pod template")
		}
		return nil
	}
	viewer, err := polymorphichelpers.StatusViewerFor(res.Mapping.GroupVersionKind.GroupKind())
	if err != nil {
		pr.unknown(fmt.Sprintf("cannot follow the rollout of %s: %v", kube.KindName(res.Mapping), err))
		return nil
	}
	done, pending, err := steps.RolloutComplete(viewer)([]*unstructured.Unstructured{live})
	switch {
	case err != nil:
		pr.out.Action, pr.out.Reason = model.ActionWait, err.Error()
	case done:
		pr.out.Action, pr.out.Reason = model.ActionNoop, "the rollout is complete"
	default:
		pr.out.Action, pr.out.Reason = model.ActionWait, pending
	}
	pr.noDiff()
	return nil
}

// job predicts run, or skip when skipIf: succeeded holds. A job that runs
// again is not counted as a change.
func (pr *probe) job(ctx context.Context) error {
	j := pr.step.Job
	ns := spec.NamespaceOrDefault(j.Namespace)
	pr.out.Action = model.ActionRun
	pr.out.Reason = fmt.Sprintf("job %s/%s runs on every apply (the previous run's Job is replaced); not counted as a change", ns, pr.step.Name)
	pr.noDiff()
	if j.SkipIf != "succeeded" {
		return nil
	}
	live, err := pr.Clients.Typed.BatchV1().Jobs(ns).Get(ctx, pr.step.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot read job %s/%s: %w", ns, pr.step.Name, pr.Clients.Explain(err))
	}
	if live.Labels[steps.ManagedByLabel] == steps.ManagedByValue && steps.JobSucceeded(ctx, pr.Clients, live) {
		pr.out.Action, pr.out.Reason = model.ActionSkip, fmt.Sprintf("job %s/%s already succeeded (skipIf: succeeded)", ns, pr.step.Name)
	}
	return nil
}

// noDiff notes "no changes" for step types that have no diff of their own.
func (pr *probe) noDiff() {
	if pr.Diff {
		pr.out.DiffNote = NoteNoChanges
	}
}

// listTarget lists the objects a target selects.
func listTarget(ctx context.Context, c *kube.Clients, t kube.Target) ([]*unstructured.Unstructured, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	list, err := t.ListWatch(c).ListWithContextFunc(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("cannot list %s: %w", t, c.Explain(err))
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, it := range items {
		if u, ok := it.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
	}
	return out, nil
}
