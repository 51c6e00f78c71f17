package ci

import (
	"context"
	"fmt"
	"io"
)

// sink is a CI platform as khook's report reaches it. GitHub and GitLab
// implement it; plain (any other CI, a terminal) prints the log and writes
// the files only. The report model and its renderers (package report) know
// nothing of platforms; a sink picks what its platform reads.
type sink interface {
	// mask registers every secret form with the platform's log masker, now
	// and as each is registered; it runs before anything else is printed.
	mask()
	// print writes report text that quotes the cluster (errors, diffs, pod
	// logs), fenced from the platform's command processing.
	print(text string)
	// fenceProgress fences the progress log of a run the same way; the
	// returned function ends the fence.
	fenceProgress(command string) (end func())
	// warn reports a problem that does not fail the step.
	warn(msg string)
	// runURL links the job's run, "" when unknown.
	runURL() string
	// reviewedPlan finds the plan reviewed for this run's commit and
	// identifier (plan-check); a reviewed with a problem when there is none.
	reviewedPlan(ctx context.Context) reviewed
	// publish writes what the platform reads besides the log: annotations,
	// summary, outputs and comment; or sections, reports and note.
	publish(ctx context.Context, oc *outcome)
}

func newSink(p Platform, r *runState) sink {
	switch p {
	case GitHub:
		return githubSink{r}
	case GitLab:
		return gitlabSink{plainSink{r}}
	}
	return plainSink{r}
}

// plainSink is any other CI: stdout and stderr, and the files.
type plainSink struct{ *runState }

func (plainSink) mask()                       {}
func (s plainSink) print(text string)         { io.WriteString(s.stdout, text) }
func (plainSink) fenceProgress(string) func() { return func() {} }
func (s plainSink) warn(msg string)           { fmt.Fprintf(s.errOut, "warning: %s\n", msg) }
func (plainSink) runURL() string              { return "" }
func (plainSink) reviewedPlan(context.Context) reviewed {
	return reviewed{problem: "plan-check finds the reviewed plan in khook's pull request comment, which only GitHub Actions has here: set plan-check: off (on GitLab, apply the plan file the plan job saved instead)."}
}
func (plainSink) publish(context.Context, *outcome) {}
