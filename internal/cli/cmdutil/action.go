package cmdutil

import (
	"errors"
	"strings"
	"time"

	"github.com/khook/khook/model"
	"github.com/khook/khook/report"
	"github.com/khook/khook/runner/command"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/planfile"
	"github.com/khook/khook/spec"
)

// ActionConfig is the configuration runner/command needs, from the global
// flags; clients, when set, replace the kubeconfig's (tests).
func (f *Factory) ActionConfig(clients *kube.Clients) *command.Configuration {
	cfg := command.NewConfiguration(f.Global.Kubeconfig, f.Global.Context, f.Redactor, f.Now, f.Version, f.PlanKey(),
		func(msg string) { f.Logger.Info(msg) })
	cfg.Clients = clients
	return cfg
}

// PlanKey is KHOOK_PLAN_KEY from the environment (nil when unset),
// registered as a secret: it keys every plan digest (runner/planfile).
func (f *Factory) PlanKey() []byte {
	for _, kv := range f.IOStreams.Environ {
		if v, ok := strings.CutPrefix(kv, planfile.KeyEnv+"="); ok && v != "" {
			f.Redactor.Add(v)
			return []byte(v)
		}
	}
	return nil
}

// RunView shows an apply or destroy: progress while it runs, then the
// results (the JSON document, or the view's final table) and the exit code.
type RunView struct {
	f      *Factory
	output string
	spec   *spec.Spec
	view   report.Progress
	stop   func()
}

// NewRunView prepares the view of a run of s; nothing shows before Start.
func (f *Factory) NewRunView(output string, s *spec.Spec) *RunView {
	return &RunView{f: f, output: output, spec: s, stop: func() {}}
}

// Start shows the run's progress (runner/command calls it once connected)
// and returns where events go. On a live view it also moves log records
// above the frame and redraws every second until Finish.
func (v *RunView) Start() func(model.Event) {
	f := v.f
	v.view = f.ProgressView(v.output, report.StepInfos(v.spec))
	live, ok := v.view.(*report.FrameView)
	if !ok {
		return v.view.Handle
	}
	restore := func() {}
	if f.LogSink != nil {
		restore = f.LogSink.Redirect(WriterFunc(func(p []byte) (int, error) {
			return live.Above(f.IOStreams.ErrOut, p)
		}))
	}
	stopTicks := tick(live)
	v.stop = func() { stopTicks(); restore() }
	return v.view.Handle
}

// Finish reports what Run returned: a run that never started (err set),
// else the results; exit 1 unless the run succeeded.
func (v *RunView) Finish(res *model.Results, err error) error {
	v.stop()
	if err != nil || v.view == nil {
		return v.notStarted(res)
	}
	if v.output == OutputJSON {
		err = report.WriteJSON(v.f.IOStreams.Out, res)
	} else {
		err = v.view.Finish(res)
	}
	if err != nil {
		return err
	}
	if res.Status != model.RunOK {
		return Silent(command.ExitCodeOf(true, res.FailureReason))
	}
	return nil
}

// NotStarted reports an apply or destroy that failed before it could start
// (its plan file, fleet or spec did not load): -o json still gets the results
// document, naming the failure reason, as for a run the cluster refused, so
// a script reads one shape whatever failed; text gets err as it is.
func (f *Factory) NotStarted(output, cmd string, err error) error {
	if output != OutputJSON || err == nil {
		return err
	}
	res := &model.Results{Command: cmd, Status: model.RunFailed, FailureReason: command.ReasonOf(err, ""), Error: f.Redactor.String(err.Error())}
	if werr := report.WriteJSON(f.IOStreams.Out, res); werr != nil {
		return werr
	}
	if ee := (*ExitError)(nil); !errors.As(err, &ee) || !ee.Reported {
		f.Logger.Error(cmd+" did not start", "error", res.Error)
	}
	return Silent(CodeOf(err))
}

// notStarted reports a run that never started: JSON output gets the
// results document (the run-level error is in it and logged), text gets
// the error.
func (v *RunView) notStarted(res *model.Results) error {
	if v.output != OutputJSON {
		return Failed(res.FailureReason, errors.New(res.Error))
	}
	if err := report.WriteJSON(v.f.IOStreams.Out, res); err != nil {
		return err
	}
	v.f.Logger.Error(res.Command+" did not start", "error", res.Error)
	return Silent(command.ExitCodeOf(true, res.FailureReason))
}

// tick redraws a live view every second so elapsed times move; it returns
// the function that stops it.
func tick(live *report.FrameView) (stop func()) {
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
