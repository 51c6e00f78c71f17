// Package cmdutil is what every khook command shares: the factory with the
// streams, redactor and logger, spec flags, output flags and exit codes.
//
// May import: internal/ci (its shared settings), iostreams, runner/...,
// model, report, spec, redact; no command package.
package cmdutil

import (
	"errors"
	"fmt"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/command"
)

// ExitError carries the process exit code up to main. Err, when set, is
// printed as "Error: ..." on stderr; a nil Err means the command already said
// what went wrong.
type ExitError struct {
	Code int
	Err  error
	// Reported is true when the command already printed Err (spec problems).
	Reported bool
	// Reason is the failure reason (model.Reason*, command.ReasonUsage)
	// when the code came from one (Failed): -o json's document names it.
	Reason string
}

// FailureReason names the failure for command.ReasonOf.
func (e *ExitError) FailureReason() string { return e.Reason }

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Silent returns an ExitError for a failure the command has already reported.
func Silent(code int) error { return &ExitError{Code: code} }

// Failed is the ExitError of a run that failed with reason (model.Reason*,
// command.ReasonUsage): its code is the exit-code table's
// (command.ExitCode), as khook ci's.
func Failed(reason string, err error) *ExitError {
	return &ExitError{Code: command.ExitCodeOf(true, reason), Err: err, Reason: reason}
}

// FlagErrorf reports bad command-line usage: exit 2.
func FlagErrorf(format string, args ...any) error {
	return Failed(command.ReasonUsage, fmt.Errorf(format, args...))
}

// ValidationError wraps err as a validation failure: exit 2.
func ValidationError(err error) error {
	return Failed(model.ReasonValidation, err)
}

// ReportedProblems is the ExitError of spec problems already printed.
func ReportedProblems(problems error) *ExitError {
	ee := Failed(model.ReasonValidation, problems)
	ee.Reported = true
	return ee
}

// CodeOf maps an error to its exit code: ExitError's code, else the code
// of the failure reason the error carries (command.ReasonOf), else 1.
func CodeOf(err error) int {
	if err == nil {
		return command.ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return command.ExitCodeOf(true, command.ReasonOf(err, ""))
}
