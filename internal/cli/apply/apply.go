// Package apply is `khook apply`: run the spec's steps against the cluster
// and report each step's outcome.
package apply

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/report"
	"github.com/khook/khook/runner/action"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/spec"
)

// Options of the apply command.
type Options struct {
	F           *cmdutil.Factory
	Spec        cmdutil.SpecFlags
	Output      string
	Parallelism int
	LockTimeout time.Duration

	// Backend builds the cluster side; nil is action.ClusterBackend.
	Backend action.BackendFunc
	// Clients, when set, replace the kubeconfig's (tests).
	Clients *kube.Clients
}

// NewCmd builds `khook apply`. backend nil means the real cluster.
func NewCmd(f *cmdutil.Factory, backend action.BackendFunc) *cobra.Command {
	opts := &Options{F: f, Backend: backend}
	cmd := &cobra.Command{
		Use:   "apply",
		Short: "Run the spec's steps against the cluster",
		Long: `Run the spec's steps against the cluster: each step starts as soon as every
step in its needs succeeded. On a terminal, one line per step is redrawn in
place; piped, one log line per state change and a final table; with -o json,
the results document on stdout and the log lines on stderr.
Exit 1 if a step failed, 2 if the spec is invalid.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckRunFlags(opts.Output, opts.Parallelism, opts.LockTimeout); err != nil {
				return err
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmdutil.AddSpecFlags(cmd.Flags(), &opts.Spec)
	cmdutil.AddRunFlags(cmd, &opts.Output, &opts.Parallelism, &opts.LockTimeout, "run")
	return cmd
}

// Run loads the spec, runs it and reports the results.
func Run(ctx context.Context, opts *Options) error {
	s, err := opts.F.LoadSpec(&opts.Spec)
	if err != nil {
		return err
	}
	var view report.Progress
	stopView := func() {}
	res, err := (&action.Apply{
		Config:      opts.F.ActionConfig(opts.Clients),
		Parallelism: opts.Parallelism,
		LockTimeout: opts.LockTimeout,
		Backend:     opts.Backend,
		Started: func() func(report.Event) {
			view, stopView = startView(opts.F, opts.Output, s)
			return view.Handle
		},
	}).Run(ctx, s)
	stopView()
	if err != nil { // the run never started
		return opts.F.NotStarted(opts.Output, res)
	}
	if err := writeResults(opts, view, res); err != nil {
		return err
	}
	if res.Status != report.RunOK {
		return cmdutil.Silent(cmdutil.ExitFailure)
	}
	return nil
}

func writeResults(opts *Options, view report.Progress, res *report.Results) error {
	if opts.Output == cmdutil.OutputJSON {
		return report.WriteJSON(opts.F.IOStreams.Out, res)
	}
	return view.Finish(res)
}

// startView shows the run's progress. On a live view it also moves log
// records above the frame and redraws every second; stop undoes both.
func startView(f *cmdutil.Factory, output string, s *spec.Spec) (view report.Progress, stop func()) {
	view = f.ProgressView(output, report.StepInfos(s))
	live, ok := view.(*report.LiveView)
	if !ok {
		return view, func() {}
	}
	restore := func() {}
	if f.LogSink != nil {
		restore = f.LogSink.Redirect(cmdutil.WriterFunc(func(p []byte) (int, error) {
			return live.Above(f.IOStreams.ErrOut, p)
		}))
	}
	stopTicks := tick(live)
	return view, func() { stopTicks(); restore() }
}

// tick redraws a live view every second so elapsed times move; it returns
// the function that stops it.
func tick(live *report.LiveView) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				live.Tick()
			case <-done:
				return
			}
		}
	}()
	return func() { close(done); <-finished }
}
