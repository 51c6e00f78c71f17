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
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/internal/helmfile"
	"github.com/khook/khook/internal/importer"
	"github.com/khook/khook/runner/command"
	"github.com/khook/khook/runner/plan"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/words"
)

// Options of `khook import helmfile` and `khook import script`: the
// flags both take, then each one's own.
type Options struct {
	F    *cmdutil.Factory
	File string
	Out  string // "" or "-": stdout
	Name string // metadata.name; "" is derived from the file

	Environment string   // helmfile: the environment to render
	AllowExec   bool     // helmfile: let exec run commands
	Sequential  bool     // helmfile: --sequential-helmfiles
	Dir         string   // script: where the script is run from
	Args        []string // script: its positional parameters ($1, $@)
}

// outcome is what an importer gives the command to print and write.
type outcome struct {
	spec       []byte
	files      []helmfile.File // beside the spec
	notCarried []importer.Note
	info       []importer.Note
	preface    string // the line before the summary ("" none)
	summary    string // the last line of stderr
	verdict    importer.Verdict
	refused    string // with verdict Refused: why nothing is written
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
to the spec, any other use becomes a declared ${VARIABLE}. A DIR is read as
helmfile reads it: its helmfile.yaml, helmfile.yaml.gotmpl or helmfile.d/ as
helmfile run there; else, as helmfile --file DIR, every *.y*ml and
*.y*ml.gotmpl file in it (a helmfile.d folder given itself).

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
	cmd.Flags().StringVarP(&opts.Environment, "environment", "e", "", "the helmfile environment to render (default: $HELMFILE_ENVIRONMENT when set, else \"default\", as helmfile)")
	cmd.Flags().BoolVar(&opts.AllowExec, "allow-exec", false, "let the helmfile's exec template function run commands")
	cmd.Flags().BoolVar(&opts.Sequential, "sequential-helmfiles", false, "order the files of a helmfile.d or of a helmfiles: glob one after the other, as helmfile --sequential-helmfiles runs them (default: in parallel, as helmfile does)")
	return cmd
}

// RunHelmfile imports opts.File, a helmfile.
func RunHelmfile(opts *Options) error { return run(opts, importHelmfile) }

func importHelmfile(opts *Options, specDir string) (*outcome, error) {
	check, err := validateCheck()
	if err != nil {
		return nil, err
	}
	res, err := helmfile.Import(".", opts.File, helmfile.Options{Environment: opts.Environment, AllowExec: opts.AllowExec, SequentialHelmfiles: opts.Sequential, SpecDir: specDir, Name: opts.Name, Check: check, Redactor: opts.F.Redactor})
	var ie *helmfile.InputError
	if errors.As(err, &ie) {
		return nil, inputError(ie)
	}
	if err != nil {
		return nil, err
	}
	o := &outcome{spec: res.Spec, files: res.Files, verdict: res.Verdict(), preface: environmentLine(res)}
	counts := map[helmfile.Verdict]int{}
	for _, r := range res.Releases {
		o.notCarried = append(o.notCarried, r.NotCarried...)
		if r.Verdict != helmfile.Refused { // a refused release's differences are moot, as in the spec's header
			o.info = append(o.info, r.Info...)
		}
		counts[r.Verdict]++
		if o.refused == "" && len(r.NotCarried) > 0 {
			o.refused = r.NotCarried[0].String() + "; no release could be imported, nothing written"
		}
	}
	o.notCarried = append(o.notCarried, res.NotCarried...)
	o.info = append(o.info, res.Info...)
	if o.refused == "" {
		o.refused = "the helmfile has no releases; no release could be imported, nothing written"
	}
	o.summary = fmt.Sprintf("%d %s: %d faithful, %d partial, %d refused; import %s",
		len(res.Releases), words.Plural(len(res.Releases), "release", "releases"), counts[helmfile.Faithful], counts[helmfile.Partial], counts[helmfile.Refused], o.verdict)
	return o, nil
}

// environmentLine says which environment the import rendered and where
// it came from, as helmfile chooses it (trial 46m's D1: an environment
// from HELMFILE_ENVIRONMENT was not seen).
func environmentLine(res *helmfile.Result) string {
	switch res.EnvironmentFrom {
	case helmfile.EnvFlag:
		return fmt.Sprintf("environment %s (from --environment)", res.Environment)
	case helmfile.EnvVariable:
		return fmt.Sprintf("environment %s (from HELMFILE_ENVIRONMENT; --environment overrides it)", res.Environment)
	}
	return fmt.Sprintf("environment %s (neither --environment nor HELMFILE_ENVIRONMENT is set)", res.Environment)
}

// validateCheck is `khook validate`'s check beyond spec.Load
// (runner/plan.Validate: what the steps apply and render, offline) at the
// Kubernetes version validate checks by default: both imports check the
// spec they write with it, so what they write validates.
func validateCheck() (importer.Check, error) {
	kv, err := cmdutil.KubeVersion("")
	if err != nil {
		return nil, err
	}
	return func(s *spec.Spec) spec.Problems {
		problems, _ := plan.Validate(context.Background(), s, kv)
		return problems
	}, nil
}

// inputError is bad input: one sentence at FILE:LINE, exit 2.
func inputError(err error) error {
	return &cmdutil.ExitError{Code: command.ExitValidation, Err: fmt.Errorf("%s; nothing written", err)}
}

// run is both imports: the spec's directory, the import, its notes and
// summary on stderr, then the spec and its files written unless refused.
// Exit 0 faithful, 1 partial or refused, 2 bad input (nothing written).
func run(opts *Options, imp func(*Options, string) (*outcome, error)) error {
	errOut := opts.F.IOStreams.ErrOut
	specDir := "."
	if opts.Out != "" && opts.Out != "-" {
		specDir = filepath.Dir(opts.Out)
	}
	specDir, err := filepath.Abs(specDir)
	if err != nil {
		return err
	}
	o, err := imp(opts, specDir)
	if err != nil {
		return err
	}
	for _, n := range importer.Collapse(o.notCarried) {
		fmt.Fprintf(errOut, "%s: not carried over: %s\n", n.Loc, whatWhy(n))
	}
	differences, notes := importer.SplitInfo(o.info)
	for _, n := range importer.Collapse(differences) {
		fmt.Fprintf(errOut, "%s: warning: %s\n", n.Loc, whatWhy(n))
	}
	for _, n := range importer.Collapse(notes) {
		fmt.Fprintf(errOut, "%s: note: %s\n", n.Loc, whatWhy(n))
	}
	if o.preface != "" {
		fmt.Fprintln(errOut, o.preface)
	}
	fmt.Fprintln(errOut, o.summary)
	if o.verdict == importer.Refused {
		return &cmdutil.ExitError{Code: command.ExitFailure, Err: errors.New(o.refused)}
	}
	// --out ci/khook.yaml makes ci/, as helm template --output-dir does
	if err := os.MkdirAll(specDir, 0o755); err != nil {
		return fmt.Errorf("cannot make the spec's folder: %w", err)
	}
	for _, f := range o.files {
		if err := os.WriteFile(filepath.Join(specDir, f.Path), f.Data, 0o644); err != nil {
			return fmt.Errorf("cannot write %s: %w", f.Path, err)
		}
	}
	if opts.Out == "" || opts.Out == "-" {
		if _, err := opts.F.IOStreams.Out.Write(o.spec); err != nil {
			return err
		}
	} else if err := os.WriteFile(opts.Out, o.spec, 0o644); err != nil {
		return fmt.Errorf("cannot write the spec: %w", err)
	}
	if o.verdict != importer.Faithful {
		return cmdutil.Silent(command.ExitFailure)
	}
	return nil
}

// whatWhy is a note without its FILE:LINE (printed before it).
func whatWhy(n importer.Counted) string {
	s := n.What
	if n.Why != "" {
		s += ": " + n.Why
	}
	if n.N > 1 {
		s += fmt.Sprintf(" (×%d)", n.N)
	}
	return s
}
