package cmdutil

import (
	"errors"

	"github.com/khook/khook/sops"
	"github.com/khook/khook/spec"
)

// SpecLoadOptions checks the flags and returns the spec.LoadOptions they
// describe (LoadSpec's, and those of commands that call a spec function
// other than Load: spec.Render, spec.Declarations). Secrets go to the
// factory's redactor.
func (f *Factory) SpecLoadOptions(flags *SpecFlags) (spec.LoadOptions, error) {
	if err := flags.check(); err != nil {
		return spec.LoadOptions{}, err
	}
	return spec.LoadOptions{
		Files:        flags.Files,
		Stdin:        f.IOStreams.In,
		Set:          flags.Set,
		VarFiles:     flags.VarFiles,
		Environ:      f.IOStreams.Environ,
		VarPrefix:    flags.VarPrefix,
		SecretPrefix: flags.SecretPrefix,
		Redactor:     f.Redactor,
		Decrypt:      sops.Open,
		Policies:     flags.Policies,

		RequireVerifiedCharts: flags.RequireVerifiedCharts,
	}, nil
}

// SpecError reports a spec load error as LoadSpec does: problems printed on
// stderr and exit 2.
func (f *Factory) SpecError(err error) error {
	var problems spec.Problems
	if errors.As(err, &problems) {
		WriteProblems(f.IOStreams.ErrOut, problems)
		return ReportedProblems(problems)
	}
	return ValidationError(err)
}
