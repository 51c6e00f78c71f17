package ci

import (
	"fmt"

	"github.com/khook/khook/internal/ci/github"
	ifleet "github.com/khook/khook/internal/fleet"
	"github.com/khook/khook/runner/command"
)

// unchangedSpec applies the changed-only input: on a pull request's plan,
// when git shows that no file the spec reads (khook files' list) differs
// between the event's base and head commits, it says why the plan is not
// needed; "" means plan. Anything it cannot tell (no pull request, a
// shallow clone without the base commit) plans, with a warning.
func (r *runState) unchangedSpec() string {
	if !r.in.ChangedOnly || r.in.Command != CmdPlan {
		return ""
	}
	base, head := r.pullCommits()
	if base == "" || head == "" {
		r.warn("changed-only: this run is not on a pull request (no base and head commits): planning")
		return ""
	}
	changed, err := ifleet.ChangedFiles(r.workdir, base, head)
	if err != nil {
		r.warn(fmt.Sprintf("changed-only: cannot compare base %s with head %s (fetch both, e.g. actions/checkout with fetch-depth: 0): %s; planning", short(base), short(head), r.red.String(err.Error())))
		return ""
	}
	sp := *r.spec
	sp.Files = r.specFiles
	files, err := command.Files(&sp, r.absAll(r.in.VarFiles))
	if err != nil {
		r.warn(fmt.Sprintf("changed-only: cannot list the spec's files: %s; planning", r.red.String(err.Error())))
		return ""
	}
	reads := map[string]bool{}
	for _, f := range files {
		reads[f] = true
	}
	for _, c := range changed {
		if reads[c] {
			return ""
		}
	}
	return fmt.Sprintf("no file this spec reads changed between %s and %s", short(base), short(head))
}

// pullCommits are the pull request's (or merge request's) base and head
// commits: GitHub's event payload, GitLab's merge request pipeline
// variables.
func (r *runState) pullCommits() (base, head string) {
	if ev, err := github.ReadEvent(r.getenv("GITHUB_EVENT_PATH")); err == nil && ev.PullRequest != nil {
		return ev.PullRequest.Base.SHA, ev.PullRequest.Head.SHA
	}
	return r.getenv("CI_MERGE_REQUEST_DIFF_BASE_SHA"), r.getenv("CI_COMMIT_SHA")
}
