package helmstep

import (
	"context"
	"fmt"
	"time"

	"helm.sh/helm/v4/pkg/action"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	rel "helm.sh/helm/v4/pkg/release/v1"

	"github.com/khook/khook/runner/chartsource"
	"github.com/khook/khook/spec"
)

// A release stuck pending-install, pending-upgrade or pending-rollback was
// left by a Helm operation that never finished: its process was killed
// (kill -9, a cancelled CI job, an OOM kill, a lost runner) before it could
// record deployed or failed. Helm refuses every later operation on it. khook
// recovers such a release on its own, but only when it is certain that no
// operation is still running (docs/recovery.md):
//
//   - The run holds the state lock (a state: block). The Lease excludes every
//     other khook run of this spec, so the pending revision is one an
//     interrupted khook run left behind. (A person running helm by hand on
//     the same release at the same moment is not excluded; nothing can
//     exclude that, and Helm's own "pending" guard is as blind to it.)
//   - This step's own operation was cut off by a lost connection to the API
//     server and has returned (outage.go): nothing else is working on it.
//   - Without a state lock: the pending revision is older than StaleAfter.
//     Any live Helm operation ends (deployed, or failed: Helm v4 records
//     failed on cancellation) within its own time-outs, so a revision older
//     than that can only belong to a process that died.
//
// Otherwise khook keeps its error, which says what to do by hand.

// helmCLIDefaultTimeout is helm's --timeout default: the bound of an
// operation someone runs with the helm CLI and no --timeout.
const helmCLIDefaultTimeout = 5 * time.Minute

// clockSkewMargin covers the difference between the clock of the machine
// that wrote the pending revision's timestamp and ours.
const clockSkewMargin = time.Minute

// StaleAfter is how old a pending revision must be, without the state lock,
// before khook treats its operation as dead. An operation's wait and its
// hooks each get the full timeout in Helm, so a live one can last about
// twice its timeout; the timeout is this step's (another khook run of the
// same spec) or helm's default, whichever is longer; then the clock-skew
// margin. With the default 5m step timeout: 11 minutes.
func StaleAfter(stepTimeout time.Duration) time.Duration {
	return 2*max(stepTimeout, helmCLIDefaultTimeout) + clockSkewMargin
}

// recoveryPolicy is what the executor knows about the run.
type recoveryPolicy struct {
	lockHeld func() bool // whether the run holds the spec's state lock now; nil: no lock
	ownCut   bool        // this step's own operation was cut off by a lost connection and has returned
}

// mayRecover tells whether the pending revision last may be recovered and
// why (a sentence for the step's detail), or why not (for the error).
func (p recoveryPolicy) mayRecover(last *rel.Release, stepTimeout time.Duration, now time.Time) (why string, ok bool) {
	if p.ownCut {
		return "this step's own operation was cut off by the lost connection and has returned, so nothing else is operating on it", true
	}
	if p.lockHeld != nil && p.lockHeld() {
		return "khook holds this spec's state lock, so no other khook run is operating on it: the run that left it was interrupted", true
	}
	limit := StaleAfter(stepTimeout)
	age := now.Sub(last.Info.LastDeployed).Round(time.Second)
	if !last.Info.LastDeployed.IsZero() && age >= limit {
		return fmt.Sprintf("its pending revision is %s old, older than any live Helm operation can be (%s)", age, limit), true
	}
	return fmt.Sprintf("it has been pending for %s: another Helm operation may still be running, or one was interrupted. "+
		"If none is running, roll it back or uninstall it (helm rollback %s -n %s, or helm uninstall), then re-run; "+
		"khook recovers it on its own once the revision is older than %s, or at once when the spec has a state: block (the state lock proves no other khook run is on it)",
		age, last.Name, last.Namespace, limit), false
}

// recoverPending brings a release stuck pending back to a state Helm can
// work from: a rollback to the last deployed revision, or, when no revision
// was ever deployed, an uninstall (history included), after which the step
// installs afresh. It returns the sentence for the step's detail and the
// writes it sent.
func (e *Executor) recoverPending(ctx context.Context, sess *session, step *spec.Step, last *rel.Release, cut bool) (string, int, error) {
	name, ns := chartsource.Target(step)
	policy := e.opts.recovery
	policy.ownCut = cut
	why, ok := policy.mayRecover(last, step.Timeout.D(), time.Now())
	if !ok {
		return "", 0, fmt.Errorf("release %s in namespace %s is %s at revision %d: %s", name, ns, last.Info.Status, last.Version, why)
	}
	stuck := fmt.Sprintf("release %s was %s at revision %d", name, last.Info.Status, last.Version)
	target, err := lastDeployed(sess.cfg, name, last.Version)
	if err != nil {
		return "", 0, e.clients.Explain(fmt.Errorf("release %s in namespace %s: cannot read its history to recover it: %w", name, ns, err))
	}
	if target == nil {
		// The uninstall drops the history too: the install starts at revision 1.
		out, err := e.uninstall(ctx, name, ns, false)
		if err != nil {
			return "", out.Writes, fmt.Errorf("%s and was never deployed; uninstalling it failed: %w", stuck, err)
		}
		return fmt.Sprintf("recovered: %s and was never deployed, so khook uninstalled it (%s)", stuck, why), out.Writes, nil
	}
	err = rollback(ctx, sess, step.Helm, name, target.Version)
	if err != nil {
		return "", int(sess.writes.Load()), e.clients.Explain(fmt.Errorf("%s; rolling it back to revision %d failed: %w", stuck, target.Version, chartsource.OneLine(err)))
	}
	return fmt.Sprintf("recovered: %s, so khook rolled it back to revision %d, the last deployed (%s)", stuck, target.Version, why), int(sess.writes.Load()), nil
}

// lastDeployed is the newest revision before `before` that was deployed
// (status deployed, else superseded: deployed once), or nil.
func lastDeployed(cfg *action.Configuration, name string, before int) (*rel.Release, error) {
	hist, err := cfg.Releases.History(name)
	if err != nil {
		return nil, err
	}
	var deployed, superseded *rel.Release
	for _, h := range hist {
		r, err := chartsource.AsRelease(h)
		if err != nil {
			return nil, err
		}
		if r.Version >= before || r.Info == nil {
			continue
		}
		switch r.Info.Status {
		case rcommon.StatusDeployed:
			if deployed == nil || r.Version > deployed.Version {
				deployed = r
			}
		case rcommon.StatusSuperseded:
			if superseded == nil || r.Version > superseded.Version {
				superseded = r
			}
		}
	}
	if deployed != nil {
		return deployed, nil
	}
	return superseded, nil
}

// rollback runs a Helm rollback to revision, waiting as the step waits,
// within ctx (the action itself ignores contexts: it is abandoned on cancel).
func rollback(ctx context.Context, sess *session, h *spec.Helm, name string, revision int) error {
	rb := action.NewRollback(sess.cfg)
	rb.Version = revision
	rb.WaitStrategy = waitStrategy(h)
	rb.Timeout = helmTimeout(ctx, false)
	rb.ServerSideApply = "auto"
	rb.ForceConflicts = true
	rb.Description = "Rollback by khook: recovered from an interrupted operation"
	done := make(chan error, 1)
	go func() { done <- rb.Run(name) }()
	select {
	case <-ctx.Done():
		return fmt.Errorf("the rollback did not finish: %w", context.Cause(ctx))
	case err := <-done:
		return err
	}
}
