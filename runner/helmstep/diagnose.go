package helmstep

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	helmkube "helm.sh/helm/v4/pkg/kube"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	rel "helm.sh/helm/v4/pkg/release/v1"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/readiness"
	"github.com/khook/khook/runner/kube/wait"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/words"
)

// waitDiagnosis is what a session's release wait was stuck on. Helm waits
// for the release's own resources (those of its manifest); when that wait
// fails, diagnosingWaiter diagnoses exactly those resources at once, before
// an atomic step's rollback or uninstall removes them.
type waitDiagnosis struct {
	clients *kube.Clients
	limits  wait.DiagnoseLimits

	mu      sync.Mutex
	ctx     context.Context // the step's: an interrupted run is not diagnosed
	since   time.Time
	waiting helmkube.ResourceList // what the last wait began on
	done    bool                  // the first failed wait is diagnosed
	result  *model.Diagnosis
	// unready are the objects of the failed wait kstatus did not compute
	// Current when it failed, of awaited (held).
	unready []model.DiagnosedObject
	awaited int
}

// start arms the diagnosis for one install or upgrade.
func (d *waitDiagnosis) start(ctx context.Context) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ctx, d.since, d.waiting, d.result, d.done, d.unready, d.awaited = ctx, time.Now(), nil, nil, false, nil, 0
}

// began notes the resources a wait is on.
func (d *waitDiagnosis) began(rs helmkube.ResourceList) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.waiting = rs
}

// taken is the diagnosis of the first failed wait since start. When the
// step's deadline ended Helm's operation before its waiter returned, the
// wait that was under way is diagnosed now.
func (d *waitDiagnosis) taken(err error) *model.Diagnosis {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.waiting != nil {
		d.diagnose(d.waiting, err)
	}
	return d.result
}

// held is what the first failed wait since start was held by: the awaited
// objects not Current (as Helm's status wait judges them) and how many it
// awaited, diagnosed now if the step's deadline cut the wait off; 0 awaited
// when no wait was under way.
func (d *waitDiagnosis) held(err error) ([]model.DiagnosedObject, int, time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.waiting != nil {
		d.diagnose(d.waiting, err)
	}
	return d.unready, d.awaited, d.since
}

func (d *waitDiagnosis) record(rs helmkube.ResourceList, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.diagnose(rs, err)
}

func (d *waitDiagnosis) diagnose(rs helmkube.ResourceList, err error) {
	if d.ctx == nil || d.done || !wait.Diagnosable(d.ctx, err) {
		return
	}
	d.done = true
	refs := refsOf(rs)
	d.unready, d.awaited = wait.Unready(d.ctx, d.clients, refs, d.limits), len(refs)
	d.result = wait.Diagnose(d.ctx, d.clients, d.since, refs, d.limits)
}

// namedAtTimeout bounds the objects a timed-out release names.
const namedAtTimeout = 5

// waitTimedOut is the sentence of an install or upgrade whose wait ran out
// of time: which of the release's objects were not ready and why, by
// kstatus as Helm's wait judged them. Helm itself says only "context
// deadline exceeded" when the step's deadline ends it. nil when err is not
// a timed-out wait.
func waitTimedOut(ctx context.Context, r *Release, err error) error {
	stepOut := errors.Is(ctx.Err(), context.DeadlineExceeded)
	if r.sess.diag == nil || !(stepOut || errors.Is(err, context.DeadlineExceeded)) {
		return nil
	}
	objs, awaited, since := r.sess.diag.held(err)
	if awaited == 0 {
		return nil
	}
	elapsed := time.Since(since).Round(time.Second)
	if stepOut && r.step.Timeout > 0 {
		elapsed = r.step.Timeout.D()
	}
	pending := readiness.WaitingFor(objs, namedAtTimeout)
	if len(objs) == 0 {
		pending = "every one is ready now: they became ready as the time ran out"
	}
	return &kube.TimeoutError{Elapsed: elapsed, What: fmt.Sprintf("%d of its %d objects to be ready", len(objs), awaited), Pending: pending}
}

func refsOf(rs helmkube.ResourceList) []wait.ObjectRef {
	refs := make([]wait.ObjectRef, 0, len(rs))
	for _, info := range rs {
		if info.Mapping == nil {
			continue
		}
		refs = append(refs, wait.ObjectRef{GVK: info.Mapping.GroupVersionKind, Namespace: info.Namespace, Name: info.Name})
	}
	return refs
}

// watch says, while Helm waits on rs, what blocks its workloads (the live
// view and the CI log show it as for khook's own waits); the returned
// function stops it.
func (d *waitDiagnosis) watch(rs helmkube.ResourceList) func() {
	d.mu.Lock()
	ctx := d.ctx
	d.mu.Unlock()
	if ctx == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	watching := wait.WatchBlockers(ctx, d.clients, refsOf(rs), d.limits.Pods)
	return func() { cancel(); watching() }
}

// diagnose wraps the session's Kubernetes client so that every waiter it
// hands Helm reports its failures to the session's waitDiagnosis.
func diagnose(c *helmkube.Client, clients *kube.Clients) (helmkube.Interface, *waitDiagnosis) {
	d := &waitDiagnosis{clients: clients, limits: wait.DefaultDiagnoseLimits}
	return &diagnosingClient{Client: c, diag: d}, d
}

type diagnosingClient struct {
	*helmkube.Client
	diag *waitDiagnosis
}

func (c *diagnosingClient) GetWaiter(ws helmkube.WaitStrategy) (helmkube.Waiter, error) {
	w, err := c.Client.GetWaiter(ws)
	if err != nil {
		return nil, err
	}
	return &diagnosingWaiter{Waiter: w, diag: c.diag}, nil
}

func (c *diagnosingClient) GetWaiterWithOptions(ws helmkube.WaitStrategy, opts ...helmkube.WaitOption) (helmkube.Waiter, error) {
	w, err := c.Client.GetWaiterWithOptions(ws, opts...)
	if err != nil {
		return nil, err
	}
	return &diagnosingWaiter{Waiter: w, diag: c.diag}, nil
}

type diagnosingWaiter struct {
	helmkube.Waiter
	diag *waitDiagnosis
}

func (w *diagnosingWaiter) Wait(rs helmkube.ResourceList, timeout time.Duration) error {
	w.diag.began(rs)
	stop := w.diag.watch(rs)
	err := w.Waiter.Wait(rs, timeout)
	stop()
	w.diag.record(rs, err)
	return err
}

func (w *diagnosingWaiter) WaitWithJobs(rs helmkube.ResourceList, timeout time.Duration) error {
	w.diag.began(rs)
	stop := w.diag.watch(rs)
	err := w.Waiter.WaitWithJobs(rs, timeout)
	stop()
	w.diag.record(rs, err)
	return err
}

// rolledBack says what an atomic step's Helm did after the wait failed.
func rolledBack(verb, name string, last int, timeout time.Duration) string {
	if verb == "install" {
		return fmt.Sprintf("atomic: Helm uninstalled release %s because its resources were not ready within %s", name, words.ShortDuration(timeout))
	}
	return fmt.Sprintf("atomic: Helm rolled release %s back to revision %d because its resources were not ready within %s", name, last, words.ShortDuration(timeout))
}

// failed is what a failed install or upgrade leaves to report: the
// diagnosis of its wait and, unless atomic undid it, the release it wrote
// (a new revision, failed, and its objects are in the cluster: a change).
func failed(sess *session, h *spec.Helm, verb, name, ns string, last *rel.Release, timeout time.Duration, writes int, err error) (*model.Diagnosis, []model.Change) {
	var d *model.Diagnosis
	if sess.diag != nil {
		d = sess.diag.taken(err)
	}
	if h.Atomic {
		if d != nil {
			prev := 0
			if last != nil {
				prev = last.Version
			}
			d.RolledBack = rolledBack(verb, name, prev, timeout)
		}
		return d, nil
	}
	if writes == 0 {
		return d, nil
	}
	// What Helm left: a new revision (failed, or pending when cut off).
	now, err := lastRelease(sess.cfg, name)
	if err != nil || now == nil || now.Info == nil || now.Info.Status == rcommon.StatusUninstalled ||
		(last != nil && now.Version == last.Version) {
		return d, nil
	}
	action := model.DidUpgrade
	if verb == "install" {
		action = model.DidInstall
	}
	return d, []model.Change{{Action: action, Kind: model.KindRelease, Namespace: ns, Name: name, Failed: true}}
}
