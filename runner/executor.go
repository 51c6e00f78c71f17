// Package runner is khook's engine: it schedules the DAG, runs steps through
// their executors, predicts plans and keeps the state record. It emits
// model.Events and never prints.
//
// May import: model, spec, redact, runner/kube; never a renderer (report),
// internal/cli or internal/ci.
package runner

import (
	"context"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
)

// Executor performs one attempt of a step. The engine owns retries, timeouts
// (ctx carries the per-attempt deadline) and cancellation.
type Executor interface {
	Execute(ctx context.Context, step *spec.Step) (Outcome, error)
}

// ExecutorFunc adapts a function to Executor.
type ExecutorFunc func(ctx context.Context, step *spec.Step) (Outcome, error)

// Execute calls f.
func (f ExecutorFunc) Execute(ctx context.Context, step *spec.Step) (Outcome, error) {
	return f(ctx, step)
}

// Outcome is what an attempt did.
type Outcome struct {
	// Detail says what happened in one line ("installed release demo revision 1").
	Detail string
	// Skipped is true when skipIf held: the step is reported skipped as success.
	Skipped    bool
	SkipReason string
	// LogTail carries a failed job's last pod log lines (also on error).
	LogTail []string
	// Diagnosis is, for a failed attempt, what it was waiting on and why
	// that is stuck (wait.Diagnose).
	Diagnosis *model.Diagnosis
	// Writes counts create/update/patch/delete requests the attempt sent.
	Writes int
	// Changes says what the attempt did to each object or release it
	// touched (created, unchanged, upgraded, ran ...): the step's change set.
	Changes []model.Change
	// Chart is the chart a helm step installed, upgraded to or found
	// installed, for the results and the state record.
	Chart *model.ChartFetched
	// Inventory is what a successful attempt put in the cluster (apply: each
	// object with its UID), for pruning; nil keeps the previous one.
	Inventory *model.Inventory
}
