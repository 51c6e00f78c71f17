package helmstep

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	rel "helm.sh/helm/v4/pkg/release/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/chartsource"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/manifest"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/words"
)

// Plan is Execute's path with Helm's server-side dry run (the same install
// or upgrade action, DryRunStrategy=server, as helm's own --dry-run=server)
// and no waits: the reconciler's decision (decide, dry) as a prediction,
// install / upgrade / unchanged / skip, from the same release history,
// chart, values and drift of a converged release's live objects. The rendered objects are compared
// with the live ones (Drift), so out-of-band edits and value changes show,
// and an object the API server would refuse (an immutable field) is apply's
// failure. An error is what Execute would fail with; the plan redacts it
// (plan.Live, as every step type's).
func (e *Executor) Plan(ctx context.Context, st *spec.Step, in runner.PlanInput) (runner.Prediction, error) {
	var p runner.Prediction
	h := st.Helm
	if h == nil {
		return p, errors.New("helm executor: the step has no helm: block (internal error)")
	}
	if h.OnlyCRDs() {
		return e.planOnlyCRDs(ctx, st, in) // crdsonly.go: no release
	}
	r, err := e.Open(st)
	if err != nil {
		return p, err
	}
	name, last := r.Name, r.Last
	installed := r.Installed()
	p.Release = &runner.PlannedRelease{}
	if last != nil {
		p.Release.Revision = last.Version
	}
	dec := e.decide(ctx, r, true)
	if r.src != nil { // loaded
		p.Release.Chart, p.Release.Values, p.Release.ChartName = ChartContent(r.src.Chart), r.Values, chartName(r.src.Chart)
		p.Release.ChartDigest, p.Release.ChartVersion = r.src.Digest, chartVersion(r.src.Chart)
	}
	var from string // what is installed
	if installed {
		from = fmt.Sprintf("revision %d, chart %s", last.Version, chartVersion(last.Chart))
	}
	switch {
	case dec.do == doSkip:
		p.Action, p.Reason = model.ActionSkip, dec.reason
		return p, nil
	case dec.do == doFail:
		return p, dec.err
	case dec.do == doUnchanged:
		p.Action, p.Reason = model.ActionUnchanged, fmt.Sprintf("%s: chart, values and live objects match", from)+r.src.Note()+TestsNote(TestsDue(last, h))
		return p, nil
	case dec.do == doUpgrade && len(dec.drift) > 0:
		p.Action = model.ActionUpgrade
		p.Reason = fmt.Sprintf("%s: %d live %s drifted from the release", from, len(dec.drift), words.Plural(len(dec.drift), "object", "objects")) + r.src.Note()
		p.Objects = plannedDiffs(dec.drift, nil)
		return p, nil
	}
	// doInstall or doUpgrade: the same action as apply's, dry run.
	target := chartVersion(r.src.Chart)
	uncompared := dec.uncompared // the drift check of a converged release failed: apply upgrades

	res, err := e.DryRun(ctx, r, DryRunOptions{APIVersions: in.APIVersions, CRDs: in.CRDs, Lookup: in.Lookup})
	if err != nil {
		if kind, group, ok := noKindMatch(err); ok {
			if r.PlansKind(kind + "." + group) {
				// The step applies the chart's crds/ first, then renders
				// (its custom resources were checked against them).
				p.Action, p.Reason = model.ActionInstall, fmt.Sprintf("release %s is not installed: install chart %s", name, target)
				if dec.do == doUpgrade {
					p.Action, p.Reason = model.ActionUpgrade, fmt.Sprintf("%s: chart %s -> %s", from, chartVersion(last.Chart), target)
				}
				p.Objects = plannedDiffs(r.CRDs, nil)
				p.DiffNote = fmt.Sprintf("kind %s comes with the chart's crds/: the release is rendered once they are installed", runner.Qualified(kind, group))
				return p, nil
			}
			if in.Produced != nil && in.Produced(kind, group) {
				return p, runner.PendingKind(kind, group, err)
			}
		}
		return p, err
	}
	if err := e.CheckNamespaces(ctx, r, res, in.CreatesNamespace); err != nil {
		return p, err
	}
	switch {
	case dec.do == doInstall:
		p.Action, p.Reason = model.ActionInstall, fmt.Sprintf("release %s is not installed: install chart %s", name, target)
	case last.Info.Status != rcommon.StatusDeployed:
		p.Action, p.Reason = model.ActionUpgrade, fmt.Sprintf("%s is %s: upgrade to revision %d, chart %s", from, last.Info.Status, res.Version, target)
	default:
		var why []string
		if r.postRenderersChanged {
			why = append(why, "post-renderers changed")
		}
		if !r.sameChart && (!r.postRenderersChanged || chartVersion(last.Chart) != target) {
			why = append(why, "chart "+chartVersion(last.Chart)+" -> "+target)
		}
		if !r.sameValues {
			why = append(why, "values changed")
		}
		if uncompared != nil {
			why = append(why, fmt.Sprintf("the live objects cannot be compared with the release (%v): apply upgrades", uncompared))
		}
		p.Action, p.Reason = model.ActionUpgrade, fmt.Sprintf("%s: %s (revision %d)", from, strings.Join(why, ", "), res.Version)
	}
	p.Reason += r.src.Note() + TestsNote(TestsToRun(res, h))
	if len(r.Adopts) > 0 { // takeOwnership
		p.Reason += "; takes ownership of " + strings.Join(r.Adopts, ", ")
	}
	// Each rendered object against the cluster (with or without --diff):
	// the server's dry run of each is what the upgrade sends, so what it
	// refuses fails the step, as it fails the upgrade.
	diffs, err := Drift(ctx, e.clients, DriftInput{Release: r.Name, Namespace: r.Namespace, Manifest: res.Manifest, Ignore: r.ignore, OnImmutable: st.OnImmutable, Planned: r.ChecksKind})
	if err != nil {
		var refused *kube.RefusedError
		if errors.As(err, &refused) {
			return p, e.failure(r, refused) // as runAction words the upgrade's refusal
		}
		if kube.IsUnreachable(err) {
			return p, err
		}
		return p, e.failure(r, err) // what cannot be checked is not let through
	}
	for _, d := range diffs {
		if d.Action == model.ActionReplace {
			p.Reason += fmt.Sprintf("; replaces %s (an immutable field changes; onImmutable: recreate)", d.id())
		}
	}
	removed, err := DroppedObjects(ctx, e.clients, r, res.Manifest)
	if err != nil {
		if kube.IsUnreachable(err) {
			return p, err
		}
		return p, e.failure(r, err) // as crdGuard fails the upgrade
	}
	for _, d := range removed {
		switch {
		case !kube.IsCRD(d.Object) || d.Reason == "":
		case d.Action == model.ActionKeep:
			p.Reason += fmt.Sprintf("; keeps CRD %s: %s", d.Object.GetName(), d.Reason)
			kube.Warn(ctx, kube.ObjectName(d.Object), "the chart no longer renders it and the upgrade keeps it: "+d.Reason)
		case d.With != "":
			p.Reason += fmt.Sprintf("; deletes CRD %s and %s (%s)", d.Object.GetName(), d.With, d.Reason)
		}
	}
	p.Objects = plannedDiffs(append(r.CRDs, diffs...), removed)
	return p, nil
}

// namespaceReady is apply's check of the release namespace: missing and
// not created by the step is apply's failure.
func (e *Executor) namespaceReady(ctx context.Context, r *Release) error {
	if r.step.Helm.CreateNamespace {
		return nil
	}
	_, _, err := e.clients.Live(ctx, kube.NamespaceMapping, "", r.Namespace)
	if err == nil {
		return nil
	}
	if apierrors.IsNotFound(err) {
		return runner.PendingNamespace(r.Namespace, e.NamespaceMissing(r))
	}
	return fmt.Errorf("cannot read namespace %s: %w", r.Namespace, e.clients.Explain(err))
}

// plannedDiffs lists the objects the release changes, with their diffs,
// and those the upgrade drops (delete, or keep with the reason).
func plannedDiffs(diffs []ObjectDiff, removed []Dropped) []runner.PlannedObject {
	var out []runner.PlannedObject
	for _, d := range diffs {
		out = append(out, runner.PlannedObject{Action: d.Action, Kind: d.Kind, Namespace: d.Namespace, Name: d.Name, Desired: d.Desired, Live: d.Live})
	}
	for _, d := range removed {
		obj := d.Object
		out = append(out, runner.PlannedObject{Action: d.Action, Reason: d.Reason, With: d.With, Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(), Live: obj})
	}
	return out
}

// noKindMatch finds the kind a rendered release uses that the cluster does
// not serve (yet).
func noKindMatch(err error) (kind, group string, ok bool) {
	var nk *meta.NoKindMatchError
	if errors.As(err, &nk) {
		return nk.GroupKind.Kind, nk.GroupKind.Group, true
	}
	// Through the resource builder's aggregated errors only the text is left.
	m := noMatchText.FindStringSubmatch(err.Error())
	if m == nil {
		return "", "", false
	}
	group, _, _ = strings.Cut(m[2], "/")
	if !strings.Contains(m[2], "/") {
		group = ""
	}
	return m[1], group, true
}

// noMatchText is meta.NoKindMatchError's sentence.
var noMatchText = regexp.MustCompile(`no matches for kind "([^"]+)" in version "([^"]+)"`)

func chartVersion(ch *chartv2.Chart) string {
	if ch != nil && ch.Metadata != nil {
		return ch.Metadata.Name + "@" + ch.Metadata.Version
	}
	return "(unknown)"
}

// fetched is the chart as the results and the state record keep it.
func fetched(src *chartsource.Source) *model.ChartFetched {
	if src == nil {
		return nil
	}
	return &model.ChartFetched{Version: chartVersion(src.Chart), Digest: src.Digest, Signer: src.Signer}
}

func chartName(ch *chartv2.Chart) string {
	if ch != nil && ch.Metadata != nil {
		return ch.Metadata.Name
	}
	return ""
}

// The plan's dry run: Helm's own server-side dry run of the install or
// upgrade apply would run (DryRun), and what that cannot see by itself: a
// rendered field the API server refuses (checkFields) and a namespace the
// chart writes into that nobody creates (CheckNamespaces).

// DryRunOptions are what a plan knows that the cluster does not yet.
type DryRunOptions struct {
	// APIVersions are served by the time the step runs: the CRDs earlier
	// steps of the plan create ("group/version" and "group/version/Kind").
	APIVersions []string
	// CRDs are the CRDs earlier steps of the plan apply: the release's
	// custom resources of their kinds are checked against them where they
	// change what the cluster holds, not against the CRDs live.
	CRDs []*unstructured.Unstructured
	// Lookup, when set, gives the REST config the chart's templates read
	// the cluster through (lookup), from the session's own: the plan's
	// lookup-secrets policy. Release storage keeps the session's.
	Lookup func(*rest.Config) *rest.Config
}

// DryRun runs the install or upgrade apply would run, as Helm's server-side
// dry run: the same action with the same settings, the cluster's
// capabilities (plus opts.APIVersions), the next revision, the same lookup
// client and the same pre-flight checks (an object owned by another
// release). It returns the release as apply would make it, or apply's
// error sentence for a step that would fail. It writes nothing.
func (e *Executor) DryRun(ctx context.Context, r *Release, opts DryRunOptions) (*rel.Release, error) {
	caps, err := e.dryRunCapabilities()
	if err != nil {
		return nil, e.clients.Explain(fmt.Errorf("release %s: cannot read the cluster's capabilities: %w", r.Name, err))
	}
	caps = caps.Copy()
	caps.APIVersions = append(caps.APIVersions, opts.APIVersions...)
	r.sess.cfg.Capabilities = caps
	r.sess.warnings.ForwardTo(kube.WarningsOf(ctx))
	if opts.Lookup != nil {
		r.sess.cfg.RESTClientGetter = lookupGetter{RESTClientGetter: r.sess.cfg.RESTClientGetter, wrap: opts.Lookup}
	}
	if err := e.planCRDs(ctx, r); err != nil {
		return nil, e.failure(r, err)
	}
	r.earlier = e.changedCRDs(ctx, opts.CRDs)
	res, err := e.run(ctx, r, action.DryRunServer)
	if err != nil && len(r.planned) > 0 && isNoKindMatch(err) {
		if ferr := e.checkUnserved(ctx, r, caps); ferr != nil {
			err = e.failure(r, ferr)
		}
	}
	if err == nil {
		if err = e.checkFields(ctx, r, res); err != nil {
			res, err = nil, e.failure(r, err)
		}
	}
	return res, err
}

// isNoKindMatch: the release uses a kind the cluster does not serve (yet);
// through Helm's resource builder only the text is left.
func isNoKindMatch(err error) bool {
	return meta.IsNoMatchError(err) || strings.Contains(err.Error(), "no matches for kind")
}

// dryRunCapabilities are the cluster's version and served API versions,
// read afresh (as Helm's install and upgrade read them) once per executor
// through the run's discovery: a plan's dry runs share them, while apply's
// real runs read them again at each step, after earlier steps registered
// their kinds (which a plan adds from DryRunOptions).
func (e *Executor) dryRunCapabilities() (*common.Capabilities, error) {
	e.capsOnce.Do(func() { e.caps, e.capsErr = readCapabilities(e.clients.Discovery) })
	return e.caps, e.capsErr
}

// readCapabilities reads the cluster's version and served API versions
// afresh, as Helm's install and upgrade read them.
func readCapabilities(disc discovery.CachedDiscoveryInterface) (*common.Capabilities, error) {
	if disc == nil {
		return nil, fmt.Errorf("no discovery client (internal error: clients not built)")
	}
	disc.Invalidate()
	v, err := disc.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("cannot read the server version: %w", err)
	}
	versions, err := action.GetVersionSet(disc)
	if err != nil {
		return nil, err
	}
	return &common.Capabilities{
		APIVersions: versions,
		KubeVersion: common.KubeVersion{Version: v.GitVersion, Major: v.Major, Minor: v.Minor},
		HelmVersion: common.DefaultCapabilities.HelmVersion,
	}, nil
}

// capsCache holds dryRunCapabilities' answer.
type capsCache struct {
	capsOnce sync.Once
	caps     *common.Capabilities
	capsErr  error
}

// lookupGetter hands Helm's template engine (the only reader of
// ToRESTConfig during a render) a config wrapped for lookups.
type lookupGetter struct {
	action.RESTClientGetter
	wrap func(*rest.Config) *rest.Config
}

func (g lookupGetter) ToRESTConfig() (*rest.Config, error) {
	cfg, err := g.RESTClientGetter.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	return g.wrap(cfg), nil
}

// checkFields sends every object of a dry-run release (its manifest and
// the hooks an install or upgrade runs) to the API server as a server-side
// apply dry run with strict field validation: Helm's own server dry run
// renders without sending the objects, so a typo in a rendered field would
// otherwise plan as an install and fail only when apply writes. Only the
// API server's refusal of fields fails the plan, at the field's line in
// the template's rendered output; an object that cannot be dry-run alone
// (its namespace or kind comes with the release, a webhook refuses it) is
// left to apply, as before.
func (e *Executor) checkFields(ctx context.Context, r *Release, res *rel.Release) error {
	docs := chartsource.SplitBySource(res.Manifest)
	for _, h := range res.Hooks {
		if chartsource.RunsOnInstallOrUpgrade(h) {
			docs = append(docs, chartsource.RenderedDoc{Source: h.Path, Text: "---\n# Source: " + h.Path + "\n" + h.Manifest + "\n"})
		}
	}
	var refused []error
	for _, doc := range docs {
		objs, err := chartsource.DecodeManifest(doc.Text)
		if err != nil {
			continue // Helm's render read it; apply reports what it cannot
		}
		manifest.RememberRendered(objs, doc.Source, []byte(doc.Text))
		for _, obj := range objs {
			if fe := e.checkObject(ctx, r, obj); fe != nil {
				refused = append(refused, fe)
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return errors.Join(refused...)
}

func (e *Executor) checkObject(ctx context.Context, r *Release, obj *unstructured.Unstructured) *kube.FieldError {
	gvk := obj.GroupVersionKind()
	mapping, err := e.clients.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		fe, _ := r.checkPlanned(obj, gvk.Kind+" "+obj.GetName())
		return fe // a kind the release (or an earlier step) registers
	}
	var ri dynamic.ResourceInterface = e.clients.Dynamic.Resource(mapping.Resource)
	name := gvk.Kind + " " + obj.GetName()
	desired := obj.DeepCopy()
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if desired.GetNamespace() == "" {
			desired.SetNamespace(r.Namespace)
		}
		ri = e.clients.Dynamic.Resource(mapping.Resource).Namespace(desired.GetNamespace())
		name = gvk.Kind + " " + desired.GetNamespace() + "/" + obj.GetName()
	}
	if fe, ok := r.checkPlanned(obj, name); ok {
		return fe // its CRD changes first: checked against the planned one
	}
	addHelmMetadata(desired, r.Name, r.Namespace)
	_, err = dryRunApply(kube.WithObject(ctx, name), ri, desired)
	return kube.AsFieldError(err, obj, name)
}

// CheckNamespaces finds the namespaces other than the release's that a
// dry-run release writes into (its manifest and the hooks an install or
// upgrade runs) and that do not exist: unless the chart itself renders the
// Namespace or created says an earlier step creates it, apply's install
// would fail there (Helm's `namespaces "X" not found`), so the plan fails
// with apply's sentence, naming the objects. A kind the cluster does not
// serve yet is left out (its scope is not known).
func (e *Executor) CheckNamespaces(ctx context.Context, r *Release, res *rel.Release, created func(ns string) bool) error {
	manifest := res.Manifest
	for _, h := range res.Hooks {
		if chartsource.RunsOnInstallOrUpgrade(h) {
			manifest += "\n---\n" + h.Manifest
		}
	}
	objs, err := chartsource.DecodeManifest(manifest)
	if err != nil {
		return nil // Helm's render read it; apply reports what it cannot
	}
	chartMakes := map[string]bool{}
	writes := map[string][]string{} // namespace -> "Kind ns/name"
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		if gvk.Group == "" && gvk.Kind == "Namespace" {
			chartMakes[obj.GetName()] = true
			continue
		}
		ns := obj.GetNamespace()
		if ns == "" || ns == r.Namespace {
			continue // the release's namespace: checked before the render
		}
		mapping, err := e.clients.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil || mapping.Scope.Name() != meta.RESTScopeNameNamespace {
			continue
		}
		writes[ns] = append(writes[ns], gvk.Kind+" "+ns+"/"+obj.GetName())
	}
	var missing []string
	for ns := range writes {
		if chartMakes[ns] || (created != nil && created(ns)) {
			continue
		}
		_, _, err := e.clients.Live(ctx, kube.NamespaceMapping, "", ns)
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, ns)
		case err != nil:
			return fmt.Errorf("release %s: cannot read namespace %s: %w", r.Name, ns, e.clients.Explain(err))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	ns := missing[0] // apply stops at the first
	return e.failure(r, namespaceNotCreated(ns, writes[ns]))
}
