package plan

import (
	"context"
	"errors"
	"sync"

	"github.com/khook/khook/internal/cli/cmdutil"
	clifleet "github.com/khook/khook/internal/cli/fleet"
	ifleet "github.com/khook/khook/internal/fleet"
	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/command"
	"github.com/khook/khook/spec"
)

// useFleet handles --fleet: with --cluster it points the spec flags and
// the kubeconfig at that cluster and lets Run plan it (done false); without,
// it plans every selected cluster and prints the fleet report (done true).
func useFleet(ctx context.Context, opts *Options) (done bool, cleanup func(), err error) {
	cleanup = func() {}
	if opts.Fleet.Cluster != "" {
		cleanup, err = opts.F.UseFleetFlags(&opts.Fleet, &opts.Spec)
		return err != nil, cleanup, err
	}
	fl, err := opts.F.LoadFleet(opts.Fleet.Fleet)
	if err != nil {
		return true, cleanup, err
	}
	if opts.Out != "" || opts.Offline {
		return true, cleanup, cmdutil.FlagErrorf("--out and --offline plan one cluster: add --cluster")
	}
	if opts.Select.Selection() != nil {
		return true, cleanup, cmdutil.FlagErrorf("--target, --target-only and --exclude pick the steps of one cluster's plan: add --cluster (here --selector picks clusters)")
	}
	if opts.Fleet.Parallel < 1 {
		return true, cleanup, cmdutil.FlagErrorf("--parallel %d: plan at least 1 cluster at a time", opts.Fleet.Parallel)
	}
	clusters, err := ifleet.Selection(fl, 0, opts.Fleet.Selector)
	if err != nil {
		return true, cleanup, cmdutil.ValidationError(err)
	}
	legs := make([]*model.Leg, len(clusters))
	sem := make(chan struct{}, opts.Fleet.Parallel)
	var wg sync.WaitGroup
	for i, c := range clusters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			legs[i] = planLeg(ctx, opts, fl, c)
		}()
	}
	wg.Wait()
	rep := model.BuildFleetReport(fl.Metadata.Name, "plan", 0, fl.Rollout.MaxFailures, ifleet.Members(clusters), legs)
	output := opts.Output
	if output == "" {
		output = cmdutil.OutputText
	}
	return true, cleanup, clifleet.WriteReport(opts.F, rep, output, opts.DetailedExitCode)
}

// planLeg plans one cluster of the fleet as its leg would.
func planLeg(ctx context.Context, opts *Options, fl *spec.Fleet, c *spec.FleetCluster) *model.Leg {
	leg := &model.Leg{Kind: model.LegKind, Fleet: fl.Metadata.Name, Cluster: c.Name, Wave: c.Wave, Command: "plan", Status: model.RunOK}
	fail := func(reason string, err error) *model.Leg {
		leg.Status, leg.FailureReason, leg.Error = model.RunFailed, reason, opts.F.Redactor.String(err.Error())
		return leg
	}
	flags := opts.Spec
	in := fl.Leg(c, spec.LegInputs{VarFiles: opts.Spec.VarFiles, Set: opts.Spec.Set, Policies: opts.Spec.Policies})
	flags.Files, flags.VarFiles, flags.Set, flags.Policies = in.Files, in.VarFiles, in.Set, in.Policies
	lo, err := opts.F.SpecLoadOptions(&flags)
	if err != nil {
		return fail(model.ReasonValidation, err)
	}
	s, err := spec.Load(lo)
	if err != nil {
		return fail(model.ReasonValidation, err)
	}
	cfg := opts.F.ActionConfig(opts.Clients)
	if c.Context != "" {
		cfg.Context = c.Context
	}
	path, cleanup, err := opts.F.FleetKubeconfig(fl, c)
	defer cleanup()
	if err != nil {
		return fail(model.ReasonClusterUnreachable, err)
	}
	if path != "" {
		cfg.Kubeconfig = path
	}
	p, err := (&command.PlanCommand{Config: cfg, Diff: opts.Diff}).Run(ctx, s)
	if err != nil {
		return fail(command.ReasonOf(err, model.ReasonClusterUnreachable), err)
	}
	p.Identifier = c.Name
	leg.Plan, leg.Changes, leg.Fingerprint = p, p.Changes, p.Fingerprint
	// The fleet report shows no failing leg's plan: its error says why.
	var pf *command.PlanFailedError
	if err := command.PlanGate(p); errors.As(err, &pf) {
		leg.Status, leg.FailureReason, leg.Error = model.RunFailed, command.ReasonOf(err, model.ReasonStepFailed), opts.F.Redactor.String(pf.WithReasons())
	}
	return leg
}
