package helmstep

import (
	"context"
	"fmt"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/chartsource"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/objdiff"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/words"
)

// crds: only (docs/charts.md, "CRDs"): helmfile's bootstrap
// `template --include-crds --no-hooks | select CRDs | kubectl apply
// --server-side`. The chart is rendered as the step would install it (same
// chart, values, post-renderers, release name, namespace and the cluster's
// version), and only its CustomResourceDefinitions are applied: crds/ and
// those its templates render. No release is stored, no hook runs, no other
// object is written. Each CRD goes through the crds/ machinery: the CRD
// safety checks (PlanApply), server-side apply with khook's field manager,
// Established awaited by watch. One path for apply and plan (dry).

// onlyCRD is one CRD of a crds: only step as its path decided it.
type onlyCRD struct {
	req    *kube.ApplyRequest
	answer *unstructured.Unstructured // the server's (dry-run) answer; live when unchanged
	action model.Action
}

// onlyCRDsRun is what the path did or (dry) would do.
type onlyCRDsRun struct {
	r      *Release
	crds   []onlyCRD
	writes int
}

// applyOnlyCRDs is Execute for crds: only.
func (e *Executor) applyOnlyCRDs(ctx context.Context, st *spec.Step) (runner.Outcome, error) {
	run, err := e.onlyCRDs(ctx, st, kube.DryRunNone, nil)
	out := runner.Outcome{Writes: run.writes}
	counts := map[model.Did]int{}
	for _, c := range run.crds {
		did := c.action.Done()
		counts[did]++
		out.Changes = append(out.Changes, model.Change{Action: did, Kind: "CustomResourceDefinition", Name: c.req.Desired.GetName()})
	}
	if err != nil {
		return out, err
	}
	inv := &model.Inventory{}
	for _, c := range run.crds {
		gvk := kube.CRDMapping.GroupVersionKind
		inv.Items = append(inv.Items, model.Owned{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Name: c.answer.GetName(), UID: string(c.answer.GetUID()), Adopted: c.req.Adopts()})
	}
	out.Inventory = inv
	out.Detail = fmt.Sprintf("%s: %s (crds: only, no release)", run.r.src.What, onlyCRDsCounts(counts, len(run.crds)))
	return out, nil
}

func onlyCRDsCounts(counts map[model.Did]int, n int) string {
	if n == 0 {
		return "the chart has no CRDs"
	}
	var parts []string
	for _, did := range []model.Did{model.DidCreate, model.DidConfigure, model.DidUnchanged} {
		if counts[did] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s %s", counts[did], words.Plural(counts[did], "CRD", "CRDs"), did))
		}
	}
	return strings.Join(parts, ", ")
}

// planOnlyCRDs is Plan for crds: only: the same path as a server dry run,
// each CRD create, configure or unchanged with the server's answer to diff.
func (e *Executor) planOnlyCRDs(ctx context.Context, st *spec.Step, in runner.PlanInput) (runner.Prediction, error) {
	var p runner.Prediction
	run, err := e.onlyCRDs(ctx, st, kube.DryRunServer, in.APIVersions)
	if run.r != nil && run.r.src != nil {
		p.Release = &runner.PlannedRelease{Chart: ChartContent(run.r.src.Chart), Values: run.r.Values, ChartName: chartName(run.r.src.Chart)}
	}
	if err != nil {
		return p, err
	}
	counts := map[model.Did]int{}
	p.Action = model.ActionUnchanged
	for _, c := range run.crds {
		counts[c.action.Done()]++
		po := runner.PlannedObject{Action: c.action, Kind: "CustomResourceDefinition", Name: c.req.Desired.GetName(), Desired: c.answer, Live: c.req.Live}
		if c.action == model.ActionUnchanged || c.answer == nil {
			po.Desired = c.req.Desired
		}
		p.Objects = append(p.Objects, po)
		switch {
		case c.action == model.ActionConfigure:
			p.Action = model.ActionConfigure
		case c.action == model.ActionCreate && p.Action == model.ActionUnchanged:
			p.Action = model.ActionCreate
		}
	}
	what := chartVersion(run.r.src.Chart)
	if p.Action == model.ActionUnchanged {
		p.Reason = fmt.Sprintf("chart %s: %s", what, words.Plural(len(run.crds), "its CRD matches the cluster", fmt.Sprintf("its %d CRDs match the cluster", len(run.crds))))
		if len(run.crds) == 0 {
			p.Reason = fmt.Sprintf("chart %s has no CRDs", what)
		}
	} else {
		p.Reason = fmt.Sprintf("chart %s: %s", what, onlyCRDsCounts(counts, len(run.crds)))
	}
	p.Reason += run.r.src.Note()
	return p, nil
}

// onlyCRDs is the one path: load the chart and values, render, then per
// CRD the request apply sends (PlanApply: the CRD safety checks on an
// update), dry-run first; only what the server's answer says would change
// is sent for real, so a converged step writes nothing, and only once
// every CRD passed: a refused one fails the step before any write. A plan
// (dry) renders with the API versions earlier steps register (apiVersions).
func (e *Executor) onlyCRDs(ctx context.Context, st *spec.Step, dry kube.DryRunStrategy, apiVersions []string) (onlyCRDsRun, error) {
	name, ns := chartsource.Target(st)
	r := &Release{Name: name, Namespace: ns, step: st}
	run := onlyCRDsRun{r: r}
	if err := e.Load(ctx, r); err != nil {
		return run, err
	}
	fail := func(err error) error {
		return e.clients.Explain(fmt.Errorf("CRDs of %s (crds: only, release name %s, namespace %s): %w", r.src.What, name, ns, err))
	}
	caps, err := e.onlyCRDsCapabilities(dry, apiVersions)
	if err != nil {
		return run, fail(err)
	}
	crds, err := renderCRDs(ctx, r, caps)
	if err != nil {
		return run, fail(err)
	}
	opts, _ := objdiff.IgnoreOptions(st.Ignored) // validated
	for _, crd := range crds {
		req, err := crdRequest(ctx, e.clients, crd, opts)
		if err != nil {
			return onlyCRDsRun{r: r}, fail(err) // nothing written
		}
		// Always the server's dry run, never objdiff.Holds: a field the chart
		// stops setting is removed by the apply, which only the server's
		// answer shows.
		answer, err := e.clients.Send(ctx, req, kube.DryRunServer)
		if err != nil {
			return onlyCRDsRun{r: r}, fail(err) // nothing written
		}
		c := onlyCRD{req: req, answer: answer, action: objdiff.Decide(req.Live, answer, opts).Action}
		if req.Terminating != nil {
			c.action = model.ActionCreate
		}
		run.crds = append(run.crds, c)
	}
	if dry.IsDryRun() {
		return run, nil
	}
	// Every CRD passed its checks and the server's dry run: only now is
	// anything written, so a refused CRD leaves the others as they were.
	for i := range run.crds {
		c := &run.crds[i]
		if c.action == model.ActionUnchanged {
			continue
		}
		answer, err := e.clients.Send(ctx, c.req, kube.DryRunNone)
		if err != nil {
			run.crds = run.crds[:i]
			return run, fail(err)
		}
		c.answer = answer
		run.writes++
	}
	for _, c := range run.crds {
		if err := e.clients.WaitCRDEstablished(ctx, c.req.Desired.GetName()); err != nil {
			return run, fail(fmt.Errorf("CRD %s: %w", c.req.Desired.GetName(), err))
		}
	}
	return run, nil
}

// renderCRDs are the chart's CRDs (readCRDs): its crds/, then those its
// templates render, hooks left out. The templates are rendered as the
// install would render them, with the cluster's version and API versions
// (plus, in a plan, those earlier steps register) but without the cluster
// (lookup finds nothing), as helm template.
func renderCRDs(ctx context.Context, r *Release, caps *common.Capabilities) ([]*unstructured.Unstructured, error) {
	read, err := readCRDs(r.src.Chart, func() (string, error) {
		rendered, err := renderWithoutCluster(ctx, r, caps)
		if err != nil {
			return "", fmt.Errorf("cannot render the chart: %w", chartsource.OneLine(err))
		}
		return rendered, nil
	})
	if err != nil {
		return nil, err
	}
	crds := make([]*unstructured.Unstructured, len(read))
	for i, c := range read {
		crds[i] = c.obj
	}
	return crds, nil
}

// onlyCRDsCapabilities are the cluster's version and API versions: a
// plan's (read once, plus what earlier steps register), or read afresh for
// apply, after earlier steps registered their kinds.
func (e *Executor) onlyCRDsCapabilities(dry kube.DryRunStrategy, apiVersions []string) (*common.Capabilities, error) {
	if !dry.IsDryRun() {
		return readCapabilities(e.clients.Discovery)
	}
	caps, err := e.dryRunCapabilities()
	if err != nil {
		return nil, fmt.Errorf("cannot read the cluster's capabilities: %w", err)
	}
	caps = caps.Copy()
	caps.APIVersions = append(caps.APIVersions, apiVersions...)
	return caps, nil
}

// OnlyCRDNames are the names of the CRDs a crds: only step applies, as a
// plan renders them: pruning compares the step's inventory with them.
func (e *Executor) OnlyCRDNames(ctx context.Context, st *spec.Step) ([]string, error) {
	name, ns := chartsource.Target(st)
	r := &Release{Name: name, Namespace: ns, step: st}
	if err := e.Load(ctx, r); err != nil {
		return nil, err
	}
	caps, err := e.onlyCRDsCapabilities(kube.DryRunServer, nil)
	if err != nil {
		return nil, e.redactor.Error(err)
	}
	crds, err := renderCRDs(ctx, r, caps)
	if err != nil {
		return nil, e.redactor.Error(err)
	}
	names := make([]string, len(crds))
	for i, crd := range crds {
		names[i] = crd.GetName()
	}
	return names, nil
}
