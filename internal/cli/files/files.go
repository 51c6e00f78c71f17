// Package files is `khook files`: every file a spec reads, one per line,
// for CI path filters.
//
// May import: internal/cli/cmdutil and anything below the CLI (runner/...,
// model, report, spec, redact); another command's package only to run it
// (plan runs fleet's).
package files

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/runner/command"
)

// Options of the files command.
type Options struct {
	F    *cmdutil.Factory
	Spec cmdutil.SpecFlags
	// Absolute prints absolute paths (default: relative to the working
	// directory when inside it).
	Absolute bool
}

// NewCmd builds `khook files`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "files",
		Short: "List every file the spec reads, one per line (for CI path filters)",
		Long: `List every file a run of the spec reads, one path a line, sorted: the spec
and its overlays, --var-file files, and for every step its manifest and
values files (of a step when: excludes, those that exist), every file of a
local chart, and the
files a kustomization's render reads (its bases and patches, nothing else in
the tree), and the --policy files. Paths are relative to the working
directory when inside it.
Use it for CI path filters; khook ci's changed-only decides from the same list.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return Run(opts) },
	}
	cmdutil.AddSpecFlags(cmd.Flags(), &opts.Spec)
	// A plan reads its --policy files too, so a change to one is a change.
	cmdutil.AddPolicyFlag(cmd.Flags(), &opts.Spec)
	cmd.Flags().BoolVar(&opts.Absolute, "absolute", false, "print absolute paths")
	return cmd
}

// Run loads the spec and prints its files.
func Run(opts *Options) error {
	s, err := opts.F.LoadSpec(&opts.Spec)
	if err != nil {
		return err
	}
	list, err := command.Files(s, opts.Spec.VarFiles)
	if err != nil {
		return err
	}
	cwd, _ := os.Getwd()
	var b strings.Builder
	for _, p := range list {
		if rel, err := filepath.Rel(cwd, p); err == nil && !opts.Absolute && cwd != "" && !strings.HasPrefix(rel, "..") {
			p = rel
		}
		b.WriteString(filepath.ToSlash(p) + "\n")
	}
	_, err = opts.F.IOStreams.Out.Write([]byte(b.String()))
	return err
}
