package cmdutil

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/khook/khook/spec"
)

// Default variable prefixes (the DSL's "Variables" section).
const (
	DefaultVarPrefix    = "KHOOK_VAR_"
	DefaultSecretPrefix = "KHOOK_SECRET_"
	DefaultSpecFile     = "khook.yaml"
)

// SpecFlags say where a spec and its variables come from.
type SpecFlags struct {
	Files        []string
	Set          []string
	VarFiles     []string
	VarPrefix    string
	SecretPrefix string
	// Policies are --policy files (plan, apply and validate only).
	Policies []string
	// RequireVerifiedCharts is --require-verified-charts (plan, apply and
	// validate only).
	RequireVerifiedCharts bool
}

// AddRequireVerifiedFlag registers --require-verified-charts on fs.
func AddRequireVerifiedFlag(fs *pflag.FlagSet, f *SpecFlags) {
	fs.BoolVar(&f.RequireVerifiedCharts, "require-verified-charts", false, "refuse every helm step with a remote chart that carries no verify: (docs/supply-chain.md)")
}

// AddPolicyFlag registers --policy on fs.
func AddPolicyFlag(fs *pflag.FlagSet, f *SpecFlags) {
	fs.StringArrayVar(&f.Policies, "policy", nil, "check every planned change against the policies in `FILE`: khook rules (policies: [...]) or ValidatingAdmissionPolicy manifests with their bindings and params; kept outside the spec, the spec cannot remove them (repeatable)")
}

// AddSpecFlags registers the spec flags on fs.
func AddSpecFlags(fs *pflag.FlagSet, f *SpecFlags) {
	fs.StringArrayVarP(&f.Files, "file", "f", []string{DefaultSpecFile},
		"spec file; repeat for overlays merged in order; - reads stdin")
	fs.StringArrayVar(&f.Set, "set", nil, "set a variable: NAME=value (repeatable; highest precedence)")
	fs.StringArrayVar(&f.VarFiles, "var-file", nil, "read variables from a flat YAML map NAME: value (repeatable)")
	fs.StringVar(&f.VarPrefix, "var-prefix", DefaultVarPrefix, "environment prefix of plain variables")
	fs.StringVar(&f.SecretPrefix, "secret-prefix", DefaultSecretPrefix, "environment prefix of secret variables (redacted from all output)")
}

// check rejects malformed flag values before anything is loaded.
func (f *SpecFlags) check() error {
	for _, kv := range f.Set {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return FlagErrorf("--set %q is not NAME=value", kv)
		}
	}
	stdin := 0
	for _, file := range f.Files {
		if file == "" {
			return FlagErrorf("-f/--file needs a path (or - for stdin)")
		}
		if file == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return FlagErrorf("-f - (stdin) can be given only once")
	}
	if f.VarPrefix == "" || f.SecretPrefix == "" {
		return FlagErrorf("--var-prefix and --secret-prefix cannot be empty")
	}
	if f.VarPrefix == f.SecretPrefix {
		return FlagErrorf("--var-prefix and --secret-prefix must differ (both are %q)", f.VarPrefix)
	}
	return nil
}

// LoadSpec loads the spec the flags name (errors.As the error to
// spec.Problems to get the problems themselves). Every problem is printed on the
// redacted stderr as "file:line:col: message (hint)" and the returned error
// exits 2; secrets are registered with the factory's redactor before any
// problem is built, so none leaks.
func (f *Factory) LoadSpec(flags *SpecFlags) (*spec.Spec, error) {
	opts, err := f.SpecLoadOptions(flags)
	if err != nil {
		return nil, err
	}
	s, err := spec.Load(opts)
	if err != nil {
		return nil, f.SpecError(err)
	}
	return s, nil
}

// ReportProblems prints problems found in a spec and returns the
// validation exit (2), as for the problems LoadSpec finds.
func (f *Factory) ReportProblems(problems spec.Problems) error {
	WriteProblems(f.IOStreams.ErrOut, problems)
	return ReportedProblems(problems)
}

// WriteProblems prints every problem, one per line, sorted by position,
// followed by a count; the whole list goes out in one Write.
func WriteProblems(w io.Writer, problems spec.Problems) {
	sorted := append(spec.Problems(nil), problems...)
	sorted.Sort()
	var b strings.Builder
	for _, p := range sorted {
		b.WriteString(p.String())
		b.WriteByte('\n')
	}
	noun := "problems"
	if len(sorted) == 1 {
		noun = "problem"
	}
	fmt.Fprintf(&b, "spec is invalid: %d %s\n", len(sorted), noun)
	io.WriteString(w, b.String())
}
