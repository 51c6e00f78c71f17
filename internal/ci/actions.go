package ci

import (
	"context"
	"time"

	"github.com/khook/khook/model"
	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner/command"
)

// actions is the Backend khook ci runs with: runner/command's Plan, Apply
// and Destroy on the spec already loaded, exactly as the CLI commands run
// them, with progress going to khook ci's log.
type actions struct {
	red     *redact.Redactor
	now     func() time.Time
	version string
	// notify prints a run's notes in khook ci's log, as the CLI logs them.
	notify func(msg string)
}

func (a actions) config(req Request) *command.Configuration {
	cfg := command.NewConfiguration(req.Kubeconfig, req.Context, a.red, a.now, a.version, req.PlanKey, a.notify)
	cfg.LookupSecrets = req.LookupSecrets
	return cfg
}

func (a actions) Plan(ctx context.Context, req Request) (*model.Plan, error) {
	return (&command.PlanCommand{Config: a.config(req), Diff: req.Diff, Selection: req.Selection}).Run(ctx, req.Spec)
}

func (a actions) Apply(ctx context.Context, req Request) (*model.Results, error) {
	return (&command.ApplyCommand{Config: a.config(req), Started: emitTo(req), Expect: req.Expect, Selection: req.Selection, Reconcile: req.Reconcile}).Run(ctx, req.Spec)
}

func (a actions) Destroy(ctx context.Context, req Request) (*model.Results, error) {
	return (&command.DestroyCommand{Config: a.config(req), Started: emitTo(req), Selection: req.Selection}).Run(ctx, req.Spec)
}

func emitTo(req Request) func() func(model.Event) {
	return func() func(model.Event) { return req.Emit }
}
