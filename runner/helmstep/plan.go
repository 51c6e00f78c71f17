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
// and no waits: the reconciler's decision (decide) as a prediction,
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
	p.Release = &runner.PlannedRelease{}
	if r.Last != nil {
		p.Release.Revision = r.Last.Version
	}
	dec := e.decide(ctx, r)
	if r.src != nil { // loaded
		p.Release.Chart, p.Release.Values, p.Release.ChartName = ChartContent(r.src.Chart), r.Values, chartName(r.src.Chart)
		p.Release.ChartDigest, p.Release.ChartVersion = r.src.Digest, chartVersion(r.src.Chart)
	}
	if done, err := predictDecided(&p, r, dec); done {
		return p, err
	}
	// doInstall or doUpgrade: the same action as apply's, dry run.
	// Apply learns a missing namespace from Helm's error
	// (namespaceMissing); a plan says pending, as an earlier step may
	// create it.
	if err := namespaceReady(ctx, e.clients, r); err != nil {
		return p, err
	}
	res, err := e.DryRun(ctx, r, dec.do, DryRunOptions{APIVersions: in.APIVersions, CRDs: in.CRDs, Lookup: in.Lookup})
	if err != nil {
		return predictUnrendered(p, r, dec, in, err)
	}
	if err := checkNamespaces(ctx, e.clients, r, res, in.CreatesNamespace); err != nil {
		return p, err
	}
	switch {
	case dec.do == doInstall:
		p.Action, p.Reason = model.ActionInstall, installReason(r)
	case r.Last.Info.Status != rcommon.StatusDeployed:
		p.Action, p.Reason = model.ActionUpgrade, fmt.Sprintf("%s is %s: upgrade to revision %d, chart %s", installedFrom(r), r.Last.Info.Status, res.Version, chartVersion(r.src.Chart))
	default:
		p.Action, p.Reason = model.ActionUpgrade, fmt.Sprintf("%s: %s (revision %d)", installedFrom(r), dec.reason, res.Version)
	}
	p.Reason += r.src.Note() + TestsNote(TestsToRun(res, h))
	if len(r.Adopts) > 0 { // takeOwnership
		p.Reason += "; takes ownership of " + strings.Join(r.Adopts, ", ")
	}
	return predictObjects(ctx, e.clients, p, r, res)
}

// predictDecided is the prediction of a decision that needs no dry run
// (skip, fail, pending, unchanged, an upgrade of drifted objects); done is
// false for an install or upgrade to dry-run.
func predictDecided(p *runner.Prediction, r *Release, dec decision) (done bool, err error) {
	switch {
	case dec.do == doSkip:
		p.Action, p.Reason = model.ActionSkip, dec.reason
		return true, nil
	case dec.do == doFail:
		return true, dec.err
	case dec.do == doRecover: // apply recovers it first: the plan cannot say what then
		last := r.Last
		return true, &runner.Pending{Err: fmt.Errorf("release %s is %s at revision %d: another Helm operation is running or was interrupted", r.Name, last.Info.Status, last.Version)}
	case dec.uncompared != nil && kube.IsUnreachable(dec.uncompared):
		return true, dec.uncompared
	case dec.do == doUnchanged:
		p.Action, p.Reason = model.ActionUnchanged, fmt.Sprintf("%s: chart, values and live objects match", installedFrom(r))+r.src.Note()+TestsNote(TestsDue(r.Last, r.step.Helm))
		return true, nil
	case dec.do == doUpgrade && len(dec.drift) > 0:
		p.Action = model.ActionUpgrade
		p.Reason = fmt.Sprintf("%s: %d live %s drifted from the release", installedFrom(r), len(dec.drift), words.Plural(len(dec.drift), "object", "objects")) + r.src.Note()
		p.Objects = plannedDiffs(dec.drift, nil)
		return true, nil
	}
	return false, nil
}

// installedFrom is what is installed: "revision N, chart name@version".
func installedFrom(r *Release) string {
	if !r.Installed() {
		return ""
	}
	return fmt.Sprintf("revision %d, chart %s", r.Last.Version, chartVersion(r.Last.Chart))
}

func installReason(r *Release) string {
	return fmt.Sprintf("release %s is not installed: install chart %s", r.Name, chartVersion(r.src.Chart))
}

// predictUnrendered is the prediction of a dry run that failed: a kind the
// step's own crds/ bring (the release is rendered once they are
// installed), a kind an earlier step provides (pending), else apply's
// error.
func predictUnrendered(p runner.Prediction, r *Release, dec decision, in runner.PlanInput, err error) (runner.Prediction, error) {
	kind, group, ok := noKindMatch(err)
	if !ok {
		return p, err
	}
	if r.PlansKind(kind + "." + group) {
		// The step applies the chart's crds/ first, then renders
		// (its custom resources were checked against them).
		p.Action, p.Reason = model.ActionInstall, installReason(r)
		if dec.do == doUpgrade {
			p.Action, p.Reason = model.ActionUpgrade, fmt.Sprintf("%s: chart %s -> %s", installedFrom(r), chartVersion(r.Last.Chart), chartVersion(r.src.Chart))
		}
		p.Objects = plannedDiffs(r.CRDs, nil)
		p.DiffNote = fmt.Sprintf("kind %s comes with the chart's crds/: the release is rendered once they are installed", runner.Qualified(kind, group))
		return p, nil
	}
	if in.Produced != nil && in.Produced(kind, group) {
		return p, runner.PendingKind(kind, group, err)
	}
	return p, err
}

// predictObjects compares each rendered object with the cluster (with or
// without --diff): the server's dry run of each is what the upgrade sends,
// so what it refuses fails the step, as it fails the upgrade. Then what
// the upgrade drops: deleted, or a CRD kept.
func predictObjects(ctx context.Context, clients *kube.Clients, p runner.Prediction, r *Release, res *rel.Release) (runner.Prediction, error) {
	diffs, err := upgradeDrift(ctx, clients, r, res.Manifest)
	if err != nil {
		var refused *kube.RefusedError
		if errors.As(err, &refused) {
			return p, failure(clients, r, refused) // as runAction words the upgrade's refusal
		}
		if kube.IsUnreachable(err) {
			return p, err
		}
		return p, failure(clients, r, err) // what cannot be checked is not let through
	}
	for _, d := range replacements(diffs) {
		p.Reason += fmt.Sprintf("; replaces %s (an immutable field changes; onImmutable: recreate)", d.id())
	}
	removed, err := DroppedObjects(ctx, clients, r, res.Manifest)
	if err != nil {
		if kube.IsUnreachable(err) {
			return p, err
		}
		return p, failure(clients, r, err) // as crdGuard fails the upgrade
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
func namespaceReady(ctx context.Context, clients *kube.Clients, r *Release) error {
	if r.step.Helm.CreateNamespace {
		return nil
	}
	_, _, err := clients.Live(ctx, kube.NamespaceMapping, "", r.Namespace)
	if err == nil {
		return nil
	}
	if apierrors.IsNotFound(err) {
		return runner.PendingNamespace(r.Namespace, namespaceMissing(clients, r))
	}
	return fmt.Errorf("cannot read namespace %s: %w", r.Namespace, clients.Explain(err))
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
// chart writes into that nobody creates (checkNamespaces).

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
func (e *Executor) DryRun(ctx context.Context, r *Release, do verdict, opts DryRunOptions) (*rel.Release, error) {
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
	if err := planCRDs(ctx, e.clients, r); err != nil {
		return nil, failure(e.clients, r, err)
	}
	r.earlier = changedCRDs(ctx, e.clients, opts.CRDs)
	res, err := e.run(ctx, r, do, kube.DryRunServer)
	if err != nil && len(r.planned) > 0 && isNoKindMatch(err) {
		if ferr := checkUnserved(ctx, r, caps); ferr != nil {
			err = failure(e.clients, r, ferr)
		}
	}
	if err == nil {
		if err = checkFields(ctx, e.clients, r, res); err != nil {
			res, err = nil, failure(e.clients, r, err)
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
func checkFields(ctx context.Context, clients *kube.Clients, r *Release, res *rel.Release) error {
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
			if fe := checkObject(ctx, clients, r, obj); fe != nil {
				refused = append(refused, fe)
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return errors.Join(refused...)
}

func checkObject(ctx context.Context, clients *kube.Clients, r *Release, obj *unstructured.Unstructured) *kube.FieldError {
	gvk := obj.GroupVersionKind()
	mapping, err := clients.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		fe, _ := r.checkPlanned(obj, gvk.Kind+" "+obj.GetName())
		return fe // a kind the release (or an earlier step) registers
	}
	var ri dynamic.ResourceInterface = clients.Dynamic.Resource(mapping.Resource)
	name := gvk.Kind + " " + obj.GetName()
	desired := obj.DeepCopy()
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if desired.GetNamespace() == "" {
			desired.SetNamespace(r.Namespace)
		}
		ri = clients.Dynamic.Resource(mapping.Resource).Namespace(desired.GetNamespace())
		name = gvk.Kind + " " + desired.GetNamespace() + "/" + obj.GetName()
	}
	if fe, ok := r.checkPlanned(obj, name); ok {
		return fe // its CRD changes first: checked against the planned one
	}
	addHelmMetadata(desired, r.Name, r.Namespace)
	_, err = dryRunApply(kube.WithObject(ctx, name), ri, desired)
	return kube.AsFieldError(err, obj, name)
}

// checkNamespaces finds the namespaces other than the release's that a
// dry-run release writes into (its manifest and the hooks an install or
// upgrade runs) and that do not exist: unless the chart itself renders the
// Namespace or created says an earlier step creates it, apply's install
// would fail there (Helm's `namespaces "X" not found`), so the plan fails
// with apply's sentence, naming the objects. A kind the cluster does not
// serve yet is left out (its scope is not known).
func checkNamespaces(ctx context.Context, clients *kube.Clients, r *Release, res *rel.Release, created func(ns string) bool) error {
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
		mapping, err := clients.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
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
		_, _, err := clients.Live(ctx, kube.NamespaceMapping, "", ns)
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, ns)
		case err != nil:
			return fmt.Errorf("release %s: cannot read namespace %s: %w", r.Name, ns, clients.Explain(err))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	ns := missing[0] // apply stops at the first
	return failure(clients, r, namespaceNotCreated(ns, writes[ns]))
}
