package ci

import (
	"context"
	"errors"
	"fmt"

	"github.com/khook/khook/internal/ci/github"
	"github.com/khook/khook/internal/ci/sticky"
	"github.com/khook/khook/report"
)

// githubThread is the comment thread of the run's pull request: the
// event's, or for a push the merged pull request the commit came from. It
// returns nil and a reason when there is none; the reason is "" when no
// pull request is simply the case.
func (r githubSink) githubThread(ctx context.Context) (th *github.Thread, commit, problem string, ev *github.Event, merged bool) {
	token := r.in.GitHubToken
	if token == "" {
		token = r.getenv("GITHUB_TOKEN")
	}
	repo := r.getenv("GITHUB_REPOSITORY")
	api := r.getenv("GITHUB_API_URL")
	if api == "" {
		api = "https://api.github.com"
	}
	ev, err := github.ReadEvent(r.getenv("GITHUB_EVENT_PATH"))
	if err != nil {
		return nil, "", err.Error(), nil, false
	}
	number, commit := ev.PullNumber(), r.getenv("GITHUB_SHA")
	if ev.PullRequest != nil && ev.PullRequest.Head.SHA != "" {
		commit = ev.PullRequest.Head.SHA
	}
	if token == "" || repo == "" {
		return nil, commit, "no github-token input and no GITHUB_TOKEN: khook cannot reach the pull request", ev, false
	}
	th = github.NewThread(api, token, repo, number)
	if r.opts.HTTP != nil {
		th.Client.HTTP = r.opts.HTTP
	}
	switch {
	case number > 0:
		merged = true // the event's own pull request
	case r.reviewed != nil:
		th.Number, merged = r.reviewed.number, r.reviewed.number > 0
	case commit != "" && (r.in.Command == CmdApply || r.in.Command == CmdDestroy):
		// Apply on merge (a push): the pull request the commit came from.
		th.Number, merged, err = github.PullForCommit(ctx, th.Client, repo, commit)
		if err != nil {
			return nil, commit, fmt.Sprintf("khook could not look up the pull request of commit %s: %s", short(commit), r.red.String(err.Error())), ev, false
		}
	}
	return th, commit, "", ev, merged
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// reviewedPlan reads the plan fingerprint from khook's comment on the
// pull request the run's commit came from.
func (r githubSink) reviewedPlan(ctx context.Context) reviewed {
	th, commit, problem, _, merged := r.githubThread(ctx)
	if problem != "" {
		return reviewed{problem: "There is no reviewed plan to check against: " + problem + "."}
	}
	if th.Number == 0 || !merged {
		return reviewed{problem: fmt.Sprintf("There is no reviewed plan to check against: commit %s came from no merged pull request (a direct push?).", short(commit))}
	}
	rv := reviewed{source: fmt.Sprintf("pull request #%d", th.Number), number: th.Number}
	c, found, err := sticky.Find(ctx, th, sticky.Marker(r.identifier))
	switch {
	case err != nil:
		rv.problem = fmt.Sprintf("There is no reviewed plan to check against: khook could not read the comments of %s: %s.", rv.source, r.red.String(err.Error()))
		return rv
	case !found:
		rv.problem = fmt.Sprintf("There is no reviewed plan to check against: %s has no khook comment for identifier %q (did its plan job run with this identifier, and with comment: never?).", rv.source, r.identifier)
		return rv
	}
	rv.comment = c
	rv.update = func(ctx context.Context, body string) error {
		_, err := th.Update(ctx, c.ID, body)
		return err
	}
	rv.fingerprint, rv.steps = report.CommentFingerprint(c.Body)
	if rv.fingerprint == "" {
		rv.problem = fmt.Sprintf("There is no reviewed plan to check against: khook's comment on %s carries no plan fingerprint (its last run was not a successful plan, or an older khook wrote it).", rv.source)
	}
	return rv
}

// githubComment keeps the sticky PR comment and returns its URL. Failing
// to comment never fails the step: the summary has everything.
func (r githubSink) githubComment(ctx context.Context, oc *outcome) string {
	if oc.check != nil && oc.results == nil {
		return r.markRefused(ctx, oc, r.getenv("GITHUB_SHA"))
	}
	do, create := r.wantsComment(oc)
	if !do {
		return ""
	}
	th, commit, problem, ev, _ := r.githubThread(ctx)
	switch {
	case ev == nil:
		r.warn(problem + "; no pull request comment")
		return ""
	case th == nil:
		if ev.PullNumber() > 0 {
			r.warn("no github-token input and no GITHUB_TOKEN: the pull request comment is skipped")
		}
		return ""
	case problem != "":
		r.warn(problem)
		return ""
	}
	number := th.Number
	if ev.PullNumber() == 0 {
		create = false // a push updates the merged PR's comment, never starts one
	}
	if number == 0 {
		return ""
	}
	marker := sticky.Marker(r.identifier)
	body := r.commentBody(oc, marker, commit, githubCommentMaxBytes)
	res, err := sticky.Upsert(ctx, th, marker, body, create)
	switch {
	case errors.Is(err, sticky.ErrNotCreated):
		return ""
	case sticky.IsForbidden(err):
		fork := ""
		if ev.FromFork() {
			fork = " (a pull request from a fork gets a read-only token)"
		}
		r.warn(fmt.Sprintf("khook could not comment on pull request #%d: the token may not write comments%s. The job summary has the full report. (%s)", number, fork, r.red.String(err.Error())))
		return ""
	case err != nil:
		r.warn(fmt.Sprintf("khook could not comment on pull request #%d: %s. The job summary has the full report.", number, r.red.String(err.Error())))
		return ""
	}
	return res.Comment.URL
}
