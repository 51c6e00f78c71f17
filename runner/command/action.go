// Package action is what khook does, one struct per command: ApplyCommand,
// PlanCommand and DestroyCommand, each with its options as fields and a
// Run(ctx, spec) method that returns the results model and never prints.
// The CLI commands and khook ci are thin layers over it (the model is
// Helm's pkg/action); it owns their one Configuration (NewConfiguration)
// and their exit codes (exit.go).
//
// May import: the rest of runner/..., model, spec, redact; no renderer
// (report), no CLI.
package command

import (
	"context"
	"errors"
	"time"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/state"
)

// Configuration is what every action needs: where the cluster is, the
// run's redactor, the clock and khook's version (for the state record).
type Configuration struct {
	// Kubeconfig is a path ("" means KUBECONFIG, then in-cluster) and
	// Context a context in it ("" means the current one).
	Kubeconfig string
	Context    string
	// Clients, when set, are used instead of the kubeconfig (tests pass the
	// harness cluster's).
	Clients *kube.Clients
	// Redactor masks secrets in every error the results carry; nil is a
	// fresh one.
	Redactor *redact.Redactor
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Version is khook's version, recorded in the state record.
	Version string
	// PlanKey keys the digests of plans and saved plans (HMAC-SHA256; the
	// CLI reads KHOOK_PLAN_KEY). Empty: unkeyed digests with secrets masked
	// (runner/planfile.Hasher says what that gives up).
	PlanKey []byte
	// LookupSecrets is the plan's lookup-secrets policy (runner/plan's
	// LookupMask, LookupDeny, LookupAllow; "" is mask).
	LookupSecrets string
	// WarningsAsErrors fails a step (plan: plans it as fail) on any
	// warning the API server sends for its requests (--warnings-as-errors).
	WarningsAsErrors bool
	// Notify, when set, hears what a run says once besides its results
	// (the state record converted from upstream khook's).
	Notify func(msg string)
}

// NewConfiguration is the one builder of a Configuration: khook's commands
// (internal/cli/cmdutil) and khook ci (internal/ci) both call it, so
// neither front end lacks a field the other sets. The plan key is taken as
// a secret; notify hears the run's notes, redacted (nil: dropped). Per
// command settings (WarningsAsErrors, LookupSecrets, Clients) are the
// caller's to set on the result.
func NewConfiguration(kubeconfig, kubeContext string, red *redact.Redactor, now func() time.Time, version string, planKey []byte, notify func(msg string)) *Configuration {
	c := &Configuration{Kubeconfig: kubeconfig, Context: kubeContext, Redactor: red, Now: now, Version: version, PlanKey: planKey}
	red = c.redactor()
	if len(planKey) > 0 {
		red.Add(string(planKey))
	}
	if notify != nil {
		c.Notify = func(msg string) { notify(red.String(msg)) }
	}
	return c
}

func (c *Configuration) now() time.Time {
	if c.Now == nil {
		return time.Now()
	}
	return c.Now()
}

func (c *Configuration) redactor() *redact.Redactor {
	if c.Redactor == nil {
		c.Redactor = redact.New()
	}
	return c.Redactor
}

// connect returns the clients and checks the API server answers, so an
// unreachable cluster fails before any step is reported.
func (c *Configuration) connect(ctx context.Context) (*kube.Clients, error) {
	clients := c.Clients
	if clients == nil {
		var err error
		if clients, err = kube.NewClients(c.Kubeconfig, c.Context); err != nil {
			return nil, &Failure{Reason: model.ReasonClusterUnreachable, Err: err}
		}
	}
	if err := clients.Ping(ctx); err != nil {
		return nil, &Failure{Reason: model.ReasonClusterUnreachable, Err: err}
	}
	// Taint at the source: every Secret the run reads (lookup, live
	// objects, waits, a job's own) is masked from the moment it is read.
	clients.MaskSecretsWith(c.redactor(), state.IsRecord)
	return clients, nil
}

// Failure is a run-level error with its failure reason (the CI contract's
// failure-reason: cluster-unreachable, state-locked, ...). It is the one
// way an error names its reason; errors of other packages that know theirs
// (state.LockedError) say so with the same FailureReason method.
type Failure struct {
	Reason string
	Err    error
}

func (e *Failure) Error() string         { return e.Err.Error() }
func (e *Failure) Unwrap() error         { return e.Err }
func (e *Failure) FailureReason() string { return e.Reason }

// ReasonOf names the failure reason of a run-level error: the one it
// carries, else what it evidently is (unreachable, cancelled), else
// fallback.
func ReasonOf(err error, fallback string) string {
	var named interface{ FailureReason() string }
	switch {
	case err == nil:
		return fallback
	case errors.As(err, &named) && named.FailureReason() != "":
		return named.FailureReason()
	case kube.IsUnreachable(err):
		return model.ReasonClusterUnreachable
	case errors.Is(err, context.Canceled):
		return model.ReasonCancelled
	}
	return fallback
}

// finish settles a run's status from its steps, the context and the error
// of closing what the run held (the state record's final write).
func finish(ctx context.Context, res *model.Results, closeErr error, r *redact.Redactor) {
	res.Status = model.RunOK
	for _, st := range res.Steps {
		if st.Status == model.StatusFailed {
			res.Status, res.FailureReason = model.RunFailed, model.ReasonStepFailed
		}
	}
	if ctx.Err() != nil {
		res.Status, res.FailureReason = model.RunFailed, model.ReasonCancelled
	}
	if closeErr != nil {
		res.Status, res.Error = model.RunFailed, r.String(closeErr.Error())
		if res.FailureReason == "" {
			res.FailureReason = ReasonOf(closeErr, model.ReasonStepFailed)
		}
	}
}

// notStarted marks res as a run that never started and returns err.
func notStarted(res *model.Results, err error, fallback string, r *redact.Redactor) error {
	res.Status, res.FailureReason, res.Error = model.RunFailed, ReasonOf(err, fallback), r.String(err.Error())
	return err
}
