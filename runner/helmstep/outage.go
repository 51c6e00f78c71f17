package helmstep

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/spec"
)

// A Helm operation cut off by a lost connection to the API server (a
// restart, a control-plane upgrade, a network blip) fails half done and,
// since Helm cannot record failed while the server is away, usually leaves
// the release pending. Within the step's timeout khook waits for the server
// to come back, then recovers the release (its own operation has returned,
// so nothing else is working on it) and runs the step again. Rejected
// credentials are not a lost connection: they fail at once.

// maxReconnects bounds how often one attempt starts over after a lost
// connection, so a flapping server cannot make a step loop until its timeout.
const maxReconnects = 3

// reconnectBackoff is the first and the longest pause between checks of
// whether the API server is back (there is nothing to watch while it is down).
const (
	reconnectFirst = 100 * time.Millisecond
	reconnectMax   = 2 * time.Second
)

// executeAcrossOutages runs the step, starting over (recovery first) after
// each lost connection the step's deadline leaves room for.
func (e *Executor) executeAcrossOutages(ctx context.Context, step *spec.Step) (runner.Outcome, error) {
	var notes []string
	writes := 0
	cut := false
	for n := 0; ; n++ {
		out, err := e.execute(ctx, step, cut)
		writes += out.Writes
		out.Writes = writes
		if err != nil && !lostConnection(err) {
			err = explainCredentials(ctx, e.clients, err)
		}
		if err == nil || !lostConnection(err) || ctx.Err() != nil || n == maxReconnects {
			if len(notes) > 0 {
				note := strings.Join(notes, "; ")
				if err != nil {
					err = fmt.Errorf("%w (earlier: %s)", err, note)
				} else {
					out.Detail = note + "; " + out.Detail
				}
			}
			return out, err
		}
		started := time.Now()
		checks, werr := awaitServer(ctx, e.clients)
		if werr != nil {
			return out, fmt.Errorf("%w; the API server was still unreachable when the step timed out, after %s and %d checks", err, time.Since(started).Round(time.Millisecond), checks)
		}
		notes = append(notes, fmt.Sprintf("the connection to the API server was lost (%s); it answered again after %s and %d checks",
			lostReason(err), time.Since(started).Round(time.Millisecond), checks))
		cut = true
	}
}

// explainCredentials adds the 401 sentence to a failure when the
// credentials no longer hold: Helm's waiters retry a rejected token quietly
// until their timeout, and say only that the wait failed. One request.
func explainCredentials(ctx context.Context, clients *kube.Clients, err error) error {
	if kube.IsUnreachable(err) {
		return err
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if perr := clients.Ping(cctx); perr != nil && apierrors.IsUnauthorized(perr) {
		return fmt.Errorf("%w; %w", err, perr)
	}
	return err
}

// awaitServer checks, with a growing pause, until the API server answers or
// ctx ends; it returns how many checks it made.
func awaitServer(ctx context.Context, clients *kube.Clients) (int, error) {
	delay := reconnectFirst
	for checks := 1; ; checks++ {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := clients.Ping(pctx)
		cancel()
		if err == nil {
			return checks, nil
		}
		if apierrors.IsUnauthorized(errors.Unwrap(err)) || apierrors.IsUnauthorized(err) {
			return checks, err
		}
		select {
		case <-ctx.Done():
			return checks, context.Cause(ctx)
		case <-time.After(delay):
		}
		delay = min(2*delay, reconnectMax)
	}
}

// lostMarks are what a dropped or refused connection says in errors that
// reach khook only as text (Helm joins and re-wraps its errors).
var lostMarks = []string{"connection refused", "connection reset by peer", "GOAWAY", "unexpected EOF", "apiserver is shutting down", "http2: client connection lost"}

// lostConnection tells a dropped or refused connection from every other
// failure, rejected credentials included.
func lostConnection(err error) bool {
	if err == nil || apierrors.IsUnauthorized(err) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return false
	}
	return kube.IsUnreachable(err) || lostReason(err) != "unreachable"
}

// lostReason is the mark the error carries, or "unreachable".
func lostReason(err error) string {
	msg := err.Error()
	for _, s := range lostMarks {
		if strings.Contains(msg, s) {
			return s
		}
	}
	return "unreachable"
}
