// Package destroy is `khook destroy`: undo what apply installed, walking the
// DAG in reverse, and delete the state record after a full success.
package destroy

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/internal/cli/version"
	"github.com/khook/khook/internal/redact"
	"github.com/khook/khook/report"
	"github.com/khook/khook/runner"
	teardown "github.com/khook/khook/runner/destroy"
	"github.com/khook/khook/runner/helmstep"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/state"
	"github.com/khook/khook/runner/steps"
	"github.com/khook/khook/spec"
)

// Options of the destroy command.
type Options struct {
	F           *cmdutil.Factory
	Spec        cmdutil.SpecFlags
	Output      string
	Parallelism int
	LockTimeout time.Duration

	// Clients overrides the clients built from --kubeconfig/--context (tests).
	Clients *kube.Clients
}

// NewCmd builds `khook destroy`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "destroy",
		Short: "Undo what apply installed, walking the DAG in reverse",
		Long: `Undo what apply installed: a step is torn down only after every step that
needs it. helm steps are uninstalled, apply steps delete the objects they
applied (last manifest first), job steps delete their Job; delete, patch,
wait and rollout steps are left alone, and namespaces made by
createNamespace stay. Absent objects are fine, so a second destroy succeeds.
After a full success the state record is deleted.
Exit 1 if a teardown failed, 2 if the spec is invalid.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckRunFlags(opts.Output, opts.Parallelism, opts.LockTimeout); err != nil {
				return err
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmdutil.AddSpecFlags(cmd.Flags(), &opts.Spec)
	cmdutil.AddRunFlags(cmd, &opts.Output, &opts.Parallelism, &opts.LockTimeout, "tear down")
	return cmd
}

// Run loads the spec, tears it down and reports the results.
func Run(ctx context.Context, opts *Options) error {
	s, err := opts.F.LoadSpec(&opts.Spec)
	if err != nil {
		return err
	}
	started := opts.F.Now()
	res := &report.Results{Name: s.Metadata.Name, Command: "destroy", Identifier: s.Metadata.Name, StartedAt: started}
	clients, err := connect(ctx, opts)
	if err != nil {
		return early(opts, res, report.ReasonClusterUnreachable, err)
	}
	res.Server = redact.StripURLCredentials(clients.Config.Host)
	sess, err := state.OpenDestroy(ctx, s, state.Options{Client: clients.Typed, Lock: state.LockOptions{Timeout: opts.LockTimeout},
		Version: version.Get().Version, Redactor: opts.F.Redactor})
	if err != nil {
		reason := report.ReasonStepFailed
		if state.IsLocked(err) {
			reason = report.ReasonStateLocked
		} else if kube.IsUnreachable(err) {
			reason = report.ReasonClusterUnreachable
		}
		return early(opts, res, reason, clients.Explain(err))
	}
	helm := helmstep.New(clients, s.BaseDir, opts.F.Redactor)
	defer helm.Close()
	uninstall := func(ctx context.Context, st *spec.Step) (runner.Outcome, error) {
		d := st.Delete
		return helm.Uninstall(ctx, d.Release, d.Namespace, d.IgnoresNotFound())
	}
	exec := steps.NewDelete(steps.NewEnv(clients, s.BaseDir, opts.F.Redactor), steps.ReleaseDeleterFunc(uninstall))

	view := opts.F.ProgressView(opts.Output, report.StepInfos(s))
	res.Steps = teardown.Run(ctx, s, teardown.Options{
		Delete: exec, Emit: view.Handle, OnFinish: sess.OnFinish, Parallelism: opts.Parallelism,
		Configure: func(e *runner.Engine) { e.Redactor = opts.F.Redactor },
	})
	res.DurationMs = opts.F.Now().Sub(started).Milliseconds()
	res.Status = report.RunOK
	for _, st := range res.Steps {
		if st.Status == report.StatusFailed {
			res.Status, res.FailureReason = report.RunFailed, report.ReasonStepFailed
		}
	}
	if ctx.Err() != nil {
		res.Status, res.FailureReason = report.RunFailed, report.ReasonCancelled
	}
	if cerr := sess.Close(ctx); cerr != nil && res.Status == report.RunOK {
		res.Status, res.Error = report.RunFailed, opts.F.Redactor.String(cerr.Error())
	}
	if opts.Output == cmdutil.OutputJSON {
		err = report.WriteJSON(opts.F.IOStreams.Out, res)
	} else {
		err = view.Finish(res)
	}
	if err != nil {
		return err
	}
	if res.Status != report.RunOK {
		return cmdutil.Silent(cmdutil.ExitFailure)
	}
	return nil
}

// connect builds the clients and checks the API server answers, so an
// unreachable cluster fails before any step is reported.
func connect(ctx context.Context, opts *Options) (*kube.Clients, error) {
	c := opts.Clients
	if c == nil {
		var err error
		if c, err = kube.NewClients(opts.F.Global.Kubeconfig, opts.F.Global.Context); err != nil {
			return nil, err
		}
	}
	if err := c.Ping(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// early reports a destroy that never started: JSON gets the results
// document, text gets the error.
func early(opts *Options, res *report.Results, reason string, err error) error {
	res.Status, res.FailureReason, res.Error = report.RunFailed, reason, opts.F.Redactor.String(err.Error())
	if opts.Output != cmdutil.OutputJSON {
		return err
	}
	if werr := report.WriteJSON(opts.F.IOStreams.Out, res); werr != nil {
		return werr
	}
	opts.F.Logger.Error("destroy did not start", "error", res.Error)
	return cmdutil.Silent(cmdutil.ExitFailure)
}
