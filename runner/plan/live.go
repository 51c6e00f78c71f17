package plan

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/objdiff"
	"github.com/khook/khook/runner/planfile"
	"github.com/khook/khook/runner/policy"
	"github.com/khook/khook/spec"
)

// Live is the live plan of a spec: it predicts, per step, what apply would
// do against the cluster, asking each step's executor (its Executors, a
// runner.Planner); it is not one itself, it plans a whole spec. It only
// reads: GETs, LISTs and server-side dry runs (DryRun=All), never a write.
type Live struct {
	Clients  *kube.Clients
	Redactor *redact.Redactor
	// Diff adds unified diffs (plan --diff).
	Diff bool
	// Parallelism bounds concurrent probes; 0 means 8.
	Parallelism int
	// Executors are apply's executors: each step is predicted by its own
	// executor's Plan, Execute's path with a server-side dry run.
	Executors runner.Planner
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
	// Policies checks each step's predicted objects (nil: none in force).
	Policies *policy.Set
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
func (l *Live) Plan(ctx context.Context, s *spec.Spec) (*model.Plan, error) {
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
			pr := &probe{Live: l, spec: s, step: st, out: ps, producers: producers}
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
		for _, o := range ps.Objects {
			// A step whose own action is no change (a job's run) may
			// still create an object (the namespace it creates), which
			// apply counts as a change: so does the plan.
			if model.IsChange(o.Action) {
				p.Changes = true
			}
		}
	}
	p.Totals = model.PlanTotals(p.Steps)
	if l.Policies != nil {
		p.PolicyFiles, p.PolicyNotes = l.Policies.Files, l.Policies.PlanNotes()
	}
	if l.Digest != nil {
		if err := l.planDigests(ctx, s, p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// probe predicts one step.
type probe struct {
	*Live
	spec      *spec.Spec
	step      *spec.Step
	out       *model.PlanStep
	producers *producers
	// lookupDenied is set when a template's lookup of a Secret was denied.
	lookupDenied atomic.Bool
}

func (pr *probe) run(ctx context.Context) error {
	st := pr.step
	in := runner.PlanInput{APIVersions: pr.producers.apiVersionsBefore(pr.spec, st), Lookup: pr.lookupConfig, Produced: pr.producers.registers, CreatesNamespace: pr.producers.createsNamespace, CRDs: pr.producers.crdsBefore(pr.spec, st)}
	pred, err := pr.Executors.Plan(ctx, st, in)
	pr.releaseDigest(pred.Release)
	if pred.Release != nil {
		pr.sayLookupsDenied(pred.Release.ChartName)
	}
	if err != nil {
		return pr.failed(err)
	}
	if err := pr.predicted(pred); err != nil {
		return err
	}
	pr.checkPolicies(ctx, pred.Objects)
	return nil
}

// failed decides, in one place for every step type, what the error an
// executor's Plan returns makes of the step (apply's error, by the plan's
// construction): an unreachable cluster fails the plan; what an earlier
// step provides (a namespace, a kind, an object) makes it unknown, naming
// that step; anything else, the API server's refusals first (immutable
// field, strict validation, admission webhook, RBAC, quota, a namespace no
// step creates), is fail with apply's sentence.
func (pr *probe) failed(err error) error {
	if kube.IsUnreachable(err) {
		return err
	}
	if p, ok := runner.AsPending(err); ok {
		switch {
		case p.Namespace != "":
			if _, later := pr.producers.namespaces[p.Namespace]; later {
				if p.Then != "" {
					pr.out.Action, pr.out.Reason = p.Then, pr.producers.namespaceReason(p.Namespace)
					pr.noDiff()
					return nil
				}
				pr.unknown(pr.producers.namespaceReason(p.Namespace))
				return nil
			}
		case p.Kind != "":
			pr.unknown(pr.producers.kindReason(p.Kind, p.Group))
			return nil
		case p.Object != "":
			if _, later := pr.producers.objects[p.Object]; later || p.Fallback == "" {
				pr.unknown(pr.producers.objectReason(p.Object, p.What))
				return nil
			}
			pr.out.Action, pr.out.Reason = p.Fallback, err.Error()
			pr.noDiff()
			return nil
		default:
			pr.unknown(err.Error())
			return nil
		}
	}
	pr.out.Action, pr.out.Reason = model.ActionFail, err.Error()
	pr.diffUnavailable("apply would fail the step")
	return nil
}

// helmVerbs are the verbs of a helm step's plan line per planned action;
// an action not here (skip, fail, unknown) keeps the step's summary, and
// its reason says what happens.
var helmVerbs = map[model.Action]spec.HelmVerb{
	model.ActionInstall:   spec.HelmInstall,
	model.ActionUpgrade:   spec.HelmUpgrade,
	model.ActionUnchanged: spec.HelmNoChange,
	model.ActionNoop:      spec.HelmNoChange,
	model.ActionUninstall: spec.HelmUninstall,
}

// predicted records an executor's prediction: the action and reason, each
// object with its digests, and the diff.
func (pr *probe) predicted(p runner.Prediction) error {
	pr.out.Action, pr.out.Reason = p.Action, p.Reason
	if verb, ok := helmVerbs[p.Action]; ok && pr.step.Helm != nil { // the plan line says the action it plans
		if install := spec.Summary(pr.step); strings.HasPrefix(pr.out.Summary, install) {
			pr.out.Summary = spec.SummaryAs(pr.step, verb) + strings.TrimPrefix(pr.out.Summary, install)
		}
	}
	var parts []string
	for _, o := range p.Objects {
		op := pr.digested(model.ObjectPlan{Action: o.Action, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, Reason: o.Reason, With: o.With}, o.Desired, o.Live)
		if o.LiveDigest != nil && pr.Digest != nil {
			op.Live = pr.Digest.Sum("release", o.LiveDigest)
		}
		pr.out.Objects = append(pr.out.Objects, op)
		if !pr.Diff || pr.step.Delete != nil {
			continue
		}
		var from, to *unstructured.Unstructured
		switch o.Action {
		case model.ActionCreate:
			to = o.Desired
		case model.ActionConfigure, model.ActionReplace:
			from, to = o.Live, o.Desired
		case model.ActionDelete:
			from = o.Live
		default:
			continue
		}
		name := to
		if name == nil {
			name = from
		}
		text, err := objdiff.Text(objdiff.Title(name), from, to, pr.changeOptions(), pr.Redactor)
		if ye := (*objdiff.YAMLError)(nil); errors.As(err, &ye) {
			return fmt.Errorf("cannot print %s as YAML: %v", kube.ObjectName(ye.Object), ye.Err)
		} else if err != nil {
			return err
		}
		parts = append(parts, text)
	}
	if p.Digest != nil && pr.Digest != nil && len(pr.out.Objects) > 0 {
		pr.out.Objects[0].Desired = pr.Digest.Sum(p.Digest.Kind, p.Digest.Data)
	}
	switch {
	case !pr.Diff:
	case p.DiffNote != "":
		pr.out.DiffNote = unavailable(p.DiffNote)
	case pr.step.Delete != nil && len(p.Objects) > 0:
		var names []string
		for _, o := range p.Objects {
			if o.Action == model.ActionDelete {
				names = append(names, "- "+o.Kind+" "+nsName(o.Namespace, o.Name))
			}
		}
		pr.out.Diff = "# deleted:\n" + strings.Join(names, "\n") + "\n"
	default:
		pr.setDiff(parts)
	}
	return nil
}

// unknown marks the step as not assessable yet.
func (pr *probe) unknown(reason string) {
	pr.out.Action, pr.out.Reason = model.ActionUnknown, reason
	if pr.Diff {
		pr.out.DiffNote = unavailable(reason)
	}
}

// diffUnavailable notes why there is no diff (only under --diff).
func (pr *probe) diffUnavailable(reason string) {
	if pr.Diff {
		pr.out.DiffNote = unavailable(reason)
	}
}

// noDiff notes "no changes" for a step with no diff of its own.
func (pr *probe) noDiff() {
	if pr.Diff {
		pr.out.DiffNote = NoteNoChanges
	}
}

// setDiff records a step's diff: the text, or "no changes".
func (pr *probe) setDiff(parts []string) {
	if !pr.Diff {
		return
	}
	pr.out.Diff = objdiff.Join(parts)
	if pr.out.Diff == "" {
		pr.out.DiffNote = NoteNoChanges
	}
}

func nsName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}
