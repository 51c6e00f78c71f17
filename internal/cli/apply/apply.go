// Package apply is `khook apply`: run the spec's steps against the cluster
// and report each step's outcome.
package apply

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/internal/redact"
	"github.com/khook/khook/report"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/spec"
)

// Backend is what a run needs from the cluster side.
type Backend struct {
	Exec   runner.Executor
	Server string // API server URL, credentials stripped, for the results
	// Resume, when set, lets the state record skip unchanged steps.
	Resume func(step *spec.Step) (reason string, skip bool)
	// OnFinish, when set, journals each step's result as it is known.
	OnFinish func(report.StepResult)
	// Close releases what the backend holds; it may return the error of
	// a final write (the state record), which fails the run.
	Close func() error
}

// Target says which cluster to reach: the global flags, or khook ci's inputs.
type Target struct {
	Kubeconfig string
	Context    string
}

// BackendFunc connects to the cluster, opens the state record and builds
// the executors. An error with a FailureReason() string method names its
// failure reason (state-locked, cluster-unreachable).
type BackendFunc func(ctx context.Context, t Target, s *spec.Spec) (*Backend, error)

// Options of the apply command.
type Options struct {
	F           *cmdutil.Factory
	Spec        cmdutil.SpecFlags
	Output      string
	Parallelism int
	LockTimeout time.Duration

	// Connect builds the backend; nil builds ClusterBackend.
	Connect BackendFunc
}

// NewCmd builds `khook apply`. connect nil means the real cluster backend.
func NewCmd(f *cmdutil.Factory, connect BackendFunc) *cobra.Command {
	opts := &Options{F: f, Connect: connect}
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
	if opts.Connect == nil {
		opts.Connect = ClusterBackend(opts.F.Redactor, opts.LockTimeout)
	}
	var view report.Progress
	stopView := func() {}
	res := Execute(ctx, s, Config{
		Connect:     opts.Connect,
		Target:      Target{Kubeconfig: opts.F.Global.Kubeconfig, Context: opts.F.Global.Context},
		Parallelism: opts.Parallelism,
		Redactor:    opts.F.Redactor,
		Now:         opts.F.Now,
		Started: func() func(report.Event) {
			view, stopView = startView(opts.F, opts.Output, s)
			return view.Handle
		},
	})
	stopView()
	if view == nil { // the run never started
		return finishEarly(opts, res)
	}
	if err := writeResults(opts, view, res); err != nil {
		return err
	}
	if res.Status != report.RunOK {
		return cmdutil.Silent(cmdutil.ExitFailure)
	}
	return nil
}

// Config is what Execute needs besides the spec.
type Config struct {
	Connect     BackendFunc
	Target      Target
	Parallelism int
	Redactor    *redact.Redactor
	Now         func() time.Time
	// Started is called once connected, just before the first step, and
	// returns where events go (nil: nowhere). It is not called when the run
	// never starts.
	Started func() func(report.Event)
}

// Execute connects, runs every step and returns the results; it never
// prints. A run that could not start comes back failed with no steps and
// the reason in FailureReason and Error. khook ci calls it too.
func Execute(ctx context.Context, s *spec.Spec, cfg Config) *report.Results {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	started := cfg.Now()
	res := &report.Results{Name: s.Metadata.Name, Command: "apply", Identifier: s.Metadata.Name, StartedAt: started, Steps: []report.StepResult{}}
	backend, err := cfg.Connect(ctx, cfg.Target, s)
	if err != nil {
		res.Status, res.FailureReason, res.Error = report.RunFailed, reasonOf(err), cfg.Redactor.String(err.Error())
		return res
	}
	res.Server = backend.Server
	var emit func(report.Event)
	if cfg.Started != nil {
		emit = cfg.Started()
	}
	eng := runner.ForSpec(s, backend.Exec)
	eng.Parallelism = cfg.Parallelism
	eng.Redactor = cfg.Redactor
	eng.Emit = emit
	eng.Resume = backend.Resume
	eng.OnFinish = backend.OnFinish
	res.Steps = eng.Run(ctx)

	res.Status = report.RunOK
	for _, st := range res.Steps {
		if st.Status == report.StatusFailed {
			res.Status, res.FailureReason = report.RunFailed, report.ReasonStepFailed
		}
	}
	if ctx.Err() != nil {
		res.Status, res.FailureReason = report.RunFailed, report.ReasonCancelled
	}
	if backend.Close != nil {
		if cerr := backend.Close(); cerr != nil {
			res.Status, res.Error = report.RunFailed, cfg.Redactor.String(cerr.Error())
			if res.FailureReason == "" {
				res.FailureReason = reasonOf(cerr)
			}
		}
	}
	res.DurationMs = cfg.Now().Sub(started).Milliseconds()
	return res
}

// reasonOf names a run-level error's failure reason, when it knows it
// (state-locked, cluster-unreachable).
func reasonOf(err error) string {
	var named interface{ FailureReason() string }
	if errors.As(err, &named) {
		return named.FailureReason()
	}
	if kube.IsUnreachable(err) {
		return report.ReasonClusterUnreachable
	}
	return ""
}

// finishEarly reports a run that never started: JSON gets the results
// document, text gets the error.
func finishEarly(opts *Options, res *report.Results) error {
	if opts.Output != cmdutil.OutputJSON {
		return errors.New(res.Error)
	}
	if werr := report.WriteJSON(opts.F.IOStreams.Out, res); werr != nil {
		return werr
	}
	opts.F.Logger.Error("apply did not start", "error", res.Error)
	return cmdutil.Silent(cmdutil.ExitFailure)
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
