package helmstep

import (
	"context"
	"fmt"
	"strings"

	rcommon "helm.sh/helm/v4/pkg/release/common"
	rel "helm.sh/helm/v4/pkg/release/v1"
)

// The release reconciler. decide is the one decision over what a step wants
// of its release (the helm: block, or its removal for delete.release, prune
// and destroy), the release history (Release.Last) and the live objects (the
// drift of a converged release), the same questions for apply and plan;
// Execute and Plan only turn its decision into an outcome or a prediction,
// as Helm's pkg/action runs one Run with a dry-run mode (kube.DryRunStrategy).
// The chart's crds/ are decided by crdRequests for
// both, as part of an install or upgrade.

// verdict is what the reconciler decided to do with a release.
type verdict int

const (
	doFail      verdict = iota + 1 // the step cannot go on: decision.err is apply's error and plan's prediction
	doSkip                         // skipIf: installed, and the release is
	doRecover                      // the release is pending: apply recovers it (recover.go), then decides again; plan says pending
	doUnchanged                    // deployed from the step's chart and values, and its live objects match
	doInstall                      // no release stands: install (replacing an uninstalled one kept in history)
	doUpgrade                      // a release stands: upgrade (replacing objects under onImmutable: recreate)
	doUninstall                    // removal of a release that stands
	doAbsent                       // removal of a release that does not stand, and ignoreNotFound accepts it
)

// decision is decide's answer with the inputs its outcome needs.
type decision struct {
	do verdict
	// reason is the sentence of a skip or of an absent release; of an
	// upgrade, what changed since the release's revision (the plan's
	// reason).
	reason string
	err    error // doFail
	// drift: an upgrade of a converged release whose live objects drifted
	// from it (plan predicts it without rendering the release again).
	drift []ObjectDiff
	// uncompared: an upgrade of a converged release whose live objects
	// could not be compared with it (apply upgrades; a plan fails on an
	// unreachable cluster).
	uncompared error
	target     *rel.Release // doUninstall: the revision to uninstall
}

// removal is what delete.release, prune and destroy want of a release: gone.
type removal struct{ ignoreNotFound bool }

// decide is the release reconciler's one decision (see above). A helm step's
// release is loaded (chart and values) on the way, unless it is skipped or
// pending.
func (e *Executor) decide(ctx context.Context, r *Release) decision {
	if r.remove != nil {
		return decideRemoval(r.Name, r.Namespace, r.Last, r.remove.ignoreNotFound)
	}
	if r.step.Helm.SkipIf == "installed" && r.Installed() {
		return decision{do: doSkip, reason: fmt.Sprintf("release %s already installed (revision %d; skipIf: installed)", r.Name, r.Last.Version)}
	}
	if r.Installed() && r.Last.Info.Status.IsPending() {
		return decision{do: doRecover}
	}
	if err := e.Load(ctx, r); err != nil {
		return decision{do: doFail, err: err}
	}
	// Unchanged: deployed from the step's chart and values (as Load found
	// them), and its live objects have not drifted from the release;
	// otherwise apply upgrades.
	var uncompared error
	if r.Installed() && r.Last.Info.Status == rcommon.StatusDeployed && r.sameChart && r.sameValues {
		diffs, err := Drift(ctx, e.clients, DriftInput{Release: r.Name, Namespace: r.Last.Namespace, Manifest: r.Last.Manifest, Applied: true, Ignore: r.ignore})
		switch {
		case err != nil:
			// The upgrade re-applies everything; a plan's dry run of it
			// says whether the server takes it.
			uncompared = err
		case len(diffs) == 0:
			return decision{do: doUnchanged}
		default:
			return decision{do: doUpgrade, drift: diffs}
		}
	}
	if !r.Installed() {
		return decision{do: doInstall}
	}
	return decision{do: doUpgrade, uncompared: uncompared, reason: upgradeCauses(r, uncompared)}
}

// upgradeCauses says what changed since the release's revision: its
// post-renderers, its chart, its values, or live objects that could not be
// compared.
func upgradeCauses(r *Release, uncompared error) string {
	var why []string
	target := chartVersion(r.src.Chart)
	if r.postRenderersChanged {
		why = append(why, "post-renderers changed")
	}
	if !r.sameChart && (!r.postRenderersChanged || chartVersion(r.Last.Chart) != target) {
		why = append(why, "chart "+chartVersion(r.Last.Chart)+" -> "+target)
	}
	if !r.sameValues {
		why = append(why, "values changed")
	}
	if uncompared != nil {
		why = append(why, fmt.Sprintf("the live objects cannot be compared with the release (%v): apply upgrades", uncompared))
	}
	return strings.Join(why, ", ")
}

// decideRemoval is the decision for a release that should be gone: the
// revision to uninstall, or nothing when it is absent and ignoreNotFound
// accepts it; an absent release that must exist is the error apply fails
// with and plan predicts as fail.
func decideRemoval(name, ns string, last *rel.Release, ignoreNotFound bool) decision {
	switch {
	case installed(last):
		return decision{do: doUninstall, target: last}
	case ignoreNotFound:
		return decision{do: doAbsent, reason: fmt.Sprintf("release %s not found in namespace %s: nothing to uninstall", name, ns)}
	}
	return decision{do: doFail, err: fmt.Errorf("release %s not found in namespace %s (set ignoreNotFound: true to accept an absent release)", name, ns)}
}
