package importcmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/internal/importer"
	"github.com/khook/khook/internal/shscript"
	"github.com/khook/khook/runner/command"
)

// ScriptOptions of `khook import script`.
type ScriptOptions struct {
	F    *cmdutil.Factory
	File string
	Out  string // "" or "-": stdout
	Name string
	Dir  string // where the script is run from
}

func newScriptCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &ScriptOptions{F: f}
	cmd := &cobra.Command{
		Use:   "script FILE",
		Short: "Convert a bash/sh bootstrap script (helm, kubectl) into a khook spec, saying at each line what did not come over",
		Long: `Parse a bash/sh bootstrap script with a real shell parser and walk it as bash
would run it from --dir (the repository root, usually): variables and
${VAR:-default} become declared khook variables (secret-looking ones and
values read from files become secret variables, never copied), functions are
followed in call order, sourced files are read, cd and the dirname "$0"
idioms are resolved, if/case on a variable become when:, existence checks
and poll loops become the idempotent step or the wait they stand for.

Each helm and kubectl command becomes a step (helm upgrade --install, kubectl
apply/create/delete/wait/rollout/patch/label), is folded into one (helm repo
add), is read-only, or is named as not carried with what to do instead;
anything else the script runs (docker, curl | sh, kubectl exec) is named at
its line. Every step of the spec cites its line (# from FILE:LINE).

Exit 0 when everything was carried; 1 when the spec is written but something
was not carried (its header lists it, and so does stderr); 2, writing
nothing, on bad input (a script bash cannot parse, a missing sourced file, a
binary file). docs/from-scripts.md lists the idioms.`,
		Example: `  khook import script scripts/bootstrap.sh --out khook.yaml && khook validate -f khook.yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cmdutil.FlagErrorf("%s takes one script, got %d arguments", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			return RunScript(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Out, "out", "", "write the spec to `FILE` instead of stdout")
	cmd.Flags().StringVar(&opts.Name, "name", "", "metadata.name of the spec (default: the script's name)")
	cmd.Flags().StringVar(&opts.Dir, "dir", ".", "the `DIR` the script is run from: its relative paths are relative to it")
	return cmd
}

// RunScript imports opts.File.
func RunScript(opts *ScriptOptions) error {
	errOut := opts.F.IOStreams.ErrOut
	specDir := ""
	if opts.Out != "" && opts.Out != "-" {
		abs, err := filepath.Abs(filepath.Dir(opts.Out))
		if err != nil {
			return err
		}
		specDir = abs
	}
	res, err := shscript.Import(opts.File, shscript.Options{Dir: opts.Dir, SpecDir: specDir, Name: opts.Name})
	var ie *shscript.InputError
	if errors.As(err, &ie) {
		return &cmdutil.ExitError{Code: command.ExitValidation, Err: fmt.Errorf("%s; nothing written", ie)}
	}
	if err != nil {
		return err
	}
	m := res.Model
	for _, n := range m.NotCarried {
		fmt.Fprintf(errOut, "%s: not carried over: %s\n", n.Loc, whatWhy(n))
	}
	for _, n := range m.Info {
		fmt.Fprintf(errOut, "%s: warning: %s\n", n.Loc, whatWhy(n))
	}
	c := m.Counts()
	verdict := m.Verdict()
	fmt.Fprintf(errOut, "%d helm/kubectl commands: %d steps, %d folded, %d read-only, %d not carried; %d steps written; import %s\n",
		len(m.Commands), c[importer.FateStep], c[importer.FateFolded], c[importer.FateReadOnly], c[importer.FateNotCarried], len(m.Steps), verdict)
	if verdict == importer.Refused {
		return &cmdutil.ExitError{Code: command.ExitFailure, Err: fmt.Errorf("no step could be imported from %s, nothing written", opts.File)}
	}
	if opts.Out == "" || opts.Out == "-" {
		if _, err := opts.F.IOStreams.Out.Write(res.Spec); err != nil {
			return err
		}
	} else if err := os.WriteFile(opts.Out, res.Spec, 0o644); err != nil {
		return fmt.Errorf("cannot write the spec: %w", err)
	}
	if verdict != importer.Faithful {
		return cmdutil.Silent(command.ExitFailure)
	}
	return nil
}

func whatWhy(n importer.Note) string {
	if n.Why == "" {
		return n.What
	}
	return n.What + ": " + n.Why
}
