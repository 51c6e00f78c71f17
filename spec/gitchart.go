package spec

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// GitRepo is a chart repository in a git repository, written as the
// helm-git plugin writes it (helmfiles and helm repo add use the same):
//
//	git+https://github.com/org/repo@path/to/charts?ref=v1.2.3
//
// The charts are the chart folders under Path (or Path itself when it is
// one) at the commit Ref names; nothing is packaged or indexed by hand.
type GitRepo struct {
	// URL is the git remote: https://github.com/org/repo, userinfo kept.
	URL string
	// Path is the folder in the repository that holds the chart, or its
	// charts ("": the repository's root).
	Path string
	// Ref is the tag, branch or full commit hash the chart is read at.
	Ref string
}

// IsGitRepo reports whether a repo: URL is a git repository (git+https://).
func IsGitRepo(repo string) bool { return strings.HasPrefix(repo, "git+") }

// fullCommit is a whole SHA-1 or SHA-256 commit name.
var fullCommit = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// PinsCommit reports whether the ref names one commit for ever.
func (g GitRepo) PinsCommit() bool { return fullCommit.MatchString(g.Ref) }

// helm-git's query parameters that choose how it clones or packages
// (sparse checkout, helm dependency update, packaging): khook reads the
// one commit in memory, so they change nothing it fetches. depupdate is
// read by the importers (dependencyUpdate:).
var gitFetchParams = map[string]bool{"sparse": true, "depupdate": true, "package": true}

// ParseGitRepo takes a git+https:// repo: URL apart. Its errors are
// sentences about the URL, never holding its credentials.
func ParseGitRepo(raw string) (GitRepo, error) {
	rest, ok := strings.CutPrefix(raw, "git+")
	if !ok {
		return GitRepo{}, fmt.Errorf("a git chart repository starts with git+https://")
	}
	u, err := url.Parse(rest)
	if err != nil {
		return GitRepo{}, fmt.Errorf("is not a valid URL: %v", unwrapURLError(err))
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return GitRepo{}, fmt.Errorf("khook reads git chart repositories over git+https:// (or git+http://), not git+%s://: use the repository's HTTPS URL with auth: for a private one", u.Scheme)
	}
	if u.Host == "" {
		return GitRepo{}, fmt.Errorf("has no host")
	}
	q := u.Query()
	var g GitRepo
	for k := range q {
		if k != "ref" && !gitFetchParams[k] {
			return GitRepo{}, fmt.Errorf("has the query parameter %s=, which helm-git does not know (ref=, sparse=, depupdate=, package=)", k)
		}
	}
	g.Ref = q.Get("ref")
	if g.Ref == "" {
		return GitRepo{}, fmt.Errorf("names no ref: pin the chart with ?ref=<tag, branch or commit>, e.g. ?ref=v1.2.3 (helm-git reads master without one)")
	}
	repoPath, chartPath, _ := strings.Cut(u.Path, "@")
	g.Path = strings.Trim(chartPath, "/")
	if strings.Contains("/"+g.Path+"/", "/../") {
		return GitRepo{}, fmt.Errorf("has a chart path %q that leaves the repository", g.Path)
	}
	if strings.Trim(repoPath, "/") == "" {
		return GitRepo{}, fmt.Errorf("names no repository after the host")
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = repoPath, "", "", ""
	g.URL = u.String()
	return g, nil
}

// Where is the chart folder's place for messages, without credentials:
// "https://github.com/org/repo charts/ at v1.2.3".
func (g GitRepo) Where() string {
	u, err := url.Parse(g.URL)
	if err == nil {
		u.User = nil
	}
	where := g.URL
	if err == nil {
		where = u.String()
	}
	p := g.Path + "/"
	if g.Path == "" {
		p = "the root"
	}
	return fmt.Sprintf("%s %s at %s", where, p, g.Ref)
}
