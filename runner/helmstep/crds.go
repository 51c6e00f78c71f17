package helmstep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	helmkube "helm.sh/helm/v4/pkg/kube"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/chartsource"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/apischema"
	"github.com/khook/khook/runner/kube/manifest"
	"github.com/khook/khook/runner/kube/objdiff"
	"github.com/khook/khook/spec"
)

// The CRD lifecycle of a helm step (docs/charts.md, "CRDs"): the chart's
// crds/ are applied by khook, server-side with its field manager, before
// Helm renders (Helm itself only creates them, on install); every CRD
// change, from crds/ or templates, passes kube.CheckCRDChange before it is
// written; a CRD an upgrade drops is kept while custom resources of it
// exist, unless the step says deleteCRDs.

// crdSource is where a chart's CRD is read from.
type crdSource int

const (
	fromCRDsDir  crdSource = iota + 1 // a crds/ directory (the chart's or a subchart's): khook applies it before Helm renders
	fromTemplate                      // a template: Helm writes it with the release, crdGuard checks it first
)

// chartCRD is one CRD of a chart and the file it is read from.
type chartCRD struct {
	obj  *unstructured.Unstructured
	file string // the crds/ file, or the template ("# Source:" of the rendered manifest)
	from crdSource
}

// readCRDs is the one reading of a chart's CRDs, for the crds/ a helm step
// applies and plans (crdRequests), for crds: only (renderCRDs) and for the
// manifest an upgrade is about to write (crdGuard, with no chart): the
// CRDs of ch's crds/ directories (subcharts' included, in Helm's order),
// then, when templates is given, those of the manifest it renders (hooks
// are not in it), cluster-scoped whatever the template says. A CRD both in
// crds/ and in the templates is refused (Helm's install would fail on it
// too), and so is one rendered twice: which of the two is meant cannot be
// told. Plan and apply refuse the same.
func readCRDs(ch *chartv2.Chart, templates func() (string, error)) ([]chartCRD, error) {
	var out []chartCRD
	seen := map[string]crdSource{}
	if ch != nil {
		for _, f := range ch.CRDObjects() {
			objs, err := manifest.DecodeManifests(f.File.Data)
			if err != nil {
				return nil, fmt.Errorf("%s does not read as Kubernetes objects: %w", f.Filename, err)
			}
			for _, o := range objs {
				if kube.IsCRD(o) {
					seen[o.GetName()] = fromCRDsDir
					out = append(out, chartCRD{obj: o, file: f.Filename, from: fromCRDsDir})
				}
			}
		}
	}
	if templates == nil {
		return out, nil
	}
	rendered, err := templates()
	if err != nil {
		return nil, err
	}
	for _, doc := range chartsource.SplitBySource(rendered) {
		objs, err := chartsource.DecodeManifest(doc.Text)
		if err != nil {
			return nil, fmt.Errorf("%s does not read as Kubernetes objects: %w", doc.Source, err)
		}
		for _, obj := range objs {
			if !kube.IsCRD(obj) {
				continue
			}
			switch seen[obj.GetName()] {
			case fromCRDsDir:
				return nil, fmt.Errorf("CRD %s is both in the chart's crds/ and rendered by %s: keep one", obj.GetName(), doc.Source)
			case fromTemplate:
				return nil, fmt.Errorf("CRD %s is rendered twice (again by %s): keep one", obj.GetName(), doc.Source)
			}
			seen[obj.GetName()] = fromTemplate
			obj.SetNamespace("")
			out = append(out, chartCRD{obj: obj, file: doc.Source, from: fromTemplate})
		}
	}
	return out, nil
}

// crdRequests decides each crds/ CRD as apply sends it (kube.PlanApply,
// server-side, which runs the CRD safety checks on an update): with
// crds: create only the missing ones, with skip none. A refused update is
// the error, before anything is written.
func crdRequests(ctx context.Context, clients *kube.Clients, r *Release) ([]*kube.ApplyRequest, error) {
	mode := r.step.Helm.CRDMode()
	if mode == spec.CRDsSkip {
		return nil, nil
	}
	if r.src == nil {
		return nil, nil
	}
	crds, err := readCRDs(r.src.Chart, nil) // crds/ only: templated CRDs are the release's
	if err != nil {
		return nil, err
	}
	var reqs []*kube.ApplyRequest
	for _, c := range crds {
		crd := c.obj
		if mode == spec.CRDsCreate {
			live, _, err := clients.Live(ctx, kube.CRDMapping, "", crd.GetName())
			if err == nil && live != nil {
				continue
			}
			if err != nil && !apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("cannot read CRD %s: %w", crd.GetName(), clients.Explain(err))
			}
		}
		req, err := crdRequest(ctx, clients, crd, objdiff.Options{})
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, req)
	}
	return reqs, nil
}

// crdRequest is the request that applies a chart's CRD, for crds/ and
// crds: only alike (kube.PlanApply: the CRD safety checks on an update).
func crdRequest(ctx context.Context, clients *kube.Clients, crd *unstructured.Unstructured, opts objdiff.Options) (*kube.ApplyRequest, error) {
	req, err := clients.PlanApply(ctx, crd, kube.CRDMapping, true, opts)
	if err != nil {
		return nil, err
	}
	// A CRD Helm created (a release installed by plain helm, or by khook
	// before it upgraded crds/) is the chart's: khook takes Helm's fields
	// over, never another manager's.
	req.Force = kube.TakesOverFromHelm(req.Live)
	return req, nil
}

// applyCRDs writes the chart's crds/ before the install or upgrade, awaits
// them Established and makes the Helm session see their kinds (as Helm's
// install does after creating them).
func applyCRDs(ctx context.Context, clients *kube.Clients, r *Release) ([]model.Change, error) {
	reqs, err := crdRequests(ctx, clients, r)
	if err != nil || len(reqs) == 0 {
		return nil, err
	}
	var changes []model.Change
	for _, req := range reqs {
		res, err := clients.Send(ctx, req, kube.DryRunNone)
		if err != nil {
			return changes, err
		}
		did := req.Outcome(res).Done()
		changes = append(changes, model.Change{Action: did, Kind: "CustomResourceDefinition", Name: req.Desired.GetName()})
		if did != model.DidUnchanged {
			r.sess.writes.Add(1)
		}
	}
	for _, req := range reqs {
		if err := clients.WaitCRDEstablished(ctx, req.Desired.GetName()); err != nil {
			return changes, fmt.Errorf("CRD %s: %w", req.Desired.GetName(), err)
		}
	}
	if disc, err := r.sess.cfg.RESTClientGetter.ToDiscoveryClient(); err == nil && disc != nil {
		disc.Invalidate()
	}
	if m, err := r.sess.cfg.RESTClientGetter.ToRESTMapper(); err == nil {
		if rm, ok := m.(meta.ResettableRESTMapper); ok {
			rm.Reset()
		}
	}
	kube.InvalidateLive(ctx)
	return changes, nil
}

// planCRDs is applyCRDs as a server-side dry run: r.CRDs gets each crds/
// CRD the step would create or change, with its diff, and the release's
// custom resources are then checked against these CRDs (checkFields), not
// the ones live.
func planCRDs(ctx context.Context, clients *kube.Clients, r *Release) error {
	r.CRDs, r.planned = nil, nil
	reqs, err := crdRequests(ctx, clients, r)
	if err != nil {
		return err
	}
	for _, req := range reqs {
		res, err := clients.Send(ctx, req, kube.DryRunServer)
		if err != nil {
			return err
		}
		change := objdiff.Decide(req.Live, res, objdiff.Options{})
		if !change.Changed() {
			continue
		}
		r.CRDs = append(r.CRDs, ObjectDiff{APIVersion: req.Desired.GetAPIVersion(), Kind: "CustomResourceDefinition", Name: req.Desired.GetName(),
			Action: change.Action, Live: change.Live, Desired: change.After})
		r.planned = append(r.planned, req.Desired)
	}
	return nil
}

// plannedSchemas are the schemas a plan checks the release's custom
// resources of the planned CRDs' kinds against (the release's own, then
// earlier steps'); nil when it plans no CRD.
func (r *Release) plannedSchemas() *apischema.Schemas {
	crds := append(append([]*unstructured.Unstructured(nil), r.earlier...), r.planned...)
	if len(crds) == 0 {
		return nil
	}
	s, err := apischema.BuiltinSchemas()
	if err != nil {
		return nil
	}
	return s.WithCRDs(crds) // a later CRD of a kind replaces an earlier one
}

// ChecksKind says the plan checks the kind's objects against a CRD it
// applies first: the release's crds/ (PlansKind) or an earlier step's.
func (r *Release) ChecksKind(gk string) bool {
	if r.PlansKind(gk) {
		return true
	}
	for _, crd := range r.earlier {
		if crdGroupKind(crd) == gk {
			return true
		}
	}
	return false
}

// changedCRDs are the CRDs among crds that exist and that applying would
// change (objdiff.Holds, without asking the server): a CRD the cluster holds
// as written is checked by the server's dry run as before.
func changedCRDs(ctx context.Context, clients *kube.Clients, crds []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, crd := range crds {
		live, _, err := clients.Live(ctx, kube.CRDMapping, "", crd.GetName())
		if err != nil || live == nil || objdiff.Holds(kube.CRDMapping, live, crd, objdiff.Options{}) {
			continue
		}
		out = append(out, crd)
	}
	return out
}

// PlansKind says a crds/ CRD the dry run plans to create or change
// defines the kind ("Kind.group"): its objects are checked against that CRD.
func (r *Release) PlansKind(gk string) bool {
	for _, crd := range r.planned {
		if crdGroupKind(crd) == gk {
			return true
		}
	}
	return false
}

func crdGroupKind(crd *unstructured.Unstructured) string {
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	return kind + "." + group
}

// checkPlanned checks a custom resource of a kind a planned CRD defines
// against that CRD's schema, as the API server will once it is applied;
// ok is false for any other object.
func (r *Release) checkPlanned(obj *unstructured.Unstructured, name string) (fe *kube.FieldError, ok bool) {
	gvk := obj.GroupVersionKind()
	if !r.ChecksKind(gvk.Kind + "." + gvk.Group) {
		return nil, false
	}
	s := r.plannedSchemas()
	if s == nil {
		return nil, false
	}
	problems, known := s.Validate(obj)
	if !known {
		return &kube.FieldError{Object: name, Message: fmt.Sprintf("version %s of kind %s is not served by its CRD as the chart's crds/ define it", gvk.Version, gvk.Kind)}, true
	}
	return kube.SchemaFieldError(obj, name, problems), true
}

// checkUnserved is DryRun's answer when the release uses a kind only its
// crds/ will register (Helm cannot build such a release before they
// exist): the chart is rendered without the cluster and each custom
// resource of those kinds is checked against its planned CRD. nil when
// they all pass: plan then says install without their diff.
func checkUnserved(ctx context.Context, r *Release, caps *common.Capabilities) error {
	if len(r.planned) == 0 {
		return nil
	}
	rendered, err := renderWithoutCluster(ctx, r, caps)
	if err != nil {
		return nil // the server's dry run said what it could not build
	}
	var refused []error
	for _, doc := range chartsource.SplitBySource(rendered) {
		objs, err := chartsource.DecodeManifest(doc.Text)
		if err != nil {
			continue
		}
		manifest.RememberRendered(objs, doc.Source, []byte(doc.Text))
		for _, obj := range objs {
			name := obj.GetKind() + " " + obj.GetName()
			if obj.GetNamespace() != "" {
				name = obj.GetKind() + " " + obj.GetNamespace() + "/" + obj.GetName()
			}
			if fe, ok := r.checkPlanned(obj, name); ok && fe != nil {
				refused = append(refused, fe)
			}
		}
	}
	return errors.Join(refused...)
}

// templatesCRD says a template of ch or of a subchart names the kind
// CustomResourceDefinition: its release may write a CRD, which crdGuard
// then checks.
func templatesCRD(ch *chartv2.Chart) bool {
	if ch == nil {
		return false
	}
	for _, f := range ch.Templates {
		if f != nil && bytes.Contains(f.Data, []byte("CustomResourceDefinition")) {
			return true
		}
	}
	for _, d := range ch.Dependencies() {
		if templatesCRD(d) {
			return true
		}
	}
	return false
}

// crdGuard is the post-renderer of every upgrade, dry run or not: it sees
// the manifest Helm is about to apply, refuses a templated CRD update the
// CRD safety checks refuse (Helm then writes nothing), and marks a CRD the
// upgrade drops while custom resources of it exist helm.sh/resource-policy:
// keep, so Helm's upgrade leaves it (unless the step says deleteCRDs). It
// passes the manifest on as it is.
type crdGuard struct {
	ctx     context.Context
	clients *kube.Clients
	r       *Release
	dry     kube.DryRunStrategy
}

func (g crdGuard) Run(rendered *bytes.Buffer) (*bytes.Buffer, error) {
	crds, err := readCRDs(nil, func() (string, error) { return rendered.String(), nil })
	if err != nil {
		return nil, fmt.Errorf("cannot check the CRDs of the rendered manifest: %w", err)
	}
	for _, c := range crds {
		obj := c.obj
		live, err := g.crd(obj.GetName())
		if err != nil || live == nil {
			if err != nil {
				return nil, err
			}
			continue
		}
		warnings, err := g.clients.CheckCRDChange(g.ctx, live, obj)
		if err != nil {
			return nil, err
		}
		for _, w := range warnings {
			kube.Warn(g.ctx, kube.ObjectName(obj), w)
		}
	}
	if g.dry.IsDryRun() || !g.r.Installed() || g.r.step.Helm.DeleteCRDs {
		return rendered, nil // an install drops nothing
	}
	gone, err := dropped(g.r.Last.Manifest, rendered.String(), g.r.Namespace)
	if err != nil {
		return nil, err // nothing is known to go: Helm deletes nothing
	}
	for _, d := range gone {
		if !kube.IsCRD(d) {
			continue
		}
		live, err := g.crd(d.GetName())
		if err != nil || live == nil || keeps(live) {
			if err != nil {
				return nil, err
			}
			continue
		}
		usage, err := g.clients.CRDUsageOf(g.ctx, live)
		var uncounted *kube.UncountedError
		switch {
		case errors.As(err, &uncounted):
			// Whether it holds data cannot be told: kept, as if it did.
		case err != nil:
			return nil, err
		case usage.Objects == 0:
			continue
		}
		what, why := usage.String(), usage.String()+" exist"
		if uncounted != nil {
			what, why = uncounted.Reason, uncounted.Reason
		}
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, helmkube.ResourcePolicyAnno, helmkube.KeepPolicy)
		if _, err := g.clients.Dynamic.Resource(kube.CRDMapping.Resource).Patch(g.ctx, d.GetName(), types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: kube.FieldManager}); err != nil {
			return nil, fmt.Errorf("cannot mark CRD %s to be kept (%s): %w", d.GetName(), why, g.clients.Explain(err))
		}
		g.r.Kept = append(g.r.Kept, fmt.Sprintf("CRD %s (%s)", d.GetName(), what))
		kube.Warn(g.ctx, kube.ObjectName(d), fmt.Sprintf("the chart no longer renders it and the upgrade keeps it: %s: deleting the CRD deletes them; set deleteCRDs: true on the step to delete both", why))
	}
	return rendered, nil
}

func (g crdGuard) crd(name string) (*unstructured.Unstructured, error) {
	live, err := g.clients.Dynamic.Resource(kube.CRDMapping.Resource).Get(g.ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read CRD %s: %w", name, g.clients.Explain(err))
	}
	return live, nil
}

// keeps: the object says helm.sh/resource-policy: keep (Helm then never
// deletes it).
func keeps(obj *unstructured.Unstructured) bool {
	return strings.EqualFold(strings.TrimSpace(obj.GetAnnotations()[helmkube.ResourcePolicyAnno]), helmkube.KeepPolicy)
}

// Dropped is an object of the installed revision that the new one no
// longer renders, and what the upgrade does to it: delete, or keep (with
// the reason) when it says helm.sh/resource-policy: keep, or when it is a
// CRD custom resources of which exist and the step does not say
// deleteCRDs. A CRD deleted with its custom resources says so in With.
type Dropped struct {
	Object *unstructured.Unstructured
	Action model.Action
	Reason string
	With   string // what a deleted CRD takes with it: "its 2 Widget objects"
}

// DroppedObjects is what an upgrade of r to newManifest does to the
// objects it drops, as crdGuard and Helm will decide it: plan's view.
func DroppedObjects(ctx context.Context, c *kube.Clients, r *Release, newManifest string) ([]Dropped, error) {
	if !r.Installed() {
		return nil, nil
	}
	gone, err := dropped(r.Last.Manifest, newManifest, r.Namespace)
	if err != nil {
		return nil, err
	}
	var out []Dropped
	for _, obj := range gone {
		d := Dropped{Object: obj, Action: model.ActionDelete}
		live := obj
		if m, err := c.MapObject(ctx, obj.DeepCopy(), r.Namespace); err == nil {
			l, _, err := c.Live(ctx, m, obj.GetNamespace(), obj.GetName())
			switch {
			case apierrors.IsNotFound(err):
				live = nil
			case err != nil:
				return nil, fmt.Errorf("cannot read %s: %w", kube.ObjectName(obj), c.Explain(err))
			default:
				live = l
			}
		}
		switch {
		case live == nil:
		case keeps(live):
			d.Action, d.Reason = model.ActionKeep, "it says helm.sh/resource-policy: keep: the upgrade leaves it, as Helm does"
		case kube.IsCRD(obj):
			usage, err := c.CRDUsageOf(ctx, live)
			var uncounted *kube.UncountedError
			switch {
			case errors.As(err, &uncounted) && r.step.Helm.DeleteCRDs:
				d.Reason, d.With = "deleteCRDs: true", uncounted.With()
			case errors.As(err, &uncounted):
				d.Action, d.Reason = model.ActionKeep, uncounted.Kept("set deleteCRDs: true on the step")
			case err != nil:
				return nil, err
			case usage.Objects == 0:
			case r.step.Helm.DeleteCRDs:
				d.Reason, d.With = "deleteCRDs: true", "its "+usage.String()
			default:
				d.Action, d.Reason = model.ActionKeep, fmt.Sprintf("%s exist: deleting the CRD deletes them; set deleteCRDs: true on the step to delete both", usage)
			}
		}
		out = append(out, d)
	}
	return out, nil
}

// dropped lists the objects of the old manifest that the new one no
// longer has. A manifest that does not read is an error: what goes cannot
// be told, so nothing may go.
func dropped(oldManifest, newManifest, ns string) ([]*unstructured.Unstructured, error) {
	key := func(u *unstructured.Unstructured) string {
		n := u.GetNamespace()
		if n == "" {
			n = ns
		}
		if kube.IsCRD(u) {
			n = "" // cluster-scoped, whatever the manifest says
		}
		return u.GetObjectKind().GroupVersionKind().GroupKind().String() + "/" + n + "/" + u.GetName()
	}
	oldObjs, err := manifest.DecodeManifests([]byte(oldManifest))
	if err != nil {
		return nil, fmt.Errorf("cannot read the installed revision's manifest to tell what the upgrade drops: %w", err)
	}
	newObjs, err := manifest.DecodeManifests([]byte(newManifest))
	if err != nil {
		return nil, fmt.Errorf("cannot read the rendered manifest to tell what the upgrade drops: %w", err)
	}
	keep := map[string]bool{}
	for _, u := range newObjs {
		keep[key(u)] = true
	}
	var out []*unstructured.Unstructured
	for _, u := range oldObjs {
		if !keep[key(u)] {
			out = append(out, u)
		}
	}
	return out, nil
}

// renderWithoutCluster renders the release's chart client-side, as Helm's
// install would for the given cluster capabilities, with the step's
// post-renderers and without crds/: its manifest, or Helm's error.
func renderWithoutCluster(ctx context.Context, r *Release, caps *common.Capabilities) (string, error) {
	ch := r.src.Chart
	if r.src.Load != nil {
		if fresh, err := r.src.Load(); err == nil {
			ch = fresh // Install processes dependencies in place
		}
	}
	in := action.NewInstall(action.NewConfiguration())
	in.DryRunStrategy = action.DryRunClient
	in.ReleaseName, in.Namespace = r.Name, r.Namespace
	in.Replace = true
	in.SkipCRDs = true // crds/ are khook's to apply (readCRDs)
	in.SkipSchemaValidation = r.step.Helm.SkipSchemaValidation
	kv := caps.KubeVersion
	in.KubeVersion = &kv
	in.APIVersions = caps.APIVersions
	in.PostRenderer, in.PostRenderStrategy, in.Labels = chartsource.PostRendering(r.step.Helm, false)
	out, err := in.RunWithContext(ctx, ch, r.Values)
	if err != nil {
		return "", err
	}
	res, err := chartsource.AsRelease(out)
	if err != nil {
		return "", err
	}
	return res.Manifest, nil
}
