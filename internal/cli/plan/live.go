package plan

import (
	"context"

	"github.com/khook/khook/report"
	"github.com/khook/khook/runner/helmstep"
	"github.com/khook/khook/runner/kube"
	runplan "github.com/khook/khook/runner/plan"
	"github.com/khook/khook/spec"
)

// LiveCluster is the live planner: clients from --kubeconfig/--context, then
// every step probed against the cluster (read-only; --diff adds server-side
// dry-run diffs).
func LiveCluster(ctx context.Context, opts *Options, s *spec.Spec) (*report.Plan, error) {
	clients, err := kube.NewClients(opts.F.Global.Kubeconfig, opts.F.Global.Context)
	if err != nil {
		return nil, err
	}
	return LiveWith(ctx, clients, opts, s)
}

// LiveWith plans against existing clients (tests pass the harness cluster's).
func LiveWith(ctx context.Context, clients *kube.Clients, opts *Options, s *spec.Spec) (*report.Plan, error) {
	if err := clients.Ping(ctx); err != nil {
		return nil, err
	}
	live := &runplan.Live{Clients: clients, Redactor: opts.F.Redactor, Diff: opts.Diff}
	if opts.Diff {
		// Charts are fetched the way apply fetches them: a new repository or
		// OCI version can be rendered and diffed against the live objects.
		charts := helmstep.New(clients, s.BaseDir, opts.F.Redactor)
		defer charts.Close()
		live.LoadChart = charts.LoadChart
	}
	return live.Plan(ctx, s)
}
