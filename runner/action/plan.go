package action

import (
	"context"

	"github.com/khook/khook/report"
	"github.com/khook/khook/runner/helmstep"
	"github.com/khook/khook/runner/kube"
	runplan "github.com/khook/khook/runner/plan"
	"github.com/khook/khook/spec"
)

// Plan predicts what Apply would do, per step: offline from the spec alone,
// or against the cluster (read-only).
type Plan struct {
	Config *Configuration
	// Offline plans from the spec alone: the DAG, summaries and when:
	// outcomes, no actions assessed.
	Offline bool
	// Diff adds unified diffs from server-side dry-runs and rendered charts.
	Diff bool
}

// Run plans s. Its error is a run-level failure (the cluster unreachable);
// what a step cannot assess is an unknown action in the plan instead.
func (p *Plan) Run(ctx context.Context, s *spec.Spec) (*report.Plan, error) {
	if p.Config == nil {
		p.Config = &Configuration{}
	}
	if p.Offline {
		return runplan.Offline(s), nil
	}
	clients, err := p.Config.connect(ctx)
	if err != nil {
		return nil, err
	}
	ctx = kube.WithLiveCache(ctx) // one plan: one LIST per resource and namespace
	r := p.Config.redactor()
	live := &runplan.Live{Clients: clients, Redactor: r, Diff: p.Diff}
	if p.Diff {
		// Charts are fetched the way apply fetches them: a new repository or
		// OCI version can be rendered and diffed against the live objects.
		charts := helmstep.New(clients, s.BaseDir, r)
		defer charts.Close()
		live.LoadChart = charts.LoadChart
	}
	return live.Plan(ctx, s)
}
