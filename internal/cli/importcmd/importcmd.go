// Package importcmd is `khook import`: a khook spec from another tool's
// file. `khook import helmfile FILE` converts a helmfile.yaml's common
// subset (helmfile.go) and lists, with its line, everything it did not.
//
// May import: internal/cli/cmdutil and anything below the CLI (runner/...,
// model, report, spec, redact); another command's package only to run it
// (plan runs fleet's).
package importcmd

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	yaml "go.yaml.in/yaml/v3"

	"github.com/khook/khook/internal/cli/cmdutil"
)

// Options of `khook import helmfile`.
type Options struct {
	F    *cmdutil.Factory
	File string
	Out  string // "" or "-": stdout
	Name string // metadata.name; "" is the helmfile's directory name
}

// NewCmd builds `khook import` and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Write a khook spec from another tool's file (helmfile)",
		Args:  cmdutil.NoArgs,
	}
	cmd.AddCommand(newHelmfileCmd(f))
	return cmd
}

func newHelmfileCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "helmfile FILE",
		Short: "Convert a helmfile.yaml into a khook spec and list what it could not convert",
		Long: `Convert a helmfile.yaml's common subset into a khook spec: repositories,
helmDefaults (wait, atomic, timeout, createNamespace) and releases with chart,
version, namespace, values (files and inline), set, needs, installed (false
becomes a delete of the release), wait, atomic, timeout and createNamespace.
Every other construct is listed on stderr as FILE:LINE: what: why, and in the
spec's header comment. Chart paths and values files are written as the
helmfile has them: write the spec next to the helmfile. A templated helmfile
is rendered first (helmfile build > rendered.yaml).`,
		Example: `  khook import helmfile helmfile.yaml > khook.yaml
  khook import helmfile helmfile.yaml --out khook.yaml && khook validate -f khook.yaml`,
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
	cmd.Flags().StringVar(&opts.Out, "out", "", "write the spec to `FILE` instead of stdout")
	cmd.Flags().StringVar(&opts.Name, "name", "", "metadata.name of the spec (default: the helmfile's directory name)")
	return cmd
}

// RunHelmfile converts opts.File.
func RunHelmfile(opts *Options) error {
	data, err := os.ReadFile(opts.File)
	if err != nil {
		return fmt.Errorf("cannot read the helmfile: %w", err)
	}
	name := opts.Name
	if name == "" {
		abs, _ := filepath.Abs(opts.File)
		name = SpecName(abs)
	}
	conv, err := ConvertHelmfile(data, name)
	if err != nil {
		return fmt.Errorf("%s: %w", opts.File, err)
	}
	var body bytes.Buffer
	enc := yaml.NewEncoder(&body)
	enc.SetIndent(2)
	if err := enc.Encode(conv.Spec); err != nil {
		return fmt.Errorf("cannot encode the spec: %w", err)
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "# Converted from %s by khook import helmfile.\n", filepath.Base(opts.File))
	if n := len(conv.Unconverted); n > 0 {
		fmt.Fprintf(&out, "# Not converted (%d):\n", n)
		for _, u := range conv.Unconverted {
			fmt.Fprintf(&out, "#   %s\n", u)
		}
	}
	out.Write(body.Bytes())
	for _, u := range conv.Unconverted {
		fmt.Fprintf(opts.F.IOStreams.ErrOut, "%s:%d: %s: not converted: %s\n", opts.File, u.Line, u.What, u.Why)
	}
	fmt.Fprintf(opts.F.IOStreams.ErrOut, "%d releases converted into steps; %d constructs not converted\n",
		len(conv.Spec.Steps), len(conv.Unconverted))
	if opts.Out == "" || opts.Out == "-" {
		_, err = opts.F.IOStreams.Out.Write(out.Bytes())
		return err
	}
	if err := os.WriteFile(opts.Out, out.Bytes(), 0o644); err != nil {
		return fmt.Errorf("cannot write the spec: %w", err)
	}
	return nil
}
