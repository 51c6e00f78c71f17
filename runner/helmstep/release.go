package helmstep

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/action"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	helmkube "helm.sh/helm/v4/pkg/kube"
	"helm.sh/helm/v4/pkg/postrenderer"
	rel "helm.sh/helm/v4/pkg/release/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/chartsource"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/objdiff"
	"github.com/khook/khook/runner/kube/wait"
	"github.com/khook/khook/spec"
)

// Release is a helm step's release as the cluster holds it (Last) and, once
// loaded, the chart and values the step would install. Apply's converge and
// plan's prediction both start from one: the one Helm pipeline.
type Release struct {
	Name, Namespace string
	// Last is the latest revision in any state; nil when the release has
	// no history.
	Last *rel.Release
	// Values are the step's values (ValuesLoader.Load); nil until Load.
	Values map[string]any
	// Adopts names the existing objects a takeOwnership step adopts, once
	// DryRun or apply rendered the release (takeover.go).
	Adopts []string
	// CRDs are the chart's crds/ CRDs a dry run found the step would
	// create or change (DryRun), with their diffs.
	CRDs []ObjectDiff
	// Kept names the CRDs an upgrade dropped and kept because custom
	// resources of them exist (crdGuard).
	Kept []string

	// What Load found comparing the step's chart and values with Last
	// (false before Load, and without a revision): the release was made
	// from the step's chart (SameChart, on the chart as a release stores
	// it, rendered through the step's post-renderers) and values
	// (SameValues), and with other post-renderers than the step's.
	sameChart, sameValues, postRenderersChanged bool
	// ignore are the step's ignore rules compiled (Open); ignoreErr is a
	// rule that does not compile though the spec validated it, which the
	// upgrade reports.
	ignore    objdiff.Options
	ignoreErr error

	planned []*unstructured.Unstructured // the crds/ CRDs the dry run creates or changes, as sent
	earlier []*unstructured.Unstructured // CRDs earlier steps change (DryRunOptions.CRDs)
	step    *spec.Step
	sess    *session
	src     *chartsource.Source
	remove  *removal // set: the release should be gone (openRemoval)
}

// Installed: the release has a revision that is not uninstalled (installed).
func (r *Release) Installed() bool { return installed(r.Last) }

// Open starts a Helm session in the release namespace and reads the
// release's latest revision.
func (e *Executor) Open(step *spec.Step) (*Release, error) {
	name, ns := chartsource.Target(step)
	r, err := e.OpenRelease(name, ns)
	if err != nil {
		return nil, err
	}
	r.step = step
	r.ignore, r.ignoreErr = objdiff.IgnoreOptions(step.Ignored)
	return r, nil
}

// OpenRelease reads a release's latest revision (a delete.release step's
// target); such a Release, opened without a step, cannot be loaded.
func (e *Executor) OpenRelease(name, ns string) (*Release, error) {
	sess, last, err := e.open(name, ns)
	if err != nil {
		return nil, err
	}
	return &Release{Name: name, Namespace: ns, Last: last, sess: sess}, nil
}

// Load fetches the step's chart and reads its values, as apply does, and
// compares them with the installed revision's: everything the decision
// needs of the chart, gathered before it decides.
func (e *Executor) Load(ctx context.Context, r *Release) error {
	src, err := e.charts.Fetch(ctx, r.step.Helm)
	if err != nil {
		return fmt.Errorf("release %s: %w", r.Name, err)
	}
	vals, err := e.charts.Values().Load(ctx, r.step.Helm)
	if err != nil {
		err = fmt.Errorf("release %s: %w", r.Name, err)
		if m, ok := errors.AsType[*chartsource.MissingRefError](err); ok && len(r.step.Needs) > 0 {
			// made by an earlier step (a release's generated password):
			// the plan cannot say more until that step has run; a step
			// that needs none fails, as apply would
			return &runner.Pending{Object: runner.ObjectKey(m.Kind, m.Namespace, m.Name), What: m.Kind + " " + m.Namespace + "/" + m.Name, Err: err}
		}
		return err
	}
	r.src, r.Values = src, vals
	if r.Last != nil {
		samePost := chartsource.SamePostRender(r.Last.Labels, r.step.Helm)
		r.sameChart = SameChart(r.Last.Chart, AsStored(src.Chart, src.Load, vals)) && samePost
		r.sameValues = SameValues(r.Last.Config, vals)
		r.postRenderersChanged = !samePost
	}
	return nil
}

// namespaceMissing is the sentence of a step whose release namespace does
// not exist and that does not create it: apply's (Helm's "namespaces ...
// not found") and plan's alike.
func namespaceMissing(clients *kube.Clients, r *Release) error {
	return failure(clients, r, fmt.Errorf("namespace %s not found: set createNamespace: true or create the namespace in an earlier step", r.Namespace))
}

// run installs or upgrades r as the decision says (do: doInstall or
// doUpgrade), for real or as a dry run; apply and plan build the action
// here, so they cannot differ in a setting. A takeOwnership step adopts
// what exists first (takeover.go).
func (e *Executor) run(ctx context.Context, r *Release, do verdict, dry kube.DryRunStrategy) (*rel.Release, error) {
	if r.step.Helm.TakeOwnership {
		return e.takeOver(ctx, r, do, dry)
	}
	return e.runAction(ctx, r, do, dry)
}

func (e *Executor) runAction(ctx context.Context, r *Release, do verdict, dry kube.DryRunStrategy) (*rel.Release, error) {
	h := r.step.Helm
	timeout := helmTimeout(ctx, h.Atomic)
	var res *rel.Release
	var err error
	if do == doInstall {
		var post postrenderer.PostRenderer
		if templatesCRD(r.src.Chart) {
			// A CRD the templates create may exist already (kept at an
			// uninstall, adopted): its change is checked as any other.
			post = crdGuard{ctx: ctx, clients: e.clients, r: r, dry: dry}
		}
		res, err = install(ctx, r.sess, h, r.Name, r.Namespace, r.src.Chart, r.Values, timeout, r.Last != nil, dry, post)
	} else {
		var post postrenderer.PostRenderer
		if r.ignoreErr != nil {
			return nil, fmt.Errorf("step %q: %w", r.step.Name, r.ignoreErr)
		} else if r.ignore.Ignores() {
			post = leaveIgnored{ctx: ctx, clients: e.clients, opts: r.ignore, namespace: r.Namespace}
		}
		if !dry.IsDryRun() {
			// After leaveIgnored: it checks the objects as Helm sends them,
			// as the dry run upgradeDrift reads has them.
			post = chainPostRenderers(post, immutableCheck{ctx: ctx, clients: e.clients, r: r})
		}
		if strings.Contains(r.Last.Manifest, "kind: CustomResourceDefinition") || templatesCRD(r.src.Chart) {
			// A templated CRD can only be written or dropped if the
			// release has one or the chart's templates make one (a CRD
			// moved from crds/): other upgrades render as before.
			post = chainPostRenderers(post, crdGuard{ctx: ctx, clients: e.clients, r: r, dry: dry})
		}
		res, err = upgrade(ctx, r.sess, h, r.Name, r.Namespace, r.src.Chart, r.Values, timeout, dry, post)
		if err == nil && !dry.IsDryRun() && strings.Contains(r.Last.Manifest, "kind: CustomResourceDefinition") {
			err = awaitDroppedCRDs(ctx, e.clients, r.Last.Manifest, res.Manifest, r.Namespace)
		}
	}
	if err != nil {
		if !h.CreateNamespace && strings.Contains(err.Error(), fmt.Sprintf("namespaces %q not found", r.Namespace)) {
			return nil, namespaceMissing(e.clients, r)
		}
		if nerr := namespaceFailure(err, r.Namespace); nerr != nil {
			return nil, failure(e.clients, r, nerr)
		}
		if refused := refusedIn(e.clients, err, r.Namespace); refused != nil {
			return nil, failure(e.clients, r, refused)
		}
		if late := waitTimedOut(ctx, r, err); late != nil {
			return nil, failure(e.clients, r, undone(late, err))
		}
		return nil, failure(e.clients, r, chartsource.OneLine(err))
	}
	return res, nil
}

func install(ctx context.Context, sess *session, h *spec.Helm, name, ns string, ch *chartv2.Chart, vals map[string]any, timeout time.Duration, replace bool, dry kube.DryRunStrategy, post postrenderer.PostRenderer) (*rel.Release, error) {
	in := action.NewInstall(sess.cfg)
	in.DryRunStrategy = helmDryRun(dry)
	in.ReleaseName, in.Namespace = name, ns
	in.CreateNamespace = h.CreateNamespace
	in.Replace = replace // the name is held by an uninstalled release kept in history
	in.RollbackOnFailure = h.Atomic
	in.WaitStrategy = waitStrategy(h)
	in.Timeout = timeout
	in.ServerSideApply = true
	in.ForceConflicts = true
	in.TakeOwnership = h.TakeOwnership
	in.SkipCRDs = true // khook applies the chart's crds/ itself (crds.go)
	in.SkipSchemaValidation = h.SkipSchemaValidation
	var user postrenderer.PostRenderer
	user, in.PostRenderStrategy, in.Labels = chartsource.PostRendering(h, false)
	in.PostRenderer = chainPostRenderers(user, post)
	gctx, stop := sess.guard(ctx)
	defer stop()
	r, err := in.RunWithContext(gctx, ch, vals)
	if err != nil {
		return nil, rejectedErr(gctx, err)
	}
	return chartsource.AsRelease(r)
}

func upgrade(ctx context.Context, sess *session, h *spec.Helm, name, ns string, ch *chartv2.Chart, vals map[string]any, timeout time.Duration, dry kube.DryRunStrategy, post postrenderer.PostRenderer) (*rel.Release, error) {
	up := action.NewUpgrade(sess.cfg)
	up.DryRunStrategy = helmDryRun(dry)
	up.Namespace = ns
	up.Install = true
	up.ResetValues = true // the spec states every value: never reuse the last release's
	up.RollbackOnFailure = h.Atomic
	up.CleanupOnFail = h.Atomic
	up.WaitStrategy = waitStrategy(h)
	up.Timeout = timeout
	up.ForceConflicts = true // converge: take back fields edited out of band
	up.TakeOwnership = h.TakeOwnership
	up.SkipSchemaValidation = h.SkipSchemaValidation
	var user postrenderer.PostRenderer
	user, up.PostRenderStrategy, up.Labels = chartsource.PostRendering(h, true)
	// The step's own patches first, then leaveIgnored (nil without ignore
	// rules) strips what they would still take from another field owner.
	up.PostRenderer = chainPostRenderers(user, post)
	gctx, stop := sess.guard(ctx)
	defer stop()
	r, err := up.RunWithContext(gctx, name, ch, vals)
	if err != nil {
		return nil, rejectedErr(gctx, err)
	}
	return chartsource.AsRelease(r)
}

// helmDryRun is the strategy as Helm's actions take it: a plan's dry run
// is Helm's server-side one (helm --dry-run=server).
func helmDryRun(dry kube.DryRunStrategy) action.DryRunStrategy {
	if dry.IsDryRun() {
		return action.DryRunServer
	}
	return action.DryRunNone
}

// waitStrategy: watch-driven waits when the step waits (atomic implies it,
// as in helm), else only hooks are waited for.
func waitStrategy(h *spec.Helm) helmkube.WaitStrategy {
	if h.Wait || h.Atomic {
		return helmkube.StatusWatcherStrategy
	}
	return helmkube.HookOnlyStrategy
}

// refusedIn finds, in Helm's error, the API server's refusal of an object
// (invalid: an immutable field; an admission denial; RBAC) and words it as
// plan's Drift does
// (kube.Refused, "Kind ns/name"), in one line: Helm's own text carries the
// rejected value, a Go struct dump.
func refusedIn(clients *kube.Clients, err error, ns string) *kube.RefusedError {
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.ErrStatus.Details == nil || se.ErrStatus.Details.Name == "" {
		return nil
	}
	d := se.ErrStatus.Details
	kind := d.Kind // an admission denial names the resource ("configmaps")
	m, merr := clients.Mapper.RESTMapping(schema.GroupKind{Group: d.Group, Kind: kind})
	if merr != nil {
		if gvk, kerr := clients.Mapper.KindFor(schema.GroupVersionResource{Group: d.Group, Resource: d.Kind}); kerr == nil {
			kind = gvk.Kind
			m, merr = clients.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		}
	}
	name := kind + " " + ns + "/" + d.Name
	if merr == nil && m.Scope.Name() != meta.RESTScopeNameNamespace {
		name = kind + " " + d.Name
	}
	return kube.Refused(name, se)
}

// failure is the sentence of a failed install or upgrade of r.
// undone keeps what Helm did after a failed wait with rollback-on-failure
// (atomic): the timed-out sentence replaces Helm's error, which alone says
// the release was rolled back or uninstalled.
func undone(late, helmErr error) error {
	switch msg := helmErr.Error(); {
	case strings.Contains(msg, "has been rolled back"):
		return fmt.Errorf("%w; the release was rolled back (atomic)", late)
	case strings.Contains(msg, "has been uninstalled"):
		return fmt.Errorf("%w; the release was uninstalled (atomic)", late)
	}
	return late
}

func failure(clients *kube.Clients, r *Release, err error) error {
	verb := "upgrade"
	if !r.Installed() {
		verb = "install"
	}
	what := "chart " + r.step.Helm.Chart
	if r.src != nil {
		what = r.src.What
	}
	err = fmt.Errorf("release %s in namespace %s (%s): %s failed: %w", r.Name, r.Namespace, what, verb, err)
	if strings.Contains(err.Error(), "don't meet the specifications of the schema") && !r.step.Helm.SkipSchemaValidation {
		err = fmt.Errorf("%w (the chart's values.schema.json: fix the values, or set skipSchemaValidation: true where the schema itself is wrong)", err)
	}
	return clients.Explain(err)
}

// namespaceNotCreated is the sentence of a namespace the chart writes into
// that neither it nor an earlier step creates: plan's (with the objects)
// and apply's (from Helm's error) alike.
func namespaceNotCreated(ns string, objects []string) error {
	what := "objects"
	if len(objects) > 0 {
		what += " (" + strings.Join(objects, ", ") + ")"
	}
	return fmt.Errorf("namespace %s not found: the chart writes %s there, and neither the chart nor an earlier step creates it; create the namespace in a step this one needs", ns, what)
}

// helmNamespaceNotFound is Helm's error for an object whose namespace does
// not exist.
var helmNamespaceNotFound = regexp.MustCompile(`namespaces "([^"]+)" not found`)

// namespaceFailure turns Helm's install error for an object outside the
// release's namespace into namespaceNotCreated; nil for any other error.
func namespaceFailure(err error, release string) error {
	m := helmNamespaceNotFound.FindStringSubmatch(err.Error())
	if m == nil || m[1] == release {
		return nil
	}
	return namespaceNotCreated(m[1], nil)
}

// awaitDroppedCRDs waits, by watch within the step's time, until the CRDs
// the upgrade deleted are gone: Helm does not wait for a deletion, and a
// CRD's finalizer removes its custom resources first. A later step that
// creates the kind anew must not meet the terminating one. A CRD kept
// (helm.sh/resource-policy: keep) is not being deleted and is not awaited.
func awaitDroppedCRDs(ctx context.Context, clients *kube.Clients, oldManifest, newManifest, ns string) error {
	gone, err := dropped(oldManifest, newManifest, ns)
	if err != nil {
		return err
	}
	var deleted []kube.Deleted
	for _, u := range gone {
		if !kube.IsCRD(u) {
			continue
		}
		live, err := clients.Dynamic.Resource(kube.CRDMapping.Resource).Get(ctx, u.GetName(), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return fmt.Errorf("the upgrade deleted CRD %s, but it cannot be read to await its deletion: %w", u.GetName(), err)
		case live.GetDeletionTimestamp() != nil:
			deleted = append(deleted, kube.Deleted{Mapping: kube.CRDMapping, Name: u.GetName(), UID: live.GetUID()})
		}
	}
	if err := wait.Gone(ctx, clients, deleted); err != nil {
		return fmt.Errorf("the upgrade deleted its dropped CRDs, but they were not gone before the step timeout: %w", err)
	}
	return nil
}
