package helmstep

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/chartsource"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/spec"
)

// Plan is Execute's path with Helm's server-side dry run (the same install
// or upgrade action, DryRunStrategy=server, as helm's own --dry-run=server)
// and no waits: the reconciler's decision (decide, dry) as a prediction,
// install / upgrade / unchanged / skip, from the same release history,
// chart, values and drift of a converged release's live objects. The rendered objects are compared
// with the live ones (Drift), so out-of-band edits and value changes show,
// and an object the API server would refuse (an immutable field) is apply's
// failure. An error is what Execute would fail with.
func (e *Executor) Plan(ctx context.Context, st *spec.Step, in runner.PlanInput) (runner.Prediction, error) {
	p, err := e.plan(ctx, st, in)
	return p, e.redactor.Error(err)
}

func (e *Executor) plan(ctx context.Context, st *spec.Step, in runner.PlanInput) (runner.Prediction, error) {
	var p runner.Prediction
	h := st.Helm
	if h == nil {
		return p, errors.New("helm executor: the step has no helm: block (internal error)")
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
		p.Action, p.Reason = model.ActionUnchanged, fmt.Sprintf("%s: chart, values and live objects match", from)+chartsource.DependenciesNote(r.src.Deps)+TestsNote(TestsDue(last, h))
		return p, nil
	case dec.do == doUpgrade && len(dec.drift) > 0:
		p.Action = model.ActionUpgrade
		p.Reason = fmt.Sprintf("%s: %d live %s drifted from the release", from, len(dec.drift), plural(len(dec.drift), "object", "objects"))
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
	p.Reason += chartsource.DependenciesNote(r.src.Deps) + TestsNote(TestsToRun(res, h))
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

func chartName(ch *chartv2.Chart) string {
	if ch != nil && ch.Metadata != nil {
		return ch.Metadata.Name
	}
	return ""
}
