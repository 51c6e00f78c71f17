// Package helmstep runs khook's helm: steps through the Helm v4 SDK: install
// or upgrade decided by the release history, the chart and values brought by
// runner/chartsource, and no new revision when the release has converged
// (same chart, same values, no drift of the live objects; see Drift). It also
// uninstalls releases for delete.release and destroy.
//
// May import: runner, runner/kube, runner/chartsource, model, spec, redact,
// sops and the Helm SDK; not runner/plan, action, executors or state, no
// renderer.
package helmstep

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"helm.sh/helm/v4/pkg/action"
	helmkube "helm.sh/helm/v4/pkg/kube"
	rel "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/chartsource"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/spec"
)

// Executor runs helm: steps. It is safe for concurrent use by steps of one run.
type Executor struct {
	clients  *kube.Clients
	baseDir  string
	redactor *redact.Redactor
	opts     options
	charts   *chartsource.Fetcher

	capsCache
}

type options struct {
	transport *http.Transport
	plainHTTP *bool
	logger    slog.Handler
	recovery  recoveryPolicy
}

func (o options) logHandler() slog.Handler {
	if o.logger != nil {
		return o.logger
	}
	return discardLogger()
}

// Option configures an Executor.
type Option func(*options)

// WithTransport sets the HTTP transport for chart repositories, values URLs
// and OCI registries (tests use it to trust their own CA).
func WithTransport(t *http.Transport) Option { return func(o *options) { o.transport = t } }

// WithPlainHTTP forces plain HTTP (true) or HTTPS (false) for OCI
// registries. By default registries on loopback addresses use plain HTTP.
func WithPlainHTTP(plain bool) Option { return func(o *options) { o.plainHTTP = &plain } }

// WithLogger receives Helm's own log records (debug detail); by default they
// are dropped. The handler's output must go through the redactor.
func WithLogger(h slog.Handler) Option { return func(o *options) { o.logger = h } }

// WithStateLock tells the executor whether the run holds the spec's state
// lock (a state: block): held is asked at the moment of deciding, so a lock
// lost mid-run (another run took it over) no longer counts. Holding it, the
// executor recovers a release an interrupted run left pending at once;
// without it only once the pending revision is older than StaleAfter (see
// recover.go). nil means no lock.
func WithStateLock(held func() bool) Option { return func(o *options) { o.recovery.lockHeld = held } }

var setFieldManager sync.Once

// New returns an executor. Relative chart and values paths resolve against
// baseDir; every credential met is registered with r.
func New(clients *kube.Clients, baseDir string, r *redact.Redactor, opts ...Option) *Executor {
	setFieldManager.Do(func() {
		if helmkube.ManagedFieldsManager == "" {
			helmkube.ManagedFieldsManager = FieldManager
		}
	})
	if r == nil {
		r = redact.New()
	}
	e := &Executor{clients: clients, baseDir: baseDir, redactor: r}
	for _, o := range opts {
		o(&e.opts)
	}
	e.charts = chartsource.New(clients, baseDir, r, chartsource.Options{Transport: e.opts.transport, PlainHTTP: e.opts.plainHTTP})
	return e
}

// Close removes the executor's temp dir.
func (e *Executor) Close() error { return e.charts.Close() }

// Execute installs, upgrades or leaves alone the step's release.
func (e *Executor) Execute(ctx context.Context, step *spec.Step) (runner.Outcome, error) {
	if step == nil || step.Helm == nil {
		return runner.Outcome{}, errors.New("helm executor: the step has no helm: block (internal error)")
	}
	out, err := e.executeAcrossOutages(ctx, step)
	if out.Writes > 0 || err != nil {
		kube.InvalidateLive(ctx) // Helm wrote objects khook cannot name: later reads list again
	}
	return out, e.redactor.Error(err)
}

// execute is one try at the step: the reconciler's decision (decide)
// carried out. cut says this run's own previous try was cut off by a lost
// connection: a release it left pending may be recovered.
func (e *Executor) execute(ctx context.Context, step *spec.Step, cut bool) (runner.Outcome, error) {
	h := step.Helm
	if h.OnlyCRDs() {
		return e.applyOnlyCRDs(ctx, step) // crdsonly.go: no release, so nothing for decide
	}
	r, err := e.Open(step)
	if err != nil {
		return runner.Outcome{}, err
	}
	r.sess.warnings.ForwardTo(kube.WarningsOf(ctx))
	dec := e.decide(ctx, r)

	var recovered string
	var recoveryWrites int
	if dec.do == doRecover {
		recovered, recoveryWrites, err = e.recoverPending(ctx, r.sess, step, r.Last, cut)
		if err != nil {
			return runner.Outcome{Writes: recoveryWrites}, err
		}
		if r, err = e.Open(step); err != nil {
			return runner.Outcome{Writes: recoveryWrites}, err
		}
		r.sess.warnings.ForwardTo(kube.WarningsOf(ctx))
		if dec = e.decide(ctx, r); dec.do == doRecover {
			dec = decision{do: doFail, err: fmt.Errorf("release %s in namespace %s is %s at revision %d again after its recovery: another Helm operation is running on it", r.Name, r.Namespace, r.Last.Info.Status, r.Last.Version)}
		}
	}
	out, err := e.converge(ctx, r, dec)
	out.Writes += recoveryWrites
	if err != nil && !lostConnection(err) {
		// The operation failed after its connection was lost (a wait
		// whose watcher gave up during an API server restart): it was
		// cut off, and is run again once the server answers.
		if why := r.sess.rejected.lostDuring(); why != "" {
			err = fmt.Errorf("%w; the connection to the API server was lost during the operation (%s)", err, why)
		}
	}
	if recovered != "" {
		out.Detail = joinDetail(recovered, out.Detail)
		if err != nil {
			err = fmt.Errorf("%s; then: %w", recovered, err)
		}
	}
	return out, err
}

// joinDetail puts the recovery before what the step then did.
func joinDetail(recovered, detail string) string {
	if detail == "" {
		return recovered
	}
	return recovered + "; then " + detail
}

// converge carries out the decision for a release that is not pending:
// skip, fail, leave it alone, install or upgrade.
func (e *Executor) converge(ctx context.Context, r *Release, dec decision) (runner.Outcome, error) {
	name, ns := r.Name, r.Namespace
	last := r.Last
	switch dec.do {
	case doFail:
		return runner.Outcome{}, dec.err
	case doSkip:
		return runner.Outcome{Skipped: true, SkipReason: dec.reason}, nil
	case doUnchanged:
		out := runner.Outcome{Detail: fmt.Sprintf("release %s unchanged at revision %d", name, last.Version) + r.src.Verified(), Writes: int(r.sess.writes.Load()),
			Changes: releaseChange(model.DidUnchanged, name, ns), Chart: fetched(r.src)}
		return out, e.test(ctx, r, &out, false)
	}
	// doInstall or doUpgrade (drift or an unreadable object too: the
	// upgrade re-applies everything).

	installing := dec.do == doInstall
	if r.sess.diag != nil {
		r.sess.diag.start(ctx)
	}
	crdChanges, err := applyCRDs(ctx, e.clients, r)
	if err != nil {
		err = failure(e.clients, r, err)
		out := runner.Outcome{Writes: int(r.sess.writes.Load()), Changes: crdChanges}
		return out, err
	}
	res, replacedObjs, replacedNote, err := e.upgradeReplacing(ctx, r, dec.do)
	crdChanges = append(crdChanges, replacedObjs...)
	out := runner.Outcome{Writes: int(r.sess.writes.Load())}
	if err != nil {
		verb := "upgrade"
		if installing {
			verb = "install"
		}
		out.Diagnosis, out.Changes = failed(r.sess, r.step.Helm, verb, name, ns, last, helmTimeout(ctx, r.step.Helm.Atomic), out.Writes, err)
		out.Changes = append(crdChanges, out.Changes...)
		return out, err
	}
	if installing {
		out.Detail = fmt.Sprintf("installed release %s revision %d (%s)", name, res.Version, r.src.What)
		out.Changes = releaseChange(model.ActionInstall.Done(), name, ns)
	} else {
		out.Detail = fmt.Sprintf("upgraded release %s to revision %d (%s)", name, res.Version, r.src.What)
		out.Changes = releaseChange(model.ActionUpgrade.Done(), name, ns)
	}
	out.Changes = append(crdChanges, out.Changes...)
	out.Detail += r.src.Verified()
	out.Chart = fetched(r.src)
	if replacedNote != "" {
		out.Detail += "; " + replacedNote
	}
	if len(r.Kept) > 0 {
		out.Detail += "; kept " + strings.Join(r.Kept, ", ") + ": the chart no longer renders it, and deleting a CRD deletes every resource of its kind (set deleteCRDs: true to delete it)"
	}
	err = e.test(ctx, r, &out, true)
	return out, err
}

// helmTimeout turns the step deadline into Helm's timeout. With atomic,
// Helm waits up to the timeout for the release and again for the rollback
// or uninstall: each gets half, so both end within the step.
func helmTimeout(ctx context.Context, atomic bool) time.Duration {
	d := chartsource.Remaining(ctx)
	if atomic {
		d /= 2
	}
	if d < time.Second {
		d = time.Second
	}
	return d
}

// open starts a session in the release namespace and reads the release's
// latest revision (nil when it has none).
func (e *Executor) open(name, ns string) (*session, *rel.Release, error) {
	sess, err := e.newSession(ns)
	if err != nil {
		return nil, nil, err
	}
	last, err := lastRelease(sess.cfg, name)
	if err != nil {
		return nil, nil, e.clients.Explain(fmt.Errorf("release %s in namespace %s: cannot read its history: %w", name, ns, err))
	}
	return sess, last, nil
}

// lastRelease returns the latest revision in any state, or nil when the
// release has no history.
func lastRelease(cfg *action.Configuration, name string) (*rel.Release, error) {
	r, err := cfg.Releases.Last(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return chartsource.AsRelease(r)
}
