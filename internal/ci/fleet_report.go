package ci

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/khook/khook/internal/ci/gha"
	"github.com/khook/khook/internal/ci/github"
	"github.com/khook/khook/internal/ci/gitlab"
	"github.com/khook/khook/internal/ci/sticky"
	"github.com/khook/khook/internal/fleet"
	"github.com/khook/khook/model"
	"github.com/khook/khook/report"
	"github.com/khook/khook/runner/command"
)

// Fleet report files under output-dir.
const (
	FleetReportMarkdown = "fleet-report.md"
	FleetReportJSON     = "fleet-report.json"
)

// fleetMarker is the fleet comment's marker: one comment per fleet.
func fleetMarker(name string) string { return sticky.Marker("fleet/" + name) }

// fleetReport is command fleet-report: the legs' results into one report,
// one job summary and one sticky comment. Exit 1 when a cluster failed;
// with the wave input, only when the wave's failures exceed maxFailures.
func (r *runState) fleetReport(ctx context.Context) int {
	fail := func(reason string, err error) int {
		msg := r.red.String(err.Error())
		r.sink.print("Error: " + msg + "\n")
		r.writeFleetOutputs(model.RunFailed, reason, false, false, "")
		r.say("khook fleet-report: failed (%s)", reason)
		return command.ExitCodeOf(true, reason)
	}
	fl, err := r.loadFleet()
	if err != nil {
		return fail(model.ReasonValidation, err)
	}
	clusters, err := fleet.Selection(fl, r.in.Wave, "")
	if err != nil {
		return fail(model.ReasonValidation, err)
	}
	paths := r.absAll(r.in.Results)
	if len(paths) == 0 {
		dir, err := r.outputDir()
		if err != nil {
			return fail(model.ReasonValidation, err)
		}
		paths = []string{dir}
	}
	rep, problems := fleet.Report(fl, clusters, r.in.Wave, paths)
	for _, p := range problems {
		r.warn(r.relPathsIn(p))
	}
	var text bytes.Buffer
	_ = report.WriteFleetText(&text, rep)
	r.sink.print(r.red.String(text.String()))
	if _, err := r.writeFile(FleetReportJSON, func(w io.Writer) error { return report.WriteJSON(w, rep) }); err != nil {
		r.warn(err.Error())
	}
	if _, err := r.writeFile(FleetReportMarkdown, func(w io.Writer) error {
		return report.WriteFleetMarkdown(w, rep, report.FleetMarkdownOptions{RunURL: r.sink.runURL()})
	}); err != nil {
		r.warn(err.Error())
	}
	url := ""
	switch s := r.sink.(type) {
	case githubSink:
		url = s.fleetComment(ctx, rep)
		if r.wantsFleetDriftIssue(rep) {
			s.driftIssue(ctx, r.fleetDriftRun(rep, r.getenv("GITHUB_SHA"), githubCommentMaxBytes, "GitHub's 65,536 characters"))
		}
		if path := r.getenv("GITHUB_STEP_SUMMARY"); path != "" {
			var b bytes.Buffer
			_ = report.WriteFleetMarkdown(&b, rep, report.FleetMarkdownOptions{MaxBytes: summaryMaxBytes, Limit: "GitHub's 1 MiB job summary", RunURL: r.sink.runURL()})
			if err := gha.AppendFile(path, r.red.String(b.String())); err != nil {
				r.warn(err.Error())
			}
		}
	case gitlabSink:
		url = s.fleetNote(ctx, rep)
		if r.wantsFleetDriftIssue(rep) {
			s.driftIssue(ctx, r.fleetDriftRun(rep, r.getenv("CI_COMMIT_SHA"), gitlabNoteMaxBytes, "GitLab's 1,000,000 characters"))
		}
	}
	r.writeFleetOutputs(rep.Status, rep.FailureReason(), rep.Totals.Changed > 0, rep.Totals.Drifted > 0, url)
	r.say("khook fleet-report: %s", rep.Verdict().Text)
	return command.ExitCode(command.Result{Failed: rep.Failed(), Reason: rep.FailureReason()})
}

// relPathsIn shortens absolute workspace paths in a message.
func (r *runState) relPathsIn(msg string) string {
	if r.rootDir == "" {
		return msg
	}
	return strings.ReplaceAll(msg, r.rootDir+"/", "")
}

// writeFleetOutputs writes the outputs a fleet report has: status,
// changes, drift, failure-reason, comment-url.
func (r *runState) writeFleetOutputs(status, reason string, changes, drift bool, url string) {
	kvs := []kv{{OutStatus, status}, {OutChanges, strconv.FormatBool(changes)}, {OutDrift, strconv.FormatBool(drift)}, {OutFailureReason, reason}, {OutCommentURL, url}}
	switch r.sink.(type) {
	case githubSink:
		path := r.getenv("GITHUB_OUTPUT")
		if path == "" {
			return
		}
		var b strings.Builder
		for _, o := range kvs {
			if s, err := gha.FormatKeyValue(o.Key, r.red.String(o.Value)); err == nil {
				b.WriteString(s)
			}
		}
		if err := gha.AppendFile(path, b.String()); err != nil {
			r.warn(err.Error())
		}
	case gitlabSink:
		var entries []gitlab.Entry
		for _, o := range kvs {
			entries = append(entries, gitlab.Entry{Key: gitlab.DotenvKey("KHOOK_", o.Key), Value: r.red.String(o.Value)})
		}
		if text, err := gitlab.Dotenv(entries); err == nil {
			if _, err := r.writeFile(DotenvFile, func(w io.Writer) error { _, err := w.Write([]byte(text)); return err }); err != nil {
				r.warn(err.Error())
			}
		}
	}
}

// wantsFleetComment applies the comment input to a fleet report.
func (r *runState) wantsFleetComment(rep *model.FleetReport) (do, create bool) {
	switch r.in.Comment {
	case CommentNever:
		return false, false
	case CommentAlways:
		return true, true
	}
	changes := rep.Status != model.RunOK || rep.Totals.Changed > 0
	return true, changes
}

func (r *runState) fleetCommentBody(rep *model.FleetReport, commit string, max int, limit string) string {
	var b bytes.Buffer
	opts := report.CommentOptions{Marker: fleetMarker(rep.Fleet), Identifier: "fleet " + rep.Fleet, Status: model.FleetCommentStatus(rep), Commit: commit, RunURL: r.sink.runURL(), MaxBytes: max}
	_ = report.WriteFleetComment(&b, rep, opts, limit)
	return r.red.String(b.String())
}

// fleetComment keeps the fleet's one sticky pull request comment.
func (r githubSink) fleetComment(ctx context.Context, rep *model.FleetReport) string {
	do, create := r.wantsFleetComment(rep)
	if !do {
		return ""
	}
	th, commit, problem, ev, _ := r.githubThread(ctx)
	switch {
	case ev == nil || th == nil || problem != "":
		if problem != "" && ev != nil && ev.PullNumber() > 0 {
			r.warn(problem)
		}
		return ""
	case th.Number == 0 && commit != "" && rep.Command != "plan":
		// The waves' apply on the push of a merge: the merged pull
		// request's fleet comment says applied (or failed).
		n, merged, err := github.PullForCommit(ctx, th.Client, r.getenv("GITHUB_REPOSITORY"), commit)
		if err != nil || n == 0 || !merged {
			return ""
		}
		th.Number = n
	case th.Number == 0:
		return ""
	}
	if ev.PullNumber() == 0 {
		create = false
	}
	marker := fleetMarker(rep.Fleet)
	body := r.fleetCommentBody(rep, commit, githubCommentMaxBytes, "GitHub's 65,536 characters")
	res, err := sticky.Upsert(ctx, th, marker, body, create)
	switch {
	case errors.Is(err, sticky.ErrNotCreated):
		return ""
	case err != nil:
		r.warn(fmt.Sprintf("khook could not comment on pull request #%d: %s. The job summary has the full report.", th.Number, r.red.String(err.Error())))
		return ""
	}
	return res.Comment.URL
}

// fleetNote keeps the fleet's one sticky merge request note.
func (r gitlabSink) fleetNote(ctx context.Context, rep *model.FleetReport) string {
	do, create := r.wantsFleetComment(rep)
	th := r.noteThread(do, false)
	if th == nil {
		return ""
	}
	body := r.fleetCommentBody(rep, r.getenv("CI_COMMIT_SHA"), gitlabNoteMaxBytes, "GitLab's 1,000,000 characters")
	return r.upsertNote(ctx, th, fleetMarker(rep.Fleet), body, create, "The job log has the full report.")
}
