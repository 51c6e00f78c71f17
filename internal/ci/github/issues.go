package github

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/khook/khook/internal/ci/sticky"
)

// Issues is a repository's issues (khook's drift issue).
type Issues struct {
	Client *sticky.Client
	Repo   string // owner/name
}

type ghIssue struct {
	Number      int64  `json:"number"`
	Body        string `json:"body"`
	HTMLURL     string `json:"html_url"`
	PullRequest any    `json:"pull_request"`
	User        struct {
		Login string `json:"login"`
	} `json:"user"`
}

func (i ghIssue) issue() sticky.Issue {
	return sticky.Issue{Number: i.Number, Body: i.Body, URL: i.HTMLURL, Author: i.User.Login}
}

// Me returns the token's login (GET /user).
func (t *Issues) Me(ctx context.Context) (string, error) { return me(ctx, t.Client) }

// DefaultAuthor is the Actions bot, whom GITHUB_TOKEN opens issues as.
func (t *Issues) DefaultAuthor() string { return BotLogin }

// OpenIssues lists the open issues author opened (pull requests left out),
// following Link: rel="next".
func (t *Issues) OpenIssues(ctx context.Context, author string) ([]sticky.Issue, error) {
	is, err := getAll[ghIssue](ctx, t.Client, fmt.Sprintf("/repos/%s/issues?state=open&creator=%s&per_page=100", t.Repo, url.QueryEscape(author)))
	var out []sticky.Issue
	for _, i := range is {
		if i.PullRequest == nil {
			out = append(out, i.issue())
		}
	}
	return out, err
}

// CreateIssue opens an issue; GitHub creates labels that do not exist yet.
func (t *Issues) CreateIssue(ctx context.Context, title, body string, labels []string) (sticky.Issue, error) {
	in := map[string]any{"title": title, "body": body}
	if len(labels) > 0 {
		in["labels"] = labels
	}
	var i ghIssue
	_, err := t.Client.Do(ctx, http.MethodPost, fmt.Sprintf("/repos/%s/issues", t.Repo), in, &i)
	return i.issue(), err
}

// EditIssue replaces an issue's body.
func (t *Issues) EditIssue(ctx context.Context, number int64, body string) (sticky.Issue, error) {
	var i ghIssue
	_, err := t.Client.Do(ctx, http.MethodPatch, fmt.Sprintf("/repos/%s/issues/%d", t.Repo, number), map[string]string{"body": body}, &i)
	return i.issue(), err
}

// CommentIssue adds a comment.
func (t *Issues) CommentIssue(ctx context.Context, number int64, body string) error {
	_, err := t.Client.Do(ctx, http.MethodPost, fmt.Sprintf("/repos/%s/issues/%d/comments", t.Repo, number), map[string]string{"body": body}, nil)
	return err
}

// CloseIssue closes an issue as completed.
func (t *Issues) CloseIssue(ctx context.Context, number int64) error {
	_, err := t.Client.Do(ctx, http.MethodPatch, fmt.Sprintf("/repos/%s/issues/%d", t.Repo, number), map[string]string{"state": "closed", "state_reason": "completed"}, nil)
	return err
}
