// Package importcmd is `khook import`: a khook spec from another tool's
// file. `khook import helmfile FILE` is the command around
// internal/helmfile, which renders and maps the helmfile; `khook import
// script FILE` the one around internal/shscript, which walks a bash/sh
// bootstrap script.
//
// May import: internal/cli/cmdutil, internal/helmfile, internal/shscript,
// internal/importer and anything below
// the CLI (runner/..., model, report, spec, redact).
package importcmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/internal/helmfile"
	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/command"
)

// Options of `khook import helmfile`.
type Options struct {
	F           *cmdutil.Factory
	File        string
	Out         string // "" or "-": stdout
	Name        string // metadata.name; "" is the helmfile's directory name
	Environment string
	AllowExec   bool
}

// NewCmd builds `khook import` and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Write a khook spec from another tool's file (helmfile, bash/sh script)",
		Args:  cmdutil.NoArgs,
	}
	cmd.AddCommand(newHelmfileCmd(f), newScriptCmd(f))
	return cmd
}

func newHelmfileCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "helmfile FILE|DIR",
		Short: "Convert a helmfile (templated or not) into a khook spec, release by release, saying what did not come over",
		Long: `Render a helmfile as helmfile does (sprig and helmfile's template functions,
environments, bases, helmfiles, helmfile.d, templates with inherit) and write
a khook spec: one step per release with its chart, version, namespace, values
files, .gotmpl values, inline values, set/setString and secrets (sops), and
apply/wait/patch steps for the kubectl hooks around it. Environment variables
the helmfile reads stay references: paths under them are written relative
to the spec, any other use becomes a declared ${VARIABLE}.

On stderr the import names, at its FILE:LINE, each thing it did not carry
over, then counts the releases by verdict (faithful, partial, refused) and
gives the import's. Exit 0 when every release is faithful; exit 1
when some are partial or refused (the spec is still written, with what was
not carried in its header); exit 2, writing nothing, on bad input (a template
error, YAML that does not parse after rendering, a missing values file).`,
		Example: `  khook import helmfile helmfile.yaml --out khook.yaml && khook validate -f khook.yaml
  ROOT_DIR=$PWD khook import helmfile bootstrap/helmfile.yaml.gotmpl --out bootstrap/khook.yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cmdutil.FlagErrorf("%s takes one helmfile, got %d arguments", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			return RunHelmfile(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Out, "out", "", "write the spec to `FILE` instead of stdout (generated values files go beside it)")
	cmd.Flags().StringVar(&opts.Name, "name", "", "metadata.name of the spec (default: the helmfile's directory name)")
	cmd.Flags().StringVarP(&opts.Environment, "environment", "e", "default", "the helmfile environment to render")
	cmd.Flags().BoolVar(&opts.AllowExec, "allow-exec", false, "let the helmfile's exec template function run commands")
	return cmd
}

// RunHelmfile imports opts.File.
func RunHelmfile(opts *Options) error {
	errOut := opts.F.IOStreams.ErrOut
	specDir := "."
	if opts.Out != "" && opts.Out != "-" {
		specDir = filepath.Dir(opts.Out)
	}
	res, err := helmfile.Import(".", opts.File, helmfile.Options{Environment: opts.Environment, AllowExec: opts.AllowExec, SpecDir: specDir, Name: opts.Name})
	var ie *helmfile.InputError
	if errors.As(err, &ie) {
		return &cmdutil.ExitError{Code: command.ExitValidation, Err: ie}
	}
	if err != nil {
		return err
	}
	for _, r := range res.Releases {
		for _, n := range r.NotCarried {
			fmt.Fprintf(errOut, "%s: not carried over: %s\n", n.Loc, trimRelease(n, r))
		}
		for _, n := range r.Info {
			fmt.Fprintf(errOut, "%s: warning: %s\n", n.Loc, trimRelease(n, r))
		}
	}
	for _, n := range res.NotCarried {
		fmt.Fprintf(errOut, "%s: not carried over: %s\n", n.Loc, n.What+": "+n.Why)
	}
	for _, n := range res.Info {
		fmt.Fprintf(errOut, "%s: warning: %s\n", n.Loc, n.What+": "+n.Why)
	}
	counts := map[helmfile.Verdict]int{}
	for _, r := range res.Releases {
		counts[r.Verdict]++
	}
	verdict := res.Verdict()
	if verdict == helmfile.Refused {
		first := "the helmfile has no releases"
		for _, r := range res.Releases {
			if len(r.NotCarried) > 0 {
				first = r.NotCarried[0].String()
				break
			}
		}
		return &cmdutil.ExitError{Code: command.ExitFailure, Err: fmt.Errorf("%s; no release could be imported, nothing written", first)}
	}
	fmt.Fprintf(errOut, "%d %s: %d faithful, %d partial, %d refused; import %s\n",
		len(res.Releases), model.Plural(len(res.Releases), "release", "releases"), counts[helmfile.Faithful], counts[helmfile.Partial], counts[helmfile.Refused], verdict)
	for _, f := range res.Files {
		if err := os.WriteFile(filepath.Join(specDir, f.Path), f.Data, 0o644); err != nil {
			return fmt.Errorf("cannot write %s: %w", f.Path, err)
		}
	}
	if opts.Out == "" || opts.Out == "-" {
		if _, err := opts.F.IOStreams.Out.Write(res.Spec); err != nil {
			return err
		}
	} else if err := os.WriteFile(opts.Out, res.Spec, 0o644); err != nil {
		return fmt.Errorf("cannot write the spec: %w", err)
	}
	if verdict != helmfile.Faithful {
		return cmdutil.Silent(command.ExitFailure)
	}
	return nil
}

// trimRelease is a note without its file and line (printed before it).
func trimRelease(n helmfile.Note, _ *helmfile.Release) string {
	if n.Why == "" {
		return n.What
	}
	return n.What + ": " + n.Why
}
