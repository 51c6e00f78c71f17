package helmstep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	rel "helm.sh/helm/v4/pkg/release/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/chartsource"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/words"
)

// Under onImmutable: recreate (the step's, or an object's own annotation
// khook.io/on-immutable) an object whose immutable field the upgrade
// changes is replaced: deleted, then created by the upgrade. A deletion
// cannot be undone by a refusal after it, so nothing is deleted until
// every check of the upgrade has passed: Helm's server dry run of the
// whole upgrade (rendering, the CRD guard, the ownership check, Helm's
// validation) and the server's dry run of each object (admission, quota,
// RBAC), as plan runs them. Only then are the objects deleted and the
// upgrade run; should it still fail (a hook, a wait), what was deleted is
// created again from the rendered manifest.
//
// Which objects are replaced is decided in one place, so plan and apply
// cannot differ on it: replaceOf says it of one object, upgradeDrift of a
// rendered release. Plan predicts the replacements from upgradeDrift of
// its dry run (predictObjects); apply stops its real upgrade when
// replaceOf finds one in what Helm is about to send (immutableCheck), then
// deletes those upgradeDrift finds in the same dry run as plan's
// (upgradeReplacing).

// replaceOf is the one replace detection: it sends the server's dry run
// of desired (a rendered object with Helm's metadata) to ri, and replace
// is true when the server refuses it for an immutable field and the
// object is one khook replaces then (kube.Recreates: its own annotation,
// else onImmutable). Otherwise it returns the server's answer and error.
func replaceOf(ctx context.Context, ri dynamic.ResourceInterface, desired *unstructured.Unstructured, onImmutable string) (applied *unstructured.Unstructured, replace bool, err error) {
	applied, err = dryRunApply(ctx, ri, desired)
	if kube.ImmutableField(err) != "" && kube.Recreates(desired, onImmutable) {
		return nil, true, nil
	}
	return applied, false, err
}

// upgradeDrift compares a rendered install or upgrade (the manifest of
// its server dry run) with the cluster: Drift under the step's ignore
// rules and onImmutable, a custom resource of a CRD the plan applies
// first compared locally (Release.ChecksKind; apply has applied them).
// Plan and apply both call it on the same dry run of the same action.
func upgradeDrift(ctx context.Context, c *kube.Clients, r *Release, manifest string) ([]ObjectDiff, error) {
	return Drift(ctx, c, DriftInput{Release: r.Name, Namespace: r.Namespace, Manifest: manifest, Ignore: r.ignore, OnImmutable: r.step.OnImmutable, Planned: r.ChecksKind})
}

// replacements are the diffs that replace their object.
func replacements(diffs []ObjectDiff) []ObjectDiff {
	var out []ObjectDiff
	for _, d := range diffs {
		if d.Action == model.ActionReplace {
			out = append(out, d)
		}
	}
	return out
}

// immutableCheck is the post-renderer of a real upgrade, after the
// step's own post-renderers and leaveIgnored (it sees what Helm sends): it
// writes nothing, and stops the upgrade before Helm writes anything (a
// *replaceNeeded) when replaceOf says a rendered object is to be
// replaced. Objects khook would not replace cost nothing; the others a
// read and a dry run each.
type immutableCheck struct {
	ctx     context.Context
	clients *kube.Clients
	r       *Release
}

// replaceNeeded stops a real upgrade that must replace objects first
// (upgradeReplacing).
type replaceNeeded struct{ objects []string }

func (e *replaceNeeded) Error() string {
	return "the upgrade replaces " + strings.Join(e.objects, ", ") + " (internal: checked before anything is deleted)"
}

func (p immutableCheck) Run(rendered *bytes.Buffer) (*bytes.Buffer, error) {
	objs, err := chartsource.DecodeManifest(rendered.String())
	if err != nil {
		return nil, fmt.Errorf("cannot read the rendered manifest to find objects whose immutable fields change: %w", err)
	}
	onImmutable := p.r.step.OnImmutable
	var need []string
	for _, obj := range objs {
		if _, hook := obj.GetAnnotations()["helm.sh/hook"]; hook || !kube.Recreates(obj, onImmutable) {
			continue // Helm replaces a hook itself (before-hook-creation)
		}
		m, err := p.clients.MapObject(p.ctx, obj, p.r.Namespace)
		if err != nil {
			continue // a kind this chart brings: nothing of it exists yet
		}
		ri := p.clients.Resource(m, obj.GetNamespace())
		if _, err := ri.Get(p.ctx, obj.GetName(), metav1.GetOptions{}); apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", kube.ObjectName(obj), p.clients.Explain(err))
		}
		desired := obj.DeepCopy()
		addHelmMetadata(desired, p.r.Name, p.r.Namespace)
		if _, replace, _ := replaceOf(p.ctx, ri, desired, onImmutable); replace {
			need = append(need, kube.ObjectName(obj))
		}
	}
	if len(need) > 0 {
		return nil, &replaceNeeded{objects: need}
	}
	return rendered, nil
}

// replaced is an object upgradeReplacing deleted, and the object the
// rendered release makes of it.
type replaced struct {
	diff    ObjectDiff
	desired *unstructured.Unstructured
}

// upgradeReplacing runs the real install or upgrade of r; when it must
// replace objects first, it checks the whole upgrade, deletes them and
// runs it again, recreating them should it still fail. changes are the
// replacements, for the step's outputs; note says, for the detail, what
// was replaced.
func (e *Executor) upgradeReplacing(ctx context.Context, r *Release, do verdict) (res *rel.Release, changes []model.Change, note string, err error) {
	res, err = e.run(ctx, r, do, kube.DryRunNone)
	var need *replaceNeeded
	if err == nil || !errors.As(err, &need) {
		return res, nil, "", err
	}
	preview, err := e.run(ctx, r, do, kube.DryRunServer)
	if err != nil {
		return nil, nil, "", err
	}
	diffs, err := upgradeDrift(ctx, e.clients, r, preview.Manifest)
	if err != nil {
		var refused *kube.RefusedError
		if errors.As(err, &refused) {
			return nil, nil, "", failure(e.clients, r, refused)
		}
		return nil, nil, "", failure(e.clients, r, fmt.Errorf("nothing was replaced: %w", err))
	}
	objs, err := chartsource.DecodeManifest(preview.Manifest)
	if err != nil {
		return nil, nil, "", failure(e.clients, r, fmt.Errorf("cannot read the rendered manifest: %w", err))
	}
	var gone []replaced
	for _, d := range replacements(diffs) {
		desired := findObject(objs, d)
		if desired == nil {
			continue
		}
		m, err := e.clients.MapObject(ctx, desired, r.Namespace)
		if err == nil {
			err = replaceLive(ctx, e.clients, r, desired, m)
		}
		if err != nil {
			changes, err := recreate(ctx, e.clients, r, gone, failure(e.clients, r, err))
			return nil, changes, "", err
		}
		gone = append(gone, replaced{diff: d, desired: desired})
	}
	res, err = e.run(ctx, r, do, kube.DryRunNone)
	if err != nil {
		changes, err := recreate(ctx, e.clients, r, gone, err)
		return nil, changes, "", err
	}
	var names []string
	for _, g := range gone {
		names = append(names, g.diff.id())
		changes = append(changes, g.change(model.DidReplace))
	}
	if len(names) > 0 {
		note = "replaced " + strings.Join(names, ", ") + " (an immutable field changed; onImmutable: recreate)"
	}
	return res, changes, note, nil
}

// replaceLive deletes the live object desired names and awaits it gone.
func replaceLive(ctx context.Context, clients *kube.Clients, r *Release, desired *unstructured.Unstructured, m *meta.RESTMapping) error {
	live, err := clients.Resource(m, desired.GetNamespace()).Get(ctx, desired.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", kube.ObjectName(desired), clients.Explain(err))
	}
	r.sess.writes.Add(1)
	return clients.Replace(ctx, m, live)
}

// recreate creates again, from the rendered manifest, each deleted object
// the failed upgrade left absent, and adds to cause what it did. Each
// object is a change: replaced once it exists again, else deleted.
func recreate(ctx context.Context, clients *kube.Clients, r *Release, gone []replaced, cause error) ([]model.Change, error) {
	if len(gone) == 0 {
		return nil, cause
	}
	var done, back, failed []string
	var changes []model.Change
	for _, g := range gone {
		created, err := createAbsent(ctx, clients, r, g.desired)
		switch {
		case err != nil:
			failed = append(failed, fmt.Sprintf("%s (%v)", g.diff.id(), err))
			changes = append(changes, g.change(model.DidDelete))
			continue
		case created:
			done = append(done, g.diff.id())
		default:
			back = append(back, g.diff.id())
		}
		changes = append(changes, g.change(model.DidReplace))
	}
	msg := cause.Error()
	if len(done) > 0 {
		msg += "; " + strings.Join(done, ", ") + " had been deleted to replace " + words.Plural(len(done), "it", "them") + " (an immutable field changes) and " + words.Plural(len(done), "was", "were") + " recreated from the rendered manifest"
	}
	if len(back) > 0 {
		msg += "; " + strings.Join(back, ", ") + " had been deleted to replace " + words.Plural(len(back), "it", "them") + " (an immutable field changes) and the upgrade or its rollback created " + words.Plural(len(back), "it", "them") + " again"
	}
	if len(failed) > 0 {
		msg += "; deleted to replace and not recreated: " + strings.Join(failed, ", ") + ": run apply again to create " + words.Plural(len(failed), "it", "them")
	}
	return changes, &recreatedError{msg: msg, cause: cause}
}

// recreatedError is a failed upgrade after objects were replaced.
type recreatedError struct {
	msg   string
	cause error
}

func (e *recreatedError) Error() string { return e.msg }
func (e *recreatedError) Unwrap() error { return e.cause }

// createAbsent creates desired (with Helm's metadata, by Helm's field
// manager) unless it exists again (the upgrade, or its rollback, made it:
// created is false).
func createAbsent(ctx context.Context, clients *kube.Clients, r *Release, desired *unstructured.Unstructured) (created bool, err error) {
	m, err := clients.MapObject(ctx, desired, r.Namespace)
	if err != nil {
		return false, err
	}
	ri := clients.Resource(m, desired.GetNamespace())
	if _, err := ri.Get(ctx, desired.GetName(), metav1.GetOptions{}); err == nil {
		return false, nil
	} else if !apierrors.IsNotFound(err) {
		return false, clients.Explain(err)
	}
	obj := desired.DeepCopy()
	addHelmMetadata(obj, r.Name, r.Namespace)
	body, err := obj.MarshalJSON()
	if err != nil {
		return false, err
	}
	force := true
	_, err = ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: FieldManager, Force: &force})
	kube.InvalidateLiveOf(ctx, m, desired.GetNamespace())
	if err != nil {
		return false, clients.Explain(err)
	}
	r.sess.writes.Add(1)
	return true, nil
}

func (g replaced) change(did model.Did) model.Change {
	return model.Change{Action: did, Kind: g.diff.Kind, Namespace: g.diff.Namespace, Name: g.diff.Name}
}

// findObject is the rendered object d names.
func findObject(objs []*unstructured.Unstructured, d ObjectDiff) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == d.Kind && o.GetName() == d.Name && o.GroupVersionKind().Group == groupOf(d.APIVersion) &&
			(o.GetNamespace() == "" || o.GetNamespace() == d.Namespace) {
			return o.DeepCopy()
		}
	}
	return nil
}

func groupOf(apiVersion string) string {
	if g, _, ok := strings.Cut(apiVersion, "/"); ok {
		return g
	}
	return ""
}
