package runner

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/spec"
)

// errCancelled is a cancelled step's error text.
const errCancelled = "cancelled: the run was interrupted before the step finished"

// execute runs a step's attempts: each bounded by the step timeout, retried
// after retryDelay while retries remain. It runs on its own goroutine.
func (r *run) execute(ctx context.Context, n *node) (res model.StepResult) {
	st := n.step
	res = r.base(st)
	start := r.clock.Now()
	defer func() { res.DurationMs = r.clock.Now().Sub(start).Milliseconds() }()

	for attempt := 1; ; attempt++ {
		res.Attempts = attempt
		r.emit(model.Event{Kind: model.EventStarted, Step: st.Name, Attempt: attempt})
		warns := &kube.Warnings{}
		out, err := r.attempt(kube.WithWarnings(ctx, warns), st)
		res.Warnings = r.warnings(warns)
		if err == nil && !out.Skipped {
			err = r.warningsAsErrors(res.Warnings)
		}
		res.Detail = r.Redactor.String(out.Detail)
		res.LogTail = r.redactLines(out.LogTail)
		res.Diagnosis = out.Diagnosis
		res.Diagnosis.Map(r.Redactor.String)
		res.Changes = model.MergeChanges(res.Changes, r.redactChanges(out.Changes))
		if err == nil {
			res.Status, res.Error = model.StatusOK, ""
			res.Inventory = out.Inventory
			if out.Chart != nil {
				c := *out.Chart
				c.Signer = r.Redactor.String(c.Signer)
				res.Chart = &c
			}
			if out.Skipped {
				res.Status, res.Skip = model.StatusSkipped, spec.SkipIf
				res.SkipReason = r.Redactor.String(out.SkipReason)
			}
			return res
		}
		res.Status = model.StatusFailed
		if ctx.Err() != nil {
			res.Error = errCancelled
			return res
		}
		res.Error = r.Redactor.String(err.Error())
		if attempt > st.Retries {
			return res
		}
		r.emit(model.Event{Kind: model.EventRetrying, Step: st.Name, Attempt: attempt,
			Message: fmt.Sprintf("attempt %d of %d failed, retrying in %s: %s", attempt, st.Retries+1, st.RetryDelay.D(), res.Error)})
		select {
		case <-r.clock.After(st.RetryDelay.D()):
		case <-ctx.Done():
			res.Error = errCancelled
			return res
		}
	}
}

// redactChanges masks secrets in object names (a name built from a variable).
func (r *run) redactChanges(cs []model.Change) []model.Change {
	for i := range cs {
		cs[i].Namespace, cs[i].Name = r.Redactor.String(cs[i].Namespace), r.Redactor.String(cs[i].Name)
	}
	return cs
}

// attempt runs the executor once under the step timeout, turning a deadline
// into "timed out after <timeout>" and a panic into an error.
func (r *run) attempt(ctx context.Context, st *spec.Step) (out Outcome, err error) {
	timeout := st.Timeout.D()
	actx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		actx, cancel = context.WithTimeout(ctx, timeout)
		dl, _ := actx.Deadline()
		actx = model.WithStepTimeout(actx, dl, timeout)
	}
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error in the %s executor (please report it): %v", st.Type(), p)
		}
	}()
	if r.Exec == nil {
		return Outcome{}, fmt.Errorf("no executor for %s steps", st.Type())
	}
	actx = model.WithStepProgress(actx, func(msg string) {
		r.emit(model.Event{Kind: model.EventMessage, Step: st.Name, Message: "waiting: " + msg})
	})
	out, err = r.Exec.Execute(actx, st)
	if err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		err = timedOut(timeout, err)
	}
	return out, err
}

var requestTail = regexp.MustCompile(`:? ?(Get|Post|Put|Patch|Delete|Head) "[^"]*"$`)

// timedOut keeps what the executor said about the wait but not Go's
// "context deadline exceeded", which tells the user nothing.
func timedOut(timeout time.Duration, err error) error {
	msg := err.Error()
	// A kube.TimeoutError within the executor's sentence says which wait ran out.
	var said *kube.TimeoutError
	if strings.HasPrefix(msg, "timed out after ") || errors.As(err, &said) { // the executor said it already
		return err
	}
	for _, s := range []string{": " + context.DeadlineExceeded.Error(), context.DeadlineExceeded.Error()} {
		msg = strings.TrimSuffix(msg, s)
	}
	// Go's HTTP client puts the request it gave up on last: `Patch "https://…"`.
	msg = requestTail.ReplaceAllString(msg, "")
	if msg == "" {
		return fmt.Errorf("timed out after %s", timeout)
	}
	return fmt.Errorf("timed out after %s: %s", timeout, msg)
}

func (r *run) redactLines(lines []string) []string {
	if len(lines) == 0 {
		return nil
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = r.Redactor.String(l)
	}
	return out
}
