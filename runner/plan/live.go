package plan

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner/helmstep"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/planfile"
	"github.com/khook/khook/spec"
)

// ClusterPlanner predicts, per step, what apply would do against the cluster. It only
// reads: GETs, LISTs and server-side dry runs (DryRun=All), never a write.
type ClusterPlanner struct {
	Clients  *kube.Clients
	Redactor *redact.Redactor
	// Diff adds unified diffs (plan --diff).
	Diff bool
	// Parallelism bounds concurrent probes; 0 means 8.
	Parallelism int
	// Helm is apply's helm executor: helm steps are predicted through its
	// pipeline (chart, values, a dry run of the install or upgrade).
	Helm *helmstep.Executor
	// Digest, when set, records what each prediction was made against
	// (Plan.Digests, per object desired and live digests, helm release
	// digests): what a saved plan and its fingerprint hold.
	Digest *planfile.Hasher
	// LookupSecrets is what Helm's lookup of a Secret gets while a chart is
	// rendered for the plan: LookupMask ("": read, values masked),
	// LookupDeny (nothing, as in a client-side render), LookupAllow (read,
	// values not masked).
	LookupSecrets string
	// WarningsAsErrors plans a step the API server warned about as fail.
	WarningsAsErrors bool
}

// The lookup-secrets policies (spec: the CLI's --lookup-secrets and khook
// ci's lookup-secrets input; a pull request from a fork defaults to deny).
const (
	LookupMask  = "mask"
	LookupDeny  = "deny"
	LookupAllow = "allow"
)

// CheckLookupSecrets says what is wrong with a lookup-secrets value.
func CheckLookupSecrets(v string) error {
	switch v {
	case "", LookupMask, LookupDeny, LookupAllow:
		return nil
	}
	return fmt.Errorf("lookup-secrets is %q: use mask (read Secrets in templates, mask their values; the default), deny (a lookup of a Secret returns nothing) or allow (read them unmasked)", v)
}

// Plan probes every step concurrently and returns the plan in DAG order. A
// step that cannot be assessed yet is "unknown" with the reason; an error
// (the cluster is unreachable, a manifest file is missing) fails the plan.
func (l *ClusterPlanner) Plan(ctx context.Context, s *spec.Spec) (*model.Plan, error) {
	p := skeleton(s)
	p.Offline = false
	p.Server = redact.StripURLCredentials(l.Clients.Config.Host)
	producers := producersOf(s)
	limit := l.Parallelism
	if limit <= 0 {
		limit = 8
	}
	sem := make(chan struct{}, limit)
	errs := make([]error, len(p.Steps))
	var wg sync.WaitGroup
	for i := range p.Steps {
		ps := &p.Steps[i]
		st := s.Step(ps.Name)
		if st == nil || st.Excluded() {
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			pr := &probe{ClusterPlanner: l, spec: s, step: st, out: ps, producers: producers}
			warns := &kube.Warnings{}
			if err := pr.run(kube.WithWarnings(ctx, warns)); err != nil {
				errs[i] = fmt.Errorf("plan of step %s: %w", st.Name, l.Clients.Explain(err))
			}
			pr.warned(warns)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, l.Redactor.Error(err)
		}
	}
	for i := range p.Steps {
		ps := &p.Steps[i]
		ps.Reason = l.Redactor.String(ps.Reason)
		ps.Diff = l.Redactor.String(ps.Diff)
		ps.DiffNote = l.Redactor.String(ps.DiffNote)
		if model.IsChange(ps.Action) {
			p.Changes = true
		}
	}
	p.Totals = model.PlanTotals(p.Steps)
	if l.Digest != nil {
		if err := l.planDigests(ctx, s, p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// probe predicts one step.
type probe struct {
	*ClusterPlanner
	spec      *spec.Spec
	step      *spec.Step
	out       *model.PlanStep
	producers *producers
	// lookupDenied is set when a template's lookup of a Secret was denied.
	lookupDenied atomic.Bool
}

func (pr *probe) run(ctx context.Context) error {
	st := pr.step
	switch {
	case st.Helm != nil:
		return pr.helm(ctx)
	case st.Apply != nil:
		return pr.apply(ctx)
	case st.Delete != nil:
		return pr.delete(ctx)
	case st.Patch != nil:
		return pr.patch(ctx)
	case st.Wait != nil:
		return pr.wait(ctx)
	case st.Rollout != nil:
		return pr.rollout(ctx)
	case st.Job != nil:
		return pr.job(ctx)
	}
	return fmt.Errorf("the step has no action block")
}

// unknown marks the step as not assessable yet.
func (pr *probe) unknown(reason string) {
	pr.out.Action, pr.out.Reason = model.ActionUnknown, reason
	if pr.Diff {
		pr.out.DiffNote = unavailable(reason)
	}
}

// setDiff records a step's diff: the text, or "no changes".
func (pr *probe) setDiff(parts []string) {
	if !pr.Diff {
		return
	}
	pr.out.Diff = joinDiffs(parts)
	if pr.out.Diff == "" {
		pr.out.DiffNote = NoteNoChanges
	}
}
