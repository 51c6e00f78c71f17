// Package schema is `khook schema`: print the DSL's JSON Schema.
//
// May import: internal/cli/cmdutil and anything below the CLI (runner/...,
// model, report, spec, redact); another command's package only to run it
// (plan runs fleet's).
package schema

import (
	"github.com/spf13/cobra"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/spec"
)

// Options of the schema command.
type Options struct {
	F *cmdutil.Factory
	// Fleet prints the fleet file's schema (docs/schema/v1/fleet.json).
	Fleet bool
}

// NewCmd builds `khook schema`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of the spec (docs/schema/v1/khook.json)",
		Long: `Print the JSON Schema of apiVersion khook.io/v1 specs, byte for byte the
committed docs/schema/v1/khook.json. Point yaml-language-server at it for
editor validation and completion. --fleet prints the fleet file's schema
(kind: Fleet, docs/schema/v1/fleet.json).`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return Run(opts) },
	}
	cmd.Flags().BoolVar(&opts.Fleet, "fleet", false, "print the fleet file's schema (kind: Fleet)")
	return cmd
}

// Run prints the schema unchanged. It is the one output that bypasses the
// redactor: the schema is a constant compiled into khook, holding no
// variable or user input, and URL-credential stripping would mangle its
// grammar text ("oci://ref[:tag|@digest]") so it no longer matched the
// committed file.
func Run(opts *Options) error {
	out, _ := opts.F.IOStreams.Unwrapped()
	doc := spec.Schema()
	if opts.Fleet {
		doc = spec.FleetSchema()
	}
	_, err := out.Write(doc)
	return err
}
