// Package cli is khook's command line: the root command, its global flags,
// and the mapping of errors to exit codes. It is the only package that
// touches the process's standard streams and exit status.
//
// May import: everything; it is the top of the house
// (docs/architecture.md).
package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/khook/khook/internal/ci"
	"github.com/khook/khook/internal/cli/apply"
	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/internal/cli/destroy"
	"github.com/khook/khook/internal/cli/files"
	"github.com/khook/khook/internal/cli/fleet"
	"github.com/khook/khook/internal/cli/graph"
	"github.com/khook/khook/internal/cli/importcmd"
	"github.com/khook/khook/internal/cli/iostreams"
	"github.com/khook/khook/internal/cli/plan"
	"github.com/khook/khook/internal/cli/render"
	"github.com/khook/khook/internal/cli/schema"
	"github.com/khook/khook/internal/cli/show"
	"github.com/khook/khook/internal/cli/status"
	"github.com/khook/khook/internal/cli/validate"
	"github.com/khook/khook/internal/cli/vars"
	"github.com/khook/khook/internal/cli/version"
	"github.com/khook/khook/runner/command"
	"github.com/khook/khook/runner/kube"
)

// Main runs khook on the process's arguments and streams and returns the
// exit code; main.go passes it to os.Exit. The first SIGINT or SIGTERM
// cancels the context: a run stops starting steps and reports what
// happened. A second one kills khook at once, as usual.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // restore the default handling for the next signal
	}()
	return Run(ctx, os.Args[1:], iostreams.System())
}

// Run executes one command line against ios and returns the exit code.
// Before anything is printed, Out and ErrOut are wrapped by the one
// redactor that spec loading registers secrets with.
func Run(ctx context.Context, args []string, ios *iostreams.IOStreams) int {
	f := cmdutil.NewFactory(ios)
	f.Version = version.Get().Version
	kube.UserAgent = kube.UserAgentFor(f.Version)

	parsed := false // set once flags parse: errors before that are usage errors
	root := NewRootCmd(f, func() { parsed = true })
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return command.ExitOK
	}
	code := cmdutil.CodeOf(err)
	var ee *cmdutil.ExitError
	isExit := errors.As(err, &ee)
	if !parsed && !isExit {
		code = command.ExitCodeOf(true, command.ReasonUsage) // unknown command, bad flag, wrong arguments
	}
	if !parsed && asksDetailedExitCode(root, args) {
		code = command.ExitCode(command.Result{Failed: true, Reason: command.ReasonUsage, DetailedExitCode: true})
	}
	if isExit && (ee.Reported || ee.Err == nil) {
		return code
	}
	msg := "Error: " + err.Error() + "\n"
	if !parsed { // a usage error, whatever its code
		msg += fmt.Sprintf("Run '%s --help' for usage.\n", commandPath(root, args))
	}
	fmt.Fprint(ios.ErrOut, msg)
	return code
}

// asksDetailedExitCode reports whether a command line that did not parse
// gives the command it names plan's --detailed-exitcode: there 2 means
// changes pending, so a usage error must exit 1, and the flag may not have
// been parsed yet (it is read from the arguments).
func asksDetailedExitCode(root *cobra.Command, args []string) bool {
	c, _, err := root.Find(args)
	if err != nil || c == nil || c.Flags().Lookup(plan.DetailedExitCodeFlag) == nil {
		return false
	}
	asked := false
	for _, a := range args {
		if a == "--" {
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") || name != plan.DetailedExitCodeFlag {
			continue
		}
		on, err := strconv.ParseBool(val)
		asked = !hasVal || err != nil || on // a bad value still asks for it
	}
	return asked
}

// commandPath names the command the arguments reach, for the usage hint.
func commandPath(root *cobra.Command, args []string) string {
	if c, _, err := root.Find(args); err == nil && c != nil {
		return c.CommandPath()
	}
	return root.Name()
}

// NewRootCmd builds the command tree. onParsed runs once flags are parsed
// and the logger is set up, before a command's own work.
func NewRootCmd(f *cmdutil.Factory, onParsed func()) *cobra.Command {
	root := &cobra.Command{
		Use:   "khook",
		Short: "Bootstrap Kubernetes clusters from a declarative spec",
		Long: `khook runs a DAG of helm, apply, delete, patch, wait, rollout and job steps
described in a khook.io/v1 spec, from a laptop or a CI job.

Exit codes (khook and khook ci alike; failure reason, when):
` + command.ExitTableText(),
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			logger, err := cmdutil.NewLogger(f.LogSink, f.Global.LogLevel, f.Global.LogFormat)
			if err != nil {
				return err
			}
			f.Logger = logger
			// Everything that logs — slog and the log package (Helm), klog
			// (client-go's API warnings) — goes through the redacted sink
			// instead of writing to os.Stderr itself.
			slog.SetDefault(logger)
			klog.SetSlogLogger(logger)
			onParsed()
			return nil
		},
	}
	root.SetIn(f.IOStreams.In)
	root.SetOut(f.IOStreams.Out)
	root.SetErr(f.IOStreams.ErrOut)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return cmdutil.FlagErrorf("%s", err)
	})
	root.CompletionOptions.DisableDefaultCmd = true

	pf := root.PersistentFlags()
	pf.StringVar(&f.Global.Kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, then in-cluster)")
	pf.StringVar(&f.Global.Context, "context", "", "kubeconfig context to use")
	pf.StringVar(&f.Global.LogLevel, "log-level", "info", "log level: debug, info, warn or error")
	pf.StringVar(&f.Global.LogFormat, "log-format", "text", "log format on stderr: text or json")

	root.AddCommand(
		validate.NewCmd(f),
		graph.NewCmd(f),
		schema.NewCmd(f),
		version.NewCmd(f),
		plan.NewCmd(f),
		apply.NewCmd(f, nil),
		newCICmd(f),
		destroy.NewCmd(f),
		status.NewCmd(f),
		vars.NewCmd(f),
		render.NewCmd(f),
		show.NewCmd(f),
		fleet.NewCmd(f),
		importcmd.NewCmd(f),
		files.NewCmd(f),
	)
	return root
}

// newCICmd builds `khook ci`: inputs come from the environment, not flags,
// and internal/ci does the work, running plan, apply and destroy through
// runner/command as the other commands do.
func newCICmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "ci",
		Short: "Run as a CI step: inputs from INPUT_*/KHOOK_* variables, platform reports",
		Long: `Run khook as a CI step (the container image's GitHub Action and GitLab job mode).
Inputs come from INPUT_<NAME> (GitHub) or KHOOK_<NAME> variables: command
(plan, apply, destroy, validate, drift, fleet-report), file, vars, var-file, kubeconfig,
context, diff, comment, identifier, github-token, working-directory.
On GitHub it writes the job summary, annotations, outputs and one sticky
pull request comment; on GitLab, log sections, JUnit, dotenv and Terraform
reports and a merge request note. See docs/ci.md.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			out, errOut := f.IOStreams.Unwrapped()
			code := ci.Run(cmd.Context(), ci.Options{
				Stdout: out, Stderr: errOut, Stdin: f.IOStreams.In, Environ: f.IOStreams.Environ,
				Redactor: f.Redactor, Version: f.Version, Now: f.Now,
			})
			if code != 0 {
				return cmdutil.Silent(code)
			}
			return nil
		},
	}
}
