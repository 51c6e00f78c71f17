package ci

import (
	"strings"

	"github.com/khook/khook/internal/ci/github"
	runplan "github.com/khook/khook/runner/plan"
)

// lookupSecrets settles the lookup-secrets policy of a plan: the input
// when given, else deny for a pull (merge) request from a fork, whose
// chart templates are a stranger's code, else mask. The spec has no say:
// in a pull request it is that stranger's code too.
func (r *runState) lookupSecrets() string {
	if r.in.LookupSecrets != "" {
		return r.in.LookupSecrets
	}
	if r.fromFork() {
		return runplan.LookupDeny
	}
	return runplan.LookupMask
}

// fromFork reports whether the run is for a pull request from a fork (or
// a GitLab merge request from another project). An unreadable pull request
// event counts as one: the safe side.
func (r *runState) fromFork() bool {
	switch DetectPlatform(r.getenv) {
	case GitHub:
		if !strings.HasPrefix(r.getenv("GITHUB_EVENT_NAME"), "pull_request") {
			return false
		}
		ev, err := github.ReadEvent(r.getenv("GITHUB_EVENT_PATH"))
		return err != nil || ev.FromFork()
	case GitLab:
		src, dst := r.getenv("CI_MERGE_REQUEST_SOURCE_PROJECT_ID"), r.getenv("CI_MERGE_REQUEST_PROJECT_ID")
		return src != "" && src != dst
	}
	return false
}
