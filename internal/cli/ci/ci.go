// Package ci is `khook ci`: the container's CI mode. Inputs come from the
// environment, not flags; internal/ci does the work, and this package is
// its Backend: it runs plan, apply and destroy as the CLI commands do and
// hands back their JSON documents.
package ci

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/ci"
	"github.com/khook/khook/internal/cli/apply"
	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/internal/cli/destroy"
	"github.com/khook/khook/internal/cli/iostreams"
	"github.com/khook/khook/internal/cli/plan"
	"github.com/khook/khook/internal/cli/version"
	"github.com/khook/khook/report"
)

// Deps are the cluster-side functions the other commands are built with.
type Deps struct {
	Connect apply.BackendFunc
	Live    plan.LiveFunc
}

// NewCmd builds `khook ci`.
func NewCmd(f *cmdutil.Factory, deps Deps) *cobra.Command {
	return &cobra.Command{
		Use:   "ci",
		Short: "Run as a CI step: inputs from INPUT_*/KHOOK_* variables, platform reports",
		Long: `Run khook as a CI step (the container image's GitHub Action and GitLab job mode).
Inputs come from INPUT_<NAME> (GitHub) or KHOOK_<NAME> variables: command
(plan, apply, destroy, validate, drift), file, vars, var-file, kubeconfig,
context, diff, comment, identifier, github-token, working-directory.
On GitHub it writes the job summary, annotations, outputs and one sticky
pull request comment; on GitLab, log sections, JUnit, dotenv and Terraform
reports and a merge request note. See docs/ci.md.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			out, errOut := f.IOStreams.Unwrapped()
			code := ci.Run(cmd.Context(), ci.Options{
				Stdout: out, Stderr: errOut, Stdin: f.IOStreams.In, Environ: f.IOStreams.Environ,
				Redactor: f.Redactor, Backend: &backend{f: f, deps: deps}, Version: version.Get().Version, Now: f.Now,
			})
			if code != 0 {
				return cmdutil.Silent(code)
			}
			return nil
		},
	}
}

// backend runs the CLI commands with -o json into a buffer: the document is
// the result, and their progress log goes to the job log.
type backend struct {
	f    *cmdutil.Factory
	deps Deps
}

// sub returns a factory whose stdout is captured and whose progress goes
// to the (redacted) job log, connected as the request says.
func (b *backend) sub(req ci.Request) (*cmdutil.Factory, *bytes.Buffer) {
	var doc bytes.Buffer
	skip := ci.InputEnvKeys()
	var environ []string
	for _, kv := range b.f.IOStreams.Environ {
		if k, _, _ := strings.Cut(kv, "="); !skip[k] {
			environ = append(environ, kv)
		}
	}
	ios := &iostreams.IOStreams{In: b.f.IOStreams.In, Out: &doc, ErrOut: b.f.IOStreams.Out, Environ: environ}
	g := b.f.Global
	if req.Kubeconfig != "" {
		g.Kubeconfig = req.Kubeconfig
	}
	if req.Context != "" {
		g.Context = req.Context
	}
	return &cmdutil.Factory{IOStreams: ios, Redactor: b.f.Redactor, Global: g, Logger: b.f.Logger, Now: b.f.Now}, &doc
}

func specFlags(req ci.Request) cmdutil.SpecFlags {
	in := req.Inputs
	return cmdutil.SpecFlags{Files: in.Files, Set: in.Vars, VarFiles: in.VarFiles, VarPrefix: in.VarPrefix, SecretPrefix: in.SecretPrefix}
}

// Plan runs the live planner on the spec already loaded.
func (b *backend) Plan(ctx context.Context, req ci.Request) (*report.Plan, error) {
	live := b.deps.Live
	if live == nil {
		live = plan.LiveCluster
	}
	f, _ := b.sub(req)
	return live(ctx, &plan.Options{F: f, Diff: req.Diff}, req.Spec)
}

// Apply runs the spec already loaded through the apply command's Execute,
// with progress events going to khook ci's log.
func (b *backend) Apply(ctx context.Context, req ci.Request) (*report.Results, error) {
	connect := b.deps.Connect
	if connect == nil {
		connect = apply.ClusterBackend(b.f.Redactor, 0)
	}
	f, _ := b.sub(req)
	res := apply.Execute(ctx, req.Spec, apply.Config{
		Connect:  connect,
		Target:   apply.Target{Kubeconfig: f.Global.Kubeconfig, Context: f.Global.Context},
		Redactor: b.f.Redactor, Now: b.f.Now,
		Started: func() func(report.Event) { return req.Emit },
	})
	return res, nil
}

func (b *backend) Destroy(ctx context.Context, req ci.Request) (*report.Results, error) {
	f, doc := b.sub(req)
	err := destroy.Run(ctx, &destroy.Options{F: f, Spec: specFlags(req), Output: cmdutil.OutputJSON})
	return results(doc, err)
}

// results decodes a command's results document; without one, the
// command's error is the run-level failure.
func results(doc *bytes.Buffer, err error) (*report.Results, error) {
	var r report.Results
	if derr := decode(doc, &r); derr != nil {
		return nil, firstErr(err, derr)
	}
	return &r, nil
}

func decode(doc *bytes.Buffer, v any) error {
	if doc.Len() == 0 {
		return io.EOF
	}
	if err := json.Unmarshal(doc.Bytes(), v); err != nil {
		return fmt.Errorf("khook ci could not read the command's JSON document: %w", err)
	}
	return nil
}

// firstErr prefers the command's own error; an ExitError that was already
// reported carries none, so the decode error speaks then.
func firstErr(cmdErr, decodeErr error) error {
	if cmdErr != nil && cmdErr.Error() != "" && !strings.HasPrefix(cmdErr.Error(), "exit status") {
		return cmdErr
	}
	if decodeErr == io.EOF {
		return fmt.Errorf("the command produced no result document")
	}
	return decodeErr
}
