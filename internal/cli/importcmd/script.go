package importcmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/internal/importer"
	"github.com/khook/khook/internal/shscript"
)

func newScriptCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "script [flags] FILE [ARG...]",
		Short: "Convert a bash/sh bootstrap script (helm, kubectl) into a khook spec, saying at each line what did not come over",
		Long: `Parse a bash/sh bootstrap script with a real shell parser and walk it as bash
would run it from --dir (the repository root, usually): variables and
${VAR:-default} become declared khook variables (secret-looking ones and
values read from files become secret variables, never copied), functions are
followed in call order, sourced files are read, cd and the dirname "$0"
idioms are resolved, if/case on a variable become when: (a choice only the
run makes, such as what the cluster serves, a when: on a required variable
you set), existence checks and poll loops become the idempotent step or the
wait they stand for.

Each helm and kubectl command becomes a step (helm upgrade --install, kubectl
apply/create/delete/wait/rollout/patch/label, kubectl run --restart=Never as a
job), is folded into one (helm repo add, helm registry login: the steps'
auth:, the password a secret variable), is read-only, or is named as not
carried with what to do instead;
anything else the script runs (docker, curl | sh, kubectl exec) is named at
its line. Every step of the spec cites its line (# from FILE:LINE).

Exit 0 when everything was carried; 1 when something was not carried: the
spec is written with it listed in its header (and on stderr, at its line),
a step khook's spec would refuse among it — unless no step could be
carried at all, when nothing is written and stderr says so; 2, writing
nothing, on bad input (a script bash cannot parse, a sourced file of the
checkout that is missing, a binary file; one the script writes, or one of
the machine it runs on, is named at its line). Every argument after FILE is the script's own ($1, $@), as
it is run, also one starting with - (setup.sh --edition community): khook's
flags go before FILE, and a "--" right after FILE is dropped, as bash is not
given it. Without them $1 is a required variable ARG1, and an option loop's
variables keep the script's defaults. docs/from-scripts.md lists the idioms.`,
		Example: `  khook import script --out khook.yaml scripts/bootstrap.sh && khook validate -f khook.yaml
  khook import script --out khook.yaml deploy.sh prod             # run as: ./deploy.sh prod
  khook import script --out khook.yaml setup.sh --edition community   # run as: ./setup.sh --edition community`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 {
				return cmdutil.FlagErrorf("%s takes a script (and the arguments it is run with), got none", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if len(args) > 1 {
				opts.Args = args[1:]
			}
			if len(opts.Args) > 0 && opts.Args[0] == "--" && cmd.ArgsLenAtDash() < 0 {
				// FILE -- ARG...: the "--" once needed before arguments starting with -
				opts.Args = opts.Args[1:]
			}
			warnKhookFlags(f.IOStreams.ErrOut, cmd.Flags(), opts.File, opts.Args)
			return RunScript(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Out, "out", "", "write the spec to `FILE` instead of stdout")
	cmd.Flags().StringVar(&opts.Name, "name", "", "metadata.name of the spec (default: the script's name)")
	cmd.Flags().StringVar(&opts.Dir, "dir", ".", "the `DIR` the script is run from: its relative paths are relative to it (FILE and --out are named from the working directory)")
	// The script's arguments are its own, as it is run (setup.sh
	// --edition community): flags end at FILE, so one starting with -
	// reaches the script without "--".
	cmd.Flags().SetInterspersed(false)
	return cmd
}

// warnKhookFlags says when an argument after FILE is one of khook's own
// flags (--out after the script): it is the script's now, so the spec
// would not go where it was meant to.
func warnKhookFlags(w io.Writer, flags *pflag.FlagSet, file string, args []string) {
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if strings.HasPrefix(a, "--") && flags.Lookup(name) != nil {
			fmt.Fprintf(w, "warning: %s after %s is an argument of the script, not khook's flag: khook's flags go before the script (khook import script %s … %s)\n", a, file, a, file)
		}
	}
}

// RunScript imports opts.File, a bash/sh script.
func RunScript(opts *Options) error { return run(opts, importScript) }

func importScript(opts *Options, specDir string) (*outcome, error) {
	if opts.Out == "" || opts.Out == "-" {
		specDir = "" // printed: paths relative to where the script runs
	}
	check, err := validateCheck()
	if err != nil {
		return nil, err
	}
	file, err := scriptFromDir(opts.File, opts.Dir)
	if err != nil {
		return nil, err
	}
	res, err := shscript.Import(file, shscript.Options{Dir: opts.Dir, SpecDir: specDir, Name: opts.Name, Args: opts.Args, Check: check})
	var ie *shscript.InputError
	if errors.As(err, &ie) {
		return nil, inputError(ie)
	}
	if err != nil {
		return nil, err
	}
	m := res.Model
	c := m.Counts()
	summary := fmt.Sprintf("%d helm/kubectl commands: %d steps, %d folded, %d read-only, %d not carried; %d steps written; import %s",
		len(m.Commands), c[importer.FateStep], c[importer.FateFolded], c[importer.FateReadOnly], c[importer.FateNotCarried], len(m.Steps), m.Verdict())
	if other := len(m.NotCarried) - c[importer.FateNotCarried]; other > 0 {
		// the not-carried lines above name other commands too, as the
		// spec's header says: so the counts agree with them (trial
		// 46s69g's D4: "0 helm/kubectl commands" under four such lines)
		lines := "lines"
		if other == 1 {
			lines = "line"
		}
		summary += fmt.Sprintf(" (%d other %s not carried: commands, flags or conditions)", other, lines)
	}
	return &outcome{spec: res.Spec, notCarried: m.NotCarried, info: m.Info, verdict: m.Verdict(),
		summary: summary,
		refused: fmt.Sprintf("no step could be imported from %s, nothing written", opts.File)}, nil
}

// scriptFromDir is FILE, which the user names from the working directory
// as every path of the command line (--out too), as the import reads it:
// from --dir, where the script runs (trials 46s67a and c: --dir
// observability observability/backend.sh read
// observability/observability/backend.sh). A FILE only found under --dir
// is read there, as before.
func scriptFromDir(file, dir string) (string, error) {
	if filepath.IsAbs(file) || dir == "" || dir == "." {
		return file, nil
	}
	if _, err := os.Stat(file); err != nil {
		if _, underDir := os.Stat(filepath.Join(dir, file)); underDir == nil {
			return file, nil
		}
		if pe := (*os.PathError)(nil); errors.As(err, &pe) {
			err = pe.Err
		}
		return "", inputError(&shscript.InputError{File: file, Msg: fmt.Sprintf("cannot read the script: %v (read from the working directory, and not under --dir %s either)", err, dir)})
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", err
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(absDir, abs)
	if err != nil {
		return abs, nil
	}
	return rel, nil
}
