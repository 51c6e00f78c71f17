package gitlab

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/khook/khook/internal/ci/sticky"
)

// Issues is a project's issues (khook's drift issue).
type Issues struct {
	Client  *sticky.Client
	Project string // CI_PROJECT_ID (numeric or URL-encoded path)
}

type glIssue struct {
	IID         int64  `json:"iid"`
	Description string `json:"description"`
	WebURL      string `json:"web_url"`
	Author      struct {
		Username string `json:"username"`
	} `json:"author"`
}

func (i glIssue) issue() sticky.Issue {
	return sticky.Issue{Number: i.IID, Body: i.Description, URL: i.WebURL, Author: i.Author.Username}
}

func (t *Issues) base() string { return fmt.Sprintf("/projects/%s/issues", url.PathEscape(t.Project)) }

// Me returns the token's username (GET /user).
func (t *Issues) Me(ctx context.Context) (string, error) { return me(ctx, t.Client) }

// DefaultAuthor is empty: without /user no issue is trusted as khook's.
func (t *Issues) DefaultAuthor() string { return "" }

// OpenIssues lists the open issues author opened, following X-Next-Page.
func (t *Issues) OpenIssues(ctx context.Context, author string) ([]sticky.Issue, error) {
	is, err := getAll[glIssue](ctx, t.Client, fmt.Sprintf("%s?state=opened&author_username=%s&per_page=100", t.base(), url.QueryEscape(author)))
	out := make([]sticky.Issue, len(is))
	for i, x := range is {
		out[i] = x.issue()
	}
	return out, err
}

// CreateIssue opens an issue; GitLab creates labels that do not exist yet.
func (t *Issues) CreateIssue(ctx context.Context, title, body string, labels []string) (sticky.Issue, error) {
	in := map[string]string{"title": title, "description": body}
	if len(labels) > 0 {
		in["labels"] = strings.Join(labels, ",")
	}
	var i glIssue
	_, err := t.Client.Do(ctx, http.MethodPost, t.base(), in, &i)
	return i.issue(), err
}

// EditIssue replaces an issue's description.
func (t *Issues) EditIssue(ctx context.Context, iid int64, body string) (sticky.Issue, error) {
	var i glIssue
	_, err := t.Client.Do(ctx, http.MethodPut, fmt.Sprintf("%s/%d", t.base(), iid), map[string]string{"description": body}, &i)
	return i.issue(), err
}

// CommentIssue adds a note.
func (t *Issues) CommentIssue(ctx context.Context, iid int64, body string) error {
	_, err := t.Client.Do(ctx, http.MethodPost, fmt.Sprintf("%s/%d/notes", t.base(), iid), map[string]string{"body": body}, nil)
	return err
}

// CloseIssue closes an issue.
func (t *Issues) CloseIssue(ctx context.Context, iid int64) error {
	_, err := t.Client.Do(ctx, http.MethodPut, fmt.Sprintf("%s/%d", t.base(), iid), map[string]string{"state_event": "close"}, nil)
	return err
}
