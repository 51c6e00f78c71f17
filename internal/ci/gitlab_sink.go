package ci

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/khook/khook/internal/ci/gitlab"
	"github.com/khook/khook/internal/ci/sticky"
	"github.com/khook/khook/model"
	"github.com/khook/khook/report"
)

// gitlabNoteMaxBytes is under GitLab's 1,000,000-character note limit.
const gitlabNoteMaxBytes = 1_000_000 - 16<<10

// Report file names under the output directory, which the GitLab template
// lists under artifacts:reports.
const (
	JUnitFile     = "junit.xml"
	DotenvFile    = "khook.env"
	TerraformFile = "terraform.json"
)

// gitlabSink is GitLab CI: collapsible log sections, the JUnit, dotenv and
// Terraform reports, and the sticky merge request note. GitLab has no log
// command processing and no masking command: it prints and warns as plain.
type gitlabSink struct{ plainSink }

func (r gitlabSink) runURL() string { return r.getenv("CI_JOB_URL") }

func (r gitlabSink) publish(ctx context.Context, oc *outcome) {
	r.sections(oc)
	oc.comment = r.gitlabNote(ctx, oc)
	if r.wantsDriftIssue(oc) {
		r.driftIssue(ctx, r.specDriftRun(oc, r.getenv("CI_COMMIT_SHA"), gitlabNoteMaxBytes))
	}
	if _, err := r.writeFile(JUnitFile, func(w io.Writer) error { return report.WriteJUnit(w, r.junit(oc)) }); err != nil {
		r.warn(err.Error())
	}
	if r.in.TerraformReport && (oc.plan != nil || oc.results != nil) {
		var tf report.TerraformReport
		if oc.plan != nil {
			tf = report.TerraformReportOf(oc.plan)
		} else {
			tf = report.TerraformReportOfResults(oc.results)
		}
		if _, err := r.writeFile(TerraformFile, func(w io.Writer) error { return report.WriteTerraformReport(w, tf) }); err != nil {
			r.warn(err.Error())
		}
	}
	if _, err := r.writeFile(DotenvFile, func(w io.Writer) error {
		var entries []gitlab.Entry
		for _, o := range oc.outputs() {
			if dotenvDefault[o.Key] == o.Value {
				continue // GitLab's 20 variables: absent reads as its default
			}
			// Redact before the size cut, so a cut never splits a secret.
			entries = append(entries, gitlab.Entry{Key: gitlab.DotenvKey("KHOOK_", o.Key), Value: r.red.String(o.Value)})
		}
		text, err := gitlab.Dotenv(entries)
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, text)
		return err
	}); err != nil {
		r.warn(err.Error())
	}
}

// dotenvDefault are the outputs the dotenv report leaves out at their
// default (docs/ci.md): with them all, it would pass GitLab's limit of 20
// variables.
var dotenvDefault = map[string]string{OutPartial: "false", OutSelectedSteps: "", OutPlanned: "true"}

func (r *runState) junit(oc *outcome) report.JUnitSuites {
	name := r.identifier
	if r.spec != nil {
		name = r.spec.Metadata.Name
	}
	switch {
	case oc.results != nil:
		return report.JUnitOfResults(oc.results, r.identifier)
	case oc.plan != nil:
		return report.JUnitOfPlan(oc.plan, r.identifier, oc.command == CmdDrift)
	case len(oc.problems) > 0:
		return report.JUnitOfProblems(name, r.identifier, oc.problems)
	case oc.runErr != "":
		s := report.JUnitSuite{Name: "khook " + oc.command + " " + name, Tests: 1, Failures: 1, Time: "0",
			Cases: []report.JUnitCase{{Name: oc.command, Classname: "khook " + oc.command + " " + name, Time: "0",
				Failure: &report.JUnitMessage{Message: oc.reason, Text: oc.runErr}}}}
		return report.JUnitSuites{Name: "khook", Tests: 1, Failures: 1, Time: "0", Suites: []report.JUnitSuite{s}}
	}
	return report.JUnitOfProblems(name, r.identifier, nil)
}

// sections prints one collapsible log section per step: failed steps open,
// the rest collapsed. The body quotes errors and pod logs as they are.
func (r gitlabSink) sections(oc *outcome) {
	now := r.opts.Now()
	var b bytes.Buffer
	switch {
	case oc.results != nil:
		for _, s := range oc.results.Steps {
			start, end := r.timeline.span(s.Name, now)
			d := model.FormatDuration(time.Duration(s.DurationMs) * time.Millisecond)
			_ = gitlab.SectionStart(&b, start, "khook_"+s.Name, fmt.Sprintf("%s (%s): %s in %s", s.Name, s.Type, s.Status, d), s.Status != model.StatusFailed)
			fmt.Fprintf(&b, "attempts: %d\n", s.Attempts)
			for _, line := range []string{s.Detail, s.SkipReason, s.Error} {
				if line != "" {
					b.WriteString(line + "\n")
				}
			}
			if len(s.LogTail) > 0 {
				b.WriteString("last pod log lines:\n" + strings.Join(s.LogTail, "\n") + "\n")
			}
			for _, w := range s.Warnings {
				b.WriteString(report.WarningLine(w) + "\n")
			}
			if text := s.Diagnosis.Text(""); text != "" {
				b.WriteString(text + "\n")
			}
			_ = gitlab.SectionEnd(&b, end, "khook_"+s.Name)
		}
	case oc.plan != nil:
		for _, s := range oc.plan.Steps {
			_ = gitlab.SectionStart(&b, now, "khook_"+s.Name, fmt.Sprintf("%s (%s): %s", s.Name, s.Type, s.Action), s.Diff == "")
			for _, line := range []string{s.Summary, s.Reason} {
				if line != "" {
					b.WriteString(line + "\n")
				}
			}
			for _, w := range s.Warnings {
				b.WriteString(report.WarningLine(w) + "\n")
			}
			if s.Diff != "" {
				b.WriteString(strings.TrimRight(s.Diff, "\n") + "\n")
			}
			_ = gitlab.SectionEnd(&b, now, "khook_"+s.Name)
		}
	}
	io.WriteString(r.out, b.String())
}

// gitlabNote keeps the sticky merge request note when GITLAB_TOKEN is set.
func (r gitlabSink) gitlabNote(ctx context.Context, oc *outcome) string {
	do, create := r.wantsComment(oc)
	th := r.noteThread(do, true)
	if th == nil {
		return ""
	}
	marker := sticky.Marker(r.identifier)
	body := r.commentBody(oc, marker, r.getenv("CI_COMMIT_SHA"), gitlabNoteMaxBytes)
	return r.upsertNote(ctx, th, marker, body, create, "The job log and reports have the full result.")
}

// noteThread is the merge request's note thread, or nil when no note is to
// be written (do is false, no token or no merge request) or can be (no API
// URL or project; said when warn).
func (r gitlabSink) noteThread(do, warn bool) *gitlab.Thread {
	token := r.gitlabToken()
	iid, _ := strconv.Atoi(r.getenv("CI_MERGE_REQUEST_IID"))
	if !do || token == "" || iid == 0 {
		return nil
	}
	api, project := r.getenv("CI_API_V4_URL"), r.getenv("CI_PROJECT_ID")
	if api == "" || project == "" {
		if warn {
			r.warn("CI_API_V4_URL or CI_PROJECT_ID is not set: the merge request note is skipped")
		}
		return nil
	}
	th := gitlab.NewThread(api, token, project, iid, r.getenv("CI_PROJECT_URL"))
	if r.opts.HTTP != nil {
		th.Client.HTTP = r.opts.HTTP
	}
	return th
}

// gitlabToken is the token for GitLab's API: GITLAB_TOKEN, else
// KHOOK_GITLAB_TOKEN.
func (r gitlabSink) gitlabToken() string {
	if t := r.getenv("GITLAB_TOKEN"); t != "" {
		return t
	}
	return r.getenv("KHOOK_GITLAB_TOKEN")
}

// upsertNote writes body as the sticky note marker finds (creating it only
// when create) and returns its URL; a failure is a warning that says where
// the full result is instead (elsewhere).
func (r gitlabSink) upsertNote(ctx context.Context, th *gitlab.Thread, marker, body string, create bool, elsewhere string) string {
	res, err := sticky.Upsert(ctx, th, marker, body, create)
	switch {
	case errors.Is(err, sticky.ErrNotCreated):
		return ""
	case err != nil:
		r.warn(fmt.Sprintf("khook could not write the merge request note: %s. %s", r.red.String(err.Error()), elsewhere))
		return ""
	}
	return res.Comment.URL
}
