package ci

import (
	"context"
	"fmt"
	"strings"

	"github.com/khook/khook/internal/ci/github"
	"github.com/khook/khook/internal/ci/gitlab"
	"github.com/khook/khook/internal/ci/sticky"
	"github.com/khook/khook/model"
	"github.com/khook/khook/report"
)

// driftIssueListed is how many drifted objects a change comment names.
const driftIssueListed = 20

// driftRun is one drift run as its issue sees it.
type driftRun struct {
	identifier string   // whose issue: the spec's identifier, "fleet/<name>"
	title      string   // the issue's title when it is opened
	what       string   // "the cluster", "the fleet"
	drifted    []string // model.DriftedObjects; empty: no drift
	commit     string
	// body renders the issue's text (the drift table) with its marker.
	body func(marker string) string
}

// wantsDriftIssue: drift-issue is on and the run settled whether there is
// drift (a run that failed otherwise says nothing about it).
func (r *runState) wantsDriftIssue(oc *outcome) bool {
	return r.in.DriftIssue && oc.command == CmdDrift && oc.plan != nil && oc.runErr == ""
}

// specDriftRun is the drift run of one spec (command drift).
func (r *runState) specDriftRun(oc *outcome, commit string, max int) driftRun {
	return driftRun{
		identifier: r.identifier, title: "khook: " + r.identifier + " drifted from its spec", what: "the cluster",
		drifted: model.DriftedObjects(oc.plan), commit: commit,
		body: func(marker string) string { return r.commentBody(oc, marker, commit, max) },
	}
}

// fleetDriftRun is the drift run of a fleet (command fleet-report over
// drift legs): one issue lists the drifted clusters.
func (r *runState) fleetDriftRun(rep *model.FleetReport, commit string, max int, limit string) driftRun {
	return driftRun{
		identifier: "fleet/" + rep.Fleet, title: "khook: fleet " + rep.Fleet + " drifted from its spec", what: "every cluster of the fleet",
		drifted: model.FleetDriftedObjects(rep), commit: commit,
		body: func(marker string) string {
			var b strings.Builder
			opts := report.CommentOptions{Marker: marker, Identifier: "fleet " + rep.Fleet, Status: model.FleetCommentStatus(rep), Commit: commit, RunURL: r.sink.runURL(), MaxBytes: max}
			_ = report.WriteFleetComment(&b, rep, opts, limit)
			return b.String()
		},
	}
}

// wantsFleetDriftIssue: drift-issue is on, the legs ran drift, the report
// is the whole fleet's (a wave gate's report sees one wave: it must not
// close the issue of another wave's drift), and it can say there is drift
// or that there is none (a failed cluster without drift anywhere leaves
// the issue as it is: its drift is unknown).
func (r *runState) wantsFleetDriftIssue(rep *model.FleetReport) bool {
	return r.in.DriftIssue && rep.Command == CmdDrift && rep.Wave == 0 && (rep.Totals.Drifted > 0 || rep.Totals.Failed == 0)
}

// syncDriftIssue opens, edits, comments on or closes the run's drift issue.
// Every failure is a warning: the drift run's result stands.
func (r *runState) syncDriftIssue(ctx context.Context, t sticky.Tracker, d driftRun, where string) string {
	run := r.sink.runURL()
	link := "this run"
	if run != "" {
		link = fmt.Sprintf("[this run](%s)", run)
	}
	at := ""
	if d.commit != "" {
		at = fmt.Sprintf(" at `%s`", short(d.commit))
	}
	marker := sticky.IssueMarker(d.identifier)
	di := sticky.DriftIssue{
		Marker: marker, Title: d.title, Drifted: d.drifted, Labels: r.in.DriftIssueLabels,
		Resolved: r.red.String(fmt.Sprintf("✅ No drift: %s%s found %s matching the spec again. Closing this issue; khook opens a new one if drift comes back.", link, at, d.what)),
	}
	if len(d.drifted) > 0 {
		di.Body = r.red.String(d.body(marker))
		listed := d.drifted
		more := ""
		if len(listed) > driftIssueListed {
			listed, more = listed[:driftIssueListed], fmt.Sprintf("\n- … and %d more", len(d.drifted)-driftIssueListed)
		}
		di.Changed = r.red.String(fmt.Sprintf("⚠️ What drifted changed: %s%s found %d drifted:\n\n- %s%s\n\nThe issue's description has the full table.",
			link, at, len(d.drifted), strings.Join(mdEscapeAll(listed), "\n- "), more))
	}
	res, err := sticky.SyncIssue(ctx, t, di)
	switch {
	case sticky.IsForbidden(err):
		r.warn(fmt.Sprintf("khook could not keep the drift issue in %s: the token may not write issues (GitHub: give the job `permissions: issues: write`; GitLab: a token with the api scope and at least the Planner role). The drift result is unchanged. (%s)", where, r.red.String(err.Error())))
		return ""
	case err != nil:
		r.warn(fmt.Sprintf("khook could not keep the drift issue in %s: %s. The drift result is unchanged.", where, r.red.String(err.Error())))
		return ""
	}
	switch {
	case res.Created:
		r.say("khook: opened drift issue %s", res.Issue.URL)
	case res.Closed:
		r.say("khook: closed drift issue %s", res.Issue.URL)
	case res.Commented:
		r.say("khook: updated drift issue %s (what drifted changed: commented)", res.Issue.URL)
	case res.Edited:
		r.say("khook: updated drift issue %s", res.Issue.URL)
	}
	return res.Issue.URL
}

func mdEscapeAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "`" + strings.ReplaceAll(s, "`", "'") + "`"
	}
	return out
}

// githubIssues is the repository's issues, or nil and why not.
func (r githubSink) githubIssues() (*github.Issues, string) {
	token := r.in.GitHubToken
	if token == "" {
		token = r.getenv("GITHUB_TOKEN")
	}
	repo, api := r.getenv("GITHUB_REPOSITORY"), r.getenv("GITHUB_API_URL")
	if api == "" {
		api = "https://api.github.com"
	}
	if token == "" || repo == "" {
		return nil, "no github-token input and no GITHUB_TOKEN: the drift issue is skipped"
	}
	is := &github.Issues{Client: github.NewClient(api, token), Repo: repo}
	if r.opts.HTTP != nil {
		is.Client.HTTP = r.opts.HTTP
	}
	return is, ""
}

// driftIssue keeps the drift issue on GitHub.
func (r githubSink) driftIssue(ctx context.Context, d driftRun) {
	is, problem := r.githubIssues()
	if is == nil {
		r.warn(problem)
		return
	}
	r.syncDriftIssue(ctx, is, d, "repository "+is.Repo)
}

// gitlabIssues is the project's issues, or nil and why not.
func (r gitlabSink) gitlabIssues() (*gitlab.Issues, string) {
	token := r.gitlabToken()
	api, project := r.getenv("CI_API_V4_URL"), r.getenv("CI_PROJECT_ID")
	switch {
	case token == "":
		return nil, "no GITLAB_TOKEN (or KHOOK_GITLAB_TOKEN): the drift issue is skipped (CI_JOB_TOKEN may not write issues)"
	case api == "" || project == "":
		return nil, "CI_API_V4_URL or CI_PROJECT_ID is not set: the drift issue is skipped"
	}
	is := &gitlab.Issues{Client: gitlab.NewClient(api, token), Project: project}
	if r.opts.HTTP != nil {
		is.Client.HTTP = r.opts.HTTP
	}
	return is, ""
}

// driftIssue keeps the drift issue on GitLab.
func (r gitlabSink) driftIssue(ctx context.Context, d driftRun) {
	is, problem := r.gitlabIssues()
	if is == nil {
		r.warn(problem)
		return
	}
	r.syncDriftIssue(ctx, is, d, "project "+is.Project)
}
