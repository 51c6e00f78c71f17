package plan

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/khook/khook/report"
	"github.com/khook/khook/runner/helmstep"
	"github.com/khook/khook/runner/kube"
)

// helm predicts install / upgrade / unchanged / skip / fail through the
// Helm pipeline apply runs (helmstep): the same release history, chart and
// values; a converged release (same chart and values) is checked for drift
// of its live objects as apply checks it; any other is rendered by the
// install or upgrade apply would run, as Helm's server-side dry run, with
// the cluster's capabilities plus the API versions of CRDs earlier steps
// create, the next revision and the same lookup client and pre-flight
// checks. A step apply would fail is "fail" with apply's sentence. The
// rendered objects are compared with the live ones (helmstep.Drift), so
// out-of-band edits and value changes show.
func (pr *probe) helm(ctx context.Context) error {
	st := pr.step
	h := st.Helm
	r, err := pr.Helm.Open(st)
	if err != nil {
		return err
	}
	name, ns, last := r.Name, r.Namespace, r.Last
	installed := r.Installed()
	pr.releaseDigest(last, nil, nil)
	if h.SkipIf == "installed" && installed {
		pr.out.Action, pr.out.Reason = report.ActionSkip, fmt.Sprintf("release %s already installed (revision %d; skipIf: installed)", name, last.Version)
		pr.noDiff()
		return nil
	}
	if installed && last.Info.Status.IsPending() {
		pr.unknown(fmt.Sprintf("release %s is %s at revision %d: another Helm operation is running or was interrupted", name, last.Info.Status, last.Version))
		return nil
	}
	if err := pr.Helm.Load(ctx, r); err != nil {
		return pr.fail(err)
	}
	target := chartVersion(r.Chart())
	pr.releaseDigest(last, r.Chart(), r.Values)
	exists, err := namespaceExists(ctx, pr.Clients, ns)
	if err != nil {
		return err
	}
	if !exists && !h.CreateNamespace {
		if _, later := pr.producers.namespaces[ns]; later {
			pr.unknown(pr.producers.namespaceReason(ns))
			return nil
		}
		return pr.fail(pr.Helm.NamespaceMissing(r))
	}

	var from string // what is installed
	if installed {
		from = fmt.Sprintf("revision %d, chart %s", last.Version, chartVersion(last.Chart))
	}
	sameC, sameV := r.Same()
	if installed && last.Info.Status == rcommon.StatusDeployed && sameC && sameV {
		diffs, err := helmstep.Drift(ctx, pr.Clients, helmstep.DriftInput{Release: name, Namespace: last.Namespace, Manifest: last.Manifest, Applied: true, Ignore: pr.changeOptions()})
		if err != nil {
			if kube.IsUnreachable(err) {
				return err
			}
			pr.out.Action, pr.out.Reason = report.ActionUpgrade, fmt.Sprintf("%s: the live objects cannot be compared (%v): apply upgrades", from, err)
			pr.diffUnavailable(err.Error())
			return nil
		}
		if len(diffs) == 0 {
			pr.out.Action, pr.out.Reason = report.ActionUnchanged, fmt.Sprintf("%s: chart, values and live objects match", from)+helmstep.DependenciesNote(r.Dependencies())+helmstep.TestsNote(helmstep.TestsDue(last, h))
			pr.setDiff(nil)
			return nil
		}
		pr.out.Action = report.ActionUpgrade
		pr.out.Reason = fmt.Sprintf("%s: %d live %s drifted from the release", from, len(diffs), pluralWord(len(diffs), "object", "objects"))
		return pr.driftDiffs(ctx, diffs, nil)
	}

	res, err := pr.Helm.DryRun(ctx, r, helmstep.DryRunOptions{APIVersions: pr.producers.apiVersionsBefore(pr.spec, st), CRDs: pr.producers.crdsBefore(pr.spec, st), Lookup: pr.lookupConfig})
	pr.sayLookupsDenied(r.Chart())
	if err != nil {
		if kind, group, ok := noKindMatch(err); ok {
			if r.PlansKind(kind + "." + group) {
				// The step applies the chart's crds/ first, then renders
				// (its custom resources were checked against them).
				pr.out.Action, pr.out.Reason = report.ActionInstall, fmt.Sprintf("release %s is not installed: install chart %s", name, target)
				if installed {
					pr.out.Action, pr.out.Reason = report.ActionUpgrade, fmt.Sprintf("%s: chart %s -> %s", from, chartVersion(last.Chart), target)
				}
				if err := pr.driftDiffs(ctx, r.CRDs, nil); err != nil {
					return err
				}
				pr.diffUnavailable(fmt.Sprintf("kind %s comes with the chart's crds/: the release is rendered once they are installed", qualified(kind, group)))
				return nil
			}
			if _, later := pr.producers.kinds[strings.ToLower(kind+"."+group)]; later {
				pr.unknown(pr.producers.kindReason(kind, group))
				return nil
			}
		}
		return pr.fail(err)
	}
	switch {
	case !installed:
		pr.out.Action, pr.out.Reason = report.ActionInstall, fmt.Sprintf("release %s is not installed: install chart %s", name, target)
	case last.Info.Status != rcommon.StatusDeployed:
		pr.out.Action, pr.out.Reason = report.ActionUpgrade, fmt.Sprintf("%s is %s: upgrade to revision %d, chart %s", from, last.Info.Status, res.Version, target)
	default:
		var why []string
		if r.PostRenderersChanged() {
			why = append(why, "post-renderers changed")
		}
		if !sameC && (!r.PostRenderersChanged() || chartVersion(last.Chart) != target) {
			why = append(why, "chart "+chartVersion(last.Chart)+" -> "+target)
		}
		if !sameV {
			why = append(why, "values changed")
		}
		pr.out.Action, pr.out.Reason = report.ActionUpgrade, fmt.Sprintf("%s: %s (revision %d)", from, strings.Join(why, ", "), res.Version)
	}
	pr.out.Reason += helmstep.DependenciesNote(r.Dependencies()) + helmstep.TestsNote(helmstep.TestsToRun(res, h))
	if len(r.Adopts) > 0 { // takeOwnership
		pr.out.Reason += "; takes ownership of " + strings.Join(r.Adopts, ", ")
	}
	return pr.renderDiff(ctx, res.Manifest, r)
}

// fail marks the step as failing on apply with apply's error; an
// unreachable cluster fails the plan instead.
func (pr *probe) fail(err error) error {
	if kube.IsUnreachable(err) {
		return err
	}
	pr.out.Action, pr.out.Reason = report.ActionFail, err.Error()
	pr.diffUnavailable("apply would fail the step")
	return nil
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

// renderDiff compares each object of the rendered release with the
// cluster (the objects are listed with or without --diff); objects of the
// last revision that the new one drops are deletes.
func (pr *probe) renderDiff(ctx context.Context, manifest string, r *helmstep.Release) error {
	diffs, err := helmstep.Drift(ctx, pr.Clients, helmstep.DriftInput{Release: r.Name, Namespace: r.Namespace, Manifest: manifest, Ignore: pr.changeOptions(), Planned: r.ChecksKind})
	if err != nil {
		if kube.IsUnreachable(err) {
			return err
		}
		pr.diffUnavailable(err.Error())
		return nil
	}
	removed, err := helmstep.DroppedObjects(ctx, pr.Clients, r, manifest)
	if err != nil {
		if kube.IsUnreachable(err) {
			return err
		}
		pr.diffUnavailable(err.Error())
		return nil
	}
	return pr.driftDiffs(ctx, append(r.CRDs, diffs...), removed)
}

// driftDiffs lists the objects the release changes, with their diffs, and
// those the upgrade drops (delete, or keep), each dropped CRD also named in
// the step's reason and a kept one in a warning.
func (pr *probe) driftDiffs(ctx context.Context, diffs []helmstep.ObjectDiff, removed []helmstep.Dropped) error {
	var parts []string
	for _, d := range diffs {
		obj := d.Desired
		pr.out.Objects = append(pr.out.Objects, pr.digested(report.ObjectPlan{Action: d.Action, Kind: d.Kind, Namespace: d.Namespace, Name: d.Name}, d.Desired, d.Live))
		if !pr.Diff {
			continue
		}
		text, err := objectDiff(title(obj), d.Live, d.Desired, pr.changeOptions(), pr.Redactor)
		if err != nil {
			return err
		}
		parts = append(parts, text)
	}
	for _, d := range removed {
		obj := d.Object
		op := objectPlan(d.Action, obj)
		op.Reason, op.With = d.Reason, d.With
		pr.out.Objects = append(pr.out.Objects, pr.digested(op, nil, obj))
		switch {
		case !kube.IsCRD(obj) || d.Reason == "":
		case d.Action == report.ActionKeep:
			pr.out.Reason += fmt.Sprintf("; keeps CRD %s: %s", obj.GetName(), d.Reason)
			kube.Warn(ctx, kube.ObjectName(obj), "the chart no longer renders it and the upgrade keeps it: "+d.Reason)
		case d.With != "":
			pr.out.Reason += fmt.Sprintf("; deletes CRD %s and %s (%s)", obj.GetName(), d.With, d.Reason)
		}
		if pr.Diff && d.Action == report.ActionDelete {
			text, err := objectDiff(title(obj), obj, nil, pr.changeOptions(), pr.Redactor)
			if err != nil {
				return err
			}
			parts = append(parts, text)
		}
	}
	pr.setDiff(parts)
	return nil
}

// diffUnavailable notes why there is no diff (only under --diff).
func (pr *probe) diffUnavailable(reason string) {
	if pr.Diff {
		pr.out.DiffNote = unavailable(reason)
	}
}

func chartVersion(ch *chartv2.Chart) string {
	if ch != nil && ch.Metadata != nil {
		return ch.Metadata.Name + "@" + ch.Metadata.Version
	}
	return "(unknown)"
}
