// Package github is the pull request side of khook's CI mode: the issue
// comments REST endpoints a sticky comment needs, and the event payload.
//
// May import: internal/ci/sticky and the standard library.
package github

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"

	"github.com/khook/khook/internal/ci/sticky"
)

// BotLogin authors comments made with the workflow's GITHUB_TOKEN.
const BotLogin = "github-actions[bot]"

// Thread is the comments of one pull request.
type Thread struct {
	Client *sticky.Client
	Repo   string // owner/name
	Number int
}

// NewThread returns a thread on repo's pull request number, talking to
// apiURL (GITHUB_API_URL) with token.
func NewThread(apiURL, token, repo string, number int) *Thread {
	return &Thread{Client: NewClient(apiURL, token), Repo: repo, Number: number}
}

// NewClient is a REST client for apiURL (GITHUB_API_URL) with token.
func NewClient(apiURL, token string) *sticky.Client {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+token)
	h.Set("Accept", "application/vnd.github+json")
	h.Set("X-GitHub-Api-Version", "2022-11-28")
	return &sticky.Client{Platform: "GitHub", BaseURL: apiURL, Header: h}
}

type ghComment struct {
	ID      int64  `json:"id"`
	Body    string `json:"body"`
	HTMLURL string `json:"html_url"`
	User    struct {
		Login string `json:"login"`
	} `json:"user"`
}

func (c ghComment) comment() sticky.Comment {
	return sticky.Comment{ID: c.ID, Body: c.Body, URL: c.HTMLURL, Author: c.User.Login}
}

// Me returns the token's login (GET /user); installation tokens get a 403.
func (t *Thread) Me(ctx context.Context) (string, error) { return me(ctx, t.Client) }

func me(ctx context.Context, c *sticky.Client) (string, error) {
	var u struct {
		Login string `json:"login"`
	}
	_, err := c.Do(ctx, http.MethodGet, "/user", nil, &u)
	return u.Login, err
}

// DefaultAuthor is the Actions bot, whom GITHUB_TOKEN comments as.
func (t *Thread) DefaultAuthor() string { return BotLogin }

var nextLink = regexp.MustCompile(`<([^>]+)>;\s*rel="next"`)

// List returns every comment of the pull request, following Link: rel="next".
func (t *Thread) List(ctx context.Context) ([]sticky.Comment, error) {
	cs, err := getAll[ghComment](ctx, t.Client, fmt.Sprintf("/repos/%s/issues/%d/comments?per_page=100", t.Repo, t.Number))
	out := make([]sticky.Comment, len(cs))
	for i, c := range cs {
		out[i] = c.comment()
	}
	return out, err
}

// getAll GETs path and every page after it (Link: rel="next"), at most 100.
func getAll[T any](ctx context.Context, c *sticky.Client, path string) ([]T, error) {
	var out []T
	for page := 0; path != "" && page < 100; page++ {
		var items []T
		h, err := c.Do(ctx, http.MethodGet, path, nil, &items)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		path = ""
		if m := nextLink.FindStringSubmatch(h.Get("Link")); m != nil {
			if u, err := url.Parse(m[1]); err == nil {
				path = u.RequestURI()
				if base, err := url.Parse(c.BaseURL); err == nil && base.Path != "" && base.Path != "/" {
					// GitHub Enterprise serves the API under /api/v3: the link
					// repeats that prefix, BaseURL already has it.
					if len(path) >= len(base.Path) && path[:len(base.Path)] == base.Path {
						path = path[len(base.Path):]
					}
				}
			}
		}
	}
	return out, nil
}

// Create posts a new comment.
func (t *Thread) Create(ctx context.Context, body string) (sticky.Comment, error) {
	var c ghComment
	_, err := t.Client.Do(ctx, http.MethodPost, fmt.Sprintf("/repos/%s/issues/%d/comments", t.Repo, t.Number), map[string]string{"body": body}, &c)
	return c.comment(), err
}

// Update replaces a comment's body.
func (t *Thread) Update(ctx context.Context, id int64, body string) (sticky.Comment, error) {
	var c ghComment
	_, err := t.Client.Do(ctx, http.MethodPatch, fmt.Sprintf("/repos/%s/issues/comments/%d", t.Repo, id), map[string]string{"body": body}, &c)
	return c.comment(), err
}

// PullForCommit finds the pull request a pushed commit came from (GET
// /repos/{repo}/commits/{sha}/pulls), so apply-on-merge can check and update
// the comment plan left: the one merged as that commit first, then any
// merged one, then (merged false) an open one that contains it. 0 when
// there is none.
func PullForCommit(ctx context.Context, c *sticky.Client, repo, sha string) (number int, merged bool, err error) {
	var pulls []struct {
		Number         int     `json:"number"`
		MergedAt       *string `json:"merged_at"`
		MergeCommitSHA string  `json:"merge_commit_sha"`
	}
	if _, err := c.Do(ctx, http.MethodGet, fmt.Sprintf("/repos/%s/commits/%s/pulls", repo, sha), nil, &pulls); err != nil {
		return 0, false, err
	}
	for _, p := range pulls {
		if p.MergedAt != nil && p.MergeCommitSHA == sha {
			return p.Number, true, nil
		}
	}
	for _, p := range pulls {
		if p.MergedAt != nil {
			return p.Number, true, nil
		}
	}
	if len(pulls) == 0 {
		return 0, false, nil
	}
	return pulls[0].Number, false, nil
}
