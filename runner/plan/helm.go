package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	rel "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/report"
	"github.com/khook/khook/runner/helmstep"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/spec"
)

// helm predicts install / upgrade / unchanged / skip from the release
// history (read from Helm's storage, no write), the chart and values the
// step would use, and the live objects (helmstep.Drift: server-side dry
// runs). With --diff, the chart is rendered and each rendered object is
// compared with the live one, so out-of-band edits and value changes show.
func (pr *probe) helm(ctx context.Context) error {
	st := pr.step
	h := st.Helm
	name, ns := helmstep.Target(st)
	exists, err := namespaceExists(ctx, pr.Clients, ns)
	if err != nil {
		return err
	}
	if !exists && !h.CreateNamespace {
		pr.unknown(pr.producers.namespaceReason(ns))
		return nil
	}
	last, err := lastRelease(pr.Clients, name, ns)
	if err != nil {
		return err
	}
	installed := isInstalled(last)
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
	ch, chartNote := pr.desiredChart(ctx, h, last, installed)
	vals, valsNote := pr.desiredValues(h)
	target := chartVersion(ch, h.Version)
	pr.releaseDigest(last, ch, vals)

	if !installed {
		pr.out.Action, pr.out.Reason = report.ActionInstall, fmt.Sprintf("release %s is not installed: install chart %s", name, target)
		return pr.renderDiff(ctx, ch, vals, name, ns, false, nil, firstOf(chartNote, valsNote))
	}
	from := fmt.Sprintf("revision %d, chart %s", last.Version, chartVersion(last.Chart, ""))
	switch {
	case ch == nil:
		pr.out.Action, pr.out.Reason = report.ActionUpgrade, fmt.Sprintf("%s -> chart %s", from, target)
		if pr.Diff {
			pr.out.DiffNote = unavailable(chartNote)
		}
		return nil
	case vals == nil:
		pr.unknown(valsNote)
		return nil
	case last.Info.Status != rcommon.StatusDeployed:
		pr.out.Action, pr.out.Reason = report.ActionUpgrade, fmt.Sprintf("%s is %s: upgrade to chart %s", from, last.Info.Status, target)
		return pr.renderDiff(ctx, ch, vals, name, ns, true, last, "")
	}
	sameC, sameV := helmstep.SameChart(last.Chart, helmstep.AsStored(ch, pr.reload(ctx, h), vals)), helmstep.SameValues(last.Config, vals)
	if sameC && sameV {
		diffs, err := helmstep.Drift(ctx, pr.Clients, helmstep.DriftInput{Release: name, Namespace: last.Namespace, Manifest: last.Manifest, Applied: true})
		if err != nil {
			if kube.IsUnreachable(err) {
				return err
			}
			pr.out.Action, pr.out.Reason = report.ActionUpgrade, fmt.Sprintf("%s: the live objects cannot be compared (%v): apply upgrades", from, err)
			if pr.Diff {
				pr.out.DiffNote = unavailable(err.Error())
			}
			return nil
		}
		if len(diffs) == 0 {
			pr.out.Action, pr.out.Reason = report.ActionUnchanged, fmt.Sprintf("%s: chart, values and live objects match", from)
			pr.setDiff(nil)
			return nil
		}
		pr.out.Action = report.ActionUpgrade
		pr.out.Reason = fmt.Sprintf("%s: %d live %s drifted from the release", from, len(diffs), pluralWord(len(diffs), "object", "objects"))
		return pr.driftDiffs(diffs, nil)
	}
	var why []string
	if !sameC {
		why = append(why, "chart "+chartVersion(last.Chart, "")+" -> "+target)
	}
	if !sameV {
		why = append(why, "values changed")
	}
	pr.out.Action, pr.out.Reason = report.ActionUpgrade, fmt.Sprintf("%s: %s", from, strings.Join(why, ", "))
	return pr.renderDiff(ctx, ch, vals, name, ns, true, last, "")
}

// renderDiff renders the chart and compares each object with the cluster
// (the objects are listed with or without --diff); objects of the last
// revision that the new one drops are deletes.
func (pr *probe) renderDiff(ctx context.Context, ch *chartv2.Chart, vals map[string]any, name, ns string, upgrade bool, last *rel.Release, note string) error {
	if ch == nil || vals == nil {
		pr.diffUnavailable(note)
		return nil
	}
	manifest, err := render(ch, vals, name, ns, upgrade, pr.lookupConfig())
	pr.sayLookupsDenied(ch)
	if err != nil {
		pr.diffUnavailable(err.Error())
		return nil
	}
	diffs, err := helmstep.Drift(ctx, pr.Clients, helmstep.DriftInput{Release: name, Namespace: ns, Manifest: manifest})
	if err != nil {
		if kube.IsUnreachable(err) {
			return err
		}
		pr.diffUnavailable(err.Error())
		return nil
	}
	var removed []*unstructured.Unstructured
	if last != nil {
		removed = droppedObjects(last.Manifest, manifest, ns)
	}
	return pr.driftDiffs(diffs, removed)
}

func (pr *probe) driftDiffs(diffs []helmstep.ObjectDiff, removed []*unstructured.Unstructured) error {
	var parts []string
	for _, d := range diffs {
		obj := d.Desired
		pr.out.Objects = append(pr.out.Objects, pr.digested(report.ObjectPlan{Action: d.Action, Kind: d.Kind, Namespace: d.Namespace, Name: d.Name}, d.Desired, d.Live))
		if !pr.Diff {
			continue
		}
		text, err := objectDiff(title(obj), d.Live, d.Desired)
		if err != nil {
			return err
		}
		parts = append(parts, text)
	}
	for _, obj := range removed {
		pr.out.Objects = append(pr.out.Objects, pr.digested(objectPlan(report.ActionDelete, obj), nil, obj))
		if pr.Diff {
			text, err := objectDiff(title(obj), obj, nil)
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

// desiredChart is the chart apply would install: a local chart loaded from
// disk; for a repository or OCI chart, the release's stored chart when the
// pinned version is the installed one (no download), else Live.LoadChart's;
// otherwise nil with why.
func (pr *probe) desiredChart(ctx context.Context, h *spec.Helm, last *rel.Release, installed bool) (*chartv2.Chart, string) {
	if isLocal(h.Chart) {
		ch, err := loader.Load(pr.localPath(h))
		if err != nil {
			return nil, fmt.Sprintf("cannot load local chart %s: %v", h.Chart, err)
		}
		return ch, ""
	}
	// A release stores its chart without subcharts: one with dependencies
	// must be fetched to render it whole.
	if installed && last.Chart != nil && last.Chart.Metadata != nil &&
		(h.Version == "" || h.Version == last.Chart.Metadata.Version) && chartName(h.Chart) == last.Chart.Metadata.Name &&
		(len(last.Chart.Metadata.Dependencies) == 0 || pr.LoadChart == nil) {
		return last.Chart, ""
	}
	if pr.LoadChart != nil {
		ch, err := pr.LoadChart(ctx, h)
		if err != nil {
			return nil, fmt.Sprintf("cannot load chart %s %s: %v", h.Chart, orLatest(h.Version), err)
		}
		return ch, ""
	}
	return nil, fmt.Sprintf("chart %s %s is downloaded by apply; plan renders local charts and installed versions only", h.Chart, orLatest(h.Version))
}

// reload loads the step's chart again (helmstep.AsStored needs a fresh copy
// of a chart with dependencies): a local chart from disk, another from
// LoadChart; nil when plan cannot fetch charts.
func (pr *probe) reload(ctx context.Context, h *spec.Helm) func() (*chartv2.Chart, error) {
	if isLocal(h.Chart) {
		p := pr.localPath(h)
		return func() (*chartv2.Chart, error) { return loader.Load(p) }
	}
	if pr.LoadChart == nil {
		return nil
	}
	return func() (*chartv2.Chart, error) { return pr.LoadChart(ctx, h) }
}

// localPath is where a local chart is: relative to the spec's directory.
func (pr *probe) localPath(h *spec.Helm) string {
	if filepath.IsAbs(h.Chart) {
		return h.Chart
	}
	return filepath.Join(pr.spec.BaseDir, h.Chart)
}

// desiredValues merges valuesFrom files then inline values as apply does;
// url sources are not fetched by plan (nil with why).
func (pr *probe) desiredValues(h *spec.Helm) (map[string]any, string) {
	out := map[string]any{}
	for i, src := range h.ValuesFrom {
		if src.URL != "" {
			return nil, fmt.Sprintf("valuesFrom[%d] is a url: plan does not fetch values", i)
		}
		p := src.File
		if !filepath.IsAbs(p) {
			p = filepath.Join(pr.spec.BaseDir, p)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Sprintf("cannot read valuesFrom[%d] file %s: %v", i, src.File, err)
		}
		m := map[string]any{}
		if err := yaml.Unmarshal(data, &m); err != nil {
			return nil, fmt.Sprintf("valuesFrom[%d] file %s is not a YAML map: %v", i, src.File, err)
		}
		out = loader.MergeMaps(out, m)
	}
	if len(h.Values) > 0 {
		inline, err := jsonForm(h.Values)
		if err != nil {
			return nil, fmt.Sprintf("values cannot be encoded: %v", err)
		}
		out = loader.MergeMaps(out, inline)
	}
	vals, err := jsonForm(out)
	if err != nil {
		return nil, fmt.Sprintf("values cannot be encoded: %v", err)
	}
	return vals, ""
}

// render renders a chart's templates into a release manifest (hooks, notes
// and partials dropped), as install or upgrade would. With cfg, templates'
// lookup calls read the cluster as they do on upgrade, so a value a chart
// generates once and then reuses through lookup (a certificate, a password)
// is not shown as changing.
func render(ch *chartv2.Chart, vals map[string]any, name, ns string, upgrade bool, cfg *rest.Config) (string, error) {
	// As install and upgrade do: drop disabled dependencies, import values.
	if err := chartutil.ProcessDependencies(ch, vals); err != nil {
		return "", fmt.Errorf("cannot process the chart's dependencies: %v", err)
	}
	opts := common.ReleaseOptions{Name: name, Namespace: ns, Revision: 1, IsInstall: !upgrade, IsUpgrade: upgrade}
	rv, err := util.ToRenderValues(ch, vals, opts, common.DefaultCapabilities)
	if err != nil {
		return "", fmt.Errorf("cannot compose the chart's values: %v", err)
	}
	var files map[string]string
	if cfg != nil {
		files, err = engine.RenderWithClient(ch, rv, cfg)
	} else {
		files, err = engine.Render(ch, rv)
	}
	if err != nil {
		return "", fmt.Errorf("cannot render the chart: %v", err)
	}
	for f := range files {
		if strings.HasSuffix(f, "NOTES.txt") {
			delete(files, f)
		}
	}
	_, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		return "", fmt.Errorf("cannot read the rendered chart: %v", err)
	}
	var b strings.Builder
	for _, m := range manifests {
		b.WriteString("---\n# Source: " + m.Name + "\n" + m.Content + "\n")
	}
	return b.String(), nil
}

// droppedObjects lists the objects of the old manifest that the new one no
// longer has: an upgrade deletes them.
func droppedObjects(oldManifest, newManifest, ns string) []*unstructured.Unstructured {
	key := func(u *unstructured.Unstructured) string {
		n := u.GetNamespace()
		if n == "" {
			n = ns
		}
		return u.GetAPIVersion() + "/" + u.GetKind() + "/" + n + "/" + u.GetName()
	}
	oldObjs, err1 := kube.DecodeManifests([]byte(oldManifest))
	newObjs, err2 := kube.DecodeManifests([]byte(newManifest))
	if err1 != nil || err2 != nil {
		return nil
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
	return out
}

// lastRelease reads a release's latest revision from Helm's Secret storage;
// nil when it has none.
func lastRelease(c *kube.Clients, name, ns string) (*rel.Release, error) {
	store := storage.Init(driver.NewSecrets(c.Typed.CoreV1().Secrets(ns)))
	r, err := store.Last(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("release %s in namespace %s: cannot read its history: %w", name, ns, c.Explain(err))
	}
	switch v := r.(type) {
	case *rel.Release:
		return v, nil
	case rel.Release:
		return &v, nil
	}
	return nil, fmt.Errorf("release %s in namespace %s: unexpected Helm release type %T", name, ns, r)
}

// releaseExists reports whether a release is installed (for delete.release).
func releaseExists(c *kube.Clients, name, ns string) (bool, error) {
	last, err := lastRelease(c, name, ns)
	if err != nil {
		return false, err
	}
	return isInstalled(last), nil
}

// isInstalled: the release has a revision that is not uninstalled.
func isInstalled(last *rel.Release) bool {
	return last != nil && last.Info != nil && last.Info.Status != rcommon.StatusUninstalled
}

func chartVersion(ch *chartv2.Chart, fallback string) string {
	if ch != nil && ch.Metadata != nil {
		return ch.Metadata.Name + "@" + ch.Metadata.Version
	}
	return orLatest(fallback)
}

func orLatest(v string) string {
	if v == "" {
		return "(latest)"
	}
	return v
}

// chartName is a repository or OCI chart's name: the last path element
// without a tag or digest.
func chartName(ref string) string {
	ref = strings.TrimPrefix(ref, "oci://")
	if i := strings.LastIndex(ref, "/"); i >= 0 {
		ref = ref[i+1:]
	}
	if i := strings.IndexAny(ref, ":@"); i >= 0 {
		ref = ref[:i]
	}
	return ref
}

func isLocal(p string) bool {
	return strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/")
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// jsonForm round-trips values through JSON, the form Helm stores them in.
func jsonForm(v any) (map[string]any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	return out, json.Unmarshal(raw, &out)
}
