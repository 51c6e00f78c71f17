package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
)

// StepInfo is what the progress views know about a step before it runs.
type StepInfo struct {
	Name        string
	Type        string
	MaxAttempts int       // retries + 1
	Skip        spec.Skip // left out before the run (Skip.Excluded): shown skipped from the start
}

// stepDetail is the table's last column: the error of a failed step, the
// reason of a skipped one, else what the step did. Only its first line:
// the full error follows the table.
func stepDetail(s model.StepResult) string {
	var d string
	switch {
	case s.Error != "":
		d = s.Error
	case s.SkipReason != "":
		d = s.SkipReason
	default:
		d = s.Detail
	}
	first, _, _ := strings.Cut(d, "\n")
	return first
}

// WriteResultsTable renders the final table of a run:
// STEP TYPE STATUS ATTEMPTS DURATION DETAIL/ERROR, then every failed step's
// full error and log tail, then one closing line. One Write.
func WriteResultsTable(w io.Writer, r *model.Results) error {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP\tTYPE\tSTATUS\tATTEMPTS\tDURATION\tDETAIL/ERROR")
	for _, s := range r.Steps {
		took := model.FormatDuration(time.Duration(s.DurationMs) * time.Millisecond)
		if s.Status == model.StatusSkipped && s.DurationMs == 0 {
			took = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", s.Name, s.Type, s.Status, s.Attempts, took, stepDetail(s))
	}
	tw.Flush()
	writeFailures(&b, r, false)
	writeStepWarnings(&b, r)
	b.WriteString(ResultsLine(r))
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}

// writeFailures prints failed steps' complete errors and pod log tails,
// which the one-line table column cuts. all also prints one-line errors
// (the live view cuts its lines to the terminal width).
func writeFailures(b *bytes.Buffer, r *model.Results, all bool) {
	for _, s := range r.Steps {
		if s.Status != model.StatusFailed || (!all && !strings.Contains(s.Error, "\n") && len(s.LogTail) == 0 && s.Diagnosis.Empty()) {
			continue
		}
		fmt.Fprintf(b, "\nstep %s failed:\n", s.Name)
		for _, line := range strings.Split(strings.TrimRight(s.Error, "\n"), "\n") {
			fmt.Fprintf(b, "    %s\n", line)
		}
		if tail := s.LogTailNotInError(); len(tail) > 0 {
			b.WriteString("  last pod log lines:\n")
			for _, line := range tail {
				fmt.Fprintf(b, "    %s\n", line)
			}
		}
		if lines := s.Diagnosis.Lines(); len(lines) > 0 {
			fmt.Fprintf(b, "  %s\n", s.Diagnosis.Heading())
			for _, line := range lines {
				fmt.Fprintf(b, "    %s\n", line)
			}
		}
	}
}

// ResultsLine is the closing line of a run:
// "apply demo: failed (step-failed) in 1m02s: 3 ok, 1 failed, 2 skipped".
func ResultsLine(r *model.Results) string {
	counts := map[model.Status]int{}
	for _, s := range r.Steps {
		counts[s.Status]++
	}
	var parts []string
	for _, st := range []model.Status{model.StatusOK, model.StatusFailed, model.StatusSkipped, model.StatusRunning, model.StatusPending} {
		if n := counts[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	cmd := r.Command
	if cmd == "" {
		cmd = "run"
	}
	line := fmt.Sprintf("%s %s: %s", cmd, r.Name, r.Status)
	if h := r.Selection.Headline(); h != "" {
		line = fmt.Sprintf("%s %s (%s): %s", cmd, r.Name, h, r.Status)
	}
	if r.FailureReason != "" {
		line += " (" + r.FailureReason + ")"
	}
	line += " in " + model.FormatDuration(time.Duration(r.DurationMs)*time.Millisecond)
	if len(parts) > 0 {
		line += ": " + strings.Join(parts, ", ")
	}
	if len(r.Steps) > 0 {
		line += "\n" + model.ChangesSentence(r)
	}
	if r.Error != "" {
		line += "\nerror: " + r.Error
	}
	return line
}
