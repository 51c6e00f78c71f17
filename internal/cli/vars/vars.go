// Package vars is `khook vars`: list the inputs a spec declares (its vars:
// block), as a table or as a JSON Schema object for UIs and docs.
//
// May import: internal/cli/cmdutil and anything below the CLI (runner/...,
// model, report, spec, redact); another command's package only to run it
// (plan runs fleet's).
package vars

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/words"
)

// Output formats of khook vars.
const (
	FormatTable      = "table"
	FormatJSONSchema = "json-schema"
)

// Options of the vars command.
type Options struct {
	F      *cmdutil.Factory
	Spec   cmdutil.SpecFlags
	Format string
}

// NewCmd builds `khook vars`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "vars",
		Short: "List the inputs a spec declares (its vars: block)",
		Long: `List the variables the spec's vars: block declares — name, type, whether it is
required, its default and description — merged across every -f file. Values are
not needed: required inputs are listed even when unset. Secret inputs are marked
and never show a value. --format json-schema prints the inputs as one JSON Schema
object, for UIs and generated docs.`,
		Example: `  khook vars -f khook.yaml
  khook vars -f base.yaml -f prod.yaml --format json-schema > inputs.schema.json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Format != FormatTable && opts.Format != FormatJSONSchema {
				return cmdutil.FlagErrorf("--format %q: use %s or %s", opts.Format, FormatTable, FormatJSONSchema)
			}
			return Run(opts)
		},
	}
	cmdutil.AddSpecFlags(cmd.Flags(), &opts.Spec)
	cmd.Flags().StringVar(&opts.Format, "format", FormatTable, "output: table or json-schema")
	return cmd
}

// Run lists the declared inputs.
func Run(opts *Options) error {
	lo, err := opts.F.SpecLoadOptions(&opts.Spec)
	if err != nil {
		return err
	}
	d, err := spec.ReadDeclarations(lo)
	if err != nil {
		return opts.F.SpecError(err)
	}
	out := opts.F.IOStreams.Out
	if opts.Format == FormatJSONSchema {
		b, err := d.JSONSchema()
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", b)
		return err
	}
	if len(d.Vars) == 0 {
		_, err := fmt.Fprintln(out, "The spec declares no inputs (add a top-level vars: block to declare them).")
		return err
	}
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTYPE\tREQUIRED\tDEFAULT\tDESCRIPTION")
	for _, v := range d.Vars {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", v.Name, typeCell(v), requiredCell(v), defaultCell(v), words.OneLine(v.Description))
	}
	tw.Flush()
	var table strings.Builder
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		table.WriteString(strings.TrimRight(line, " \n"))
		if strings.HasSuffix(line, "\n") {
			table.WriteByte('\n')
		}
	}
	_, err = io.WriteString(out, table.String())
	return err
}

func typeCell(v *spec.VarDecl) string {
	t := v.Type
	switch {
	case v.Format != "":
		t += " (" + v.Format + ")"
	case len(v.Enum) > 0:
		t += " (" + strings.Join(v.Enum, "|") + ")"
	}
	if v.Secret {
		t += ", secret"
	}
	if v.Immutable {
		t += ", immutable"
	}
	return t
}

func requiredCell(v *spec.VarDecl) string {
	var parts []string
	if v.Required {
		parts = append(parts, "yes")
	}
	if len(v.RequiredWith) > 0 {
		parts = append(parts, "with "+strings.Join(v.RequiredWith, ","))
	}
	if len(v.RequiredWithout) > 0 {
		parts = append(parts, "without "+strings.Join(v.RequiredWithout, ","))
	}
	if len(parts) == 0 {
		return "no"
	}
	return strings.Join(parts, "; ")
}

func defaultCell(v *spec.VarDecl) string {
	switch {
	case v.Secret:
		return "***"
	case v.Default == nil:
		return "-"
	case *v.Default == "":
		return `""`
	}
	return words.OneLine(*v.Default)
}
