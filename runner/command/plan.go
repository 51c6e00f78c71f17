package command

import (
	"context"
	"errors"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/dispatch"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/apischema"
	"github.com/khook/khook/runner/kube/manifest"
	runplan "github.com/khook/khook/runner/plan"
	"github.com/khook/khook/runner/planfile"
	"github.com/khook/khook/runner/policy"
	"github.com/khook/khook/runner/selection"
	"github.com/khook/khook/spec"
)

// PlanCommand predicts what Apply would do, per step: offline from the spec alone,
// or against the cluster (read-only).
type PlanCommand struct {
	Config *Configuration
	// Offline plans from the spec alone: the DAG, summaries and when:
	// outcomes, no actions assessed.
	Offline bool
	// Diff adds unified diffs from server-side dry-runs and rendered charts.
	Diff bool
	// KubeVersion is the Kubernetes version an offline plan checks API
	// versions against (zero: apischema.DefaultKubeVersion).
	KubeVersion apischema.KubeVersion
	// Selection picks the steps to plan (nil: every step); the others are
	// planned not selected, and a saved plan records it for apply --plan.
	Selection *model.Selection
}

// Run plans s. Its error is a run-level failure (the cluster unreachable);
// what a step cannot assess is an unknown action in the plan instead. A
// live plan carries its digests and fingerprint (runner/planfile).
func (p *PlanCommand) Run(ctx context.Context, s *spec.Spec) (*model.Plan, error) {
	if p.Config == nil {
		p.Config = &Configuration{}
	}
	sel, err := selectSteps(s, p.Selection, selection.Needs)
	if err != nil {
		return nil, err
	}
	if p.Offline {
		problems, warnings := runplan.CheckAPIs(ctx, s, OfflineKubeVersion(p.KubeVersion))
		if len(problems) > 0 {
			return nil, problems
		}
		pl := runplan.Offline(s)
		runplan.OfflineWarnings(pl, s, warnings, p.Config.WarningsAsErrors)
		set, err := policy.New(s)
		if err != nil {
			return nil, &Failure{Reason: model.ReasonValidation, Err: err}
		}
		runplan.OfflinePolicies(ctx, pl, s, set, OfflineKubeVersion(p.KubeVersion))
		pl.Selection = sel
		return pl, nil
	}
	if problems := manifest.OpenEncrypted(s, p.Config.redactor()); len(problems) > 0 {
		// Not a validation failure (exit 2, "changes" under
		// --detailed-exitcode): the files are well-formed, the keys missing.
		return nil, &Failure{Reason: model.ReasonStepFailed, Err: errors.New(problems.Error())}
	}
	clients, err := p.Config.connect(ctx)
	if err != nil {
		return nil, err
	}
	if sel.IsPartial() && sel.TargetOnly {
		prev, err := readRecord(ctx, clients, s)
		if err != nil {
			return nil, err
		}
		if err := checkTargetOnly(s, sel, prev, selection.Needs); err != nil {
			return nil, err
		}
	}
	pl, err := p.Config.livePlan(ctx, clients, s, p.Diff)
	if err != nil {
		return nil, err
	}
	pl.Selection = sel
	return pl, nil
}

// livePlan plans s against the cluster with digests and the fingerprint:
// plan and apply --plan's check both come here, so they decide alike.
func (c *Configuration) livePlan(ctx context.Context, clients *kube.Clients, s *spec.Spec, diff bool) (*model.Plan, error) {
	r := c.redactor()
	// Every step is predicted by apply's own executor (its Plan: Execute's
	// path with a server-side dry run): for helm, the chart a version range
	// resolves to now is the one the plan digests, rendered by a dry run of
	// the install or upgrade apply would run.
	exec := dispatch.New(clients, s.BaseDir, r)
	defer exec.Close()
	helm := exec.Helm()
	set, err := livePolicies(ctx, clients, s)
	if err != nil {
		return nil, err
	}
	live := &runplan.Live{Clients: clients, Redactor: r, Diff: diff, Executors: exec,
		Digest: planfile.NewHasher(c.PlanKey, r), LookupSecrets: c.LookupSecrets, WarningsAsErrors: c.WarningsAsErrors,
		Policies: set}
	ctx = kube.WithLiveCache(ctx) // one plan: one LIST per resource and namespace
	pl, err := live.Plan(ctx, s)
	if err != nil {
		return nil, err
	}
	rec, unread, err := planRecord(ctx, clients, s, c.LookupSecrets)
	if err != nil {
		return nil, r.Error(err)
	}
	chartsMoved(pl, rec)
	if err := planPrune(ctx, clients, helm, s, rec, unread, r, pl); err != nil {
		return nil, r.Error(err)
	}
	pl.Fingerprint = planfile.Fingerprint(pl)
	return pl, nil
}
