package gitlab

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/khook/khook/internal/ci/sticky"
)

// Thread is the notes of one merge request.
type Thread struct {
	Client     *sticky.Client
	Project    string // CI_PROJECT_ID (numeric or URL-encoded path)
	IID        int    // CI_MERGE_REQUEST_IID
	ProjectURL string // CI_PROJECT_URL, for links to notes
}

// NewThread returns a thread on a merge request, talking to apiURL
// (CI_API_V4_URL) with a personal, project or group access token.
func NewThread(apiURL, token, project string, iid int, projectURL string) *Thread {
	return &Thread{Client: NewClient(apiURL, token), Project: project, IID: iid, ProjectURL: projectURL}
}

// NewClient is a REST client for apiURL (CI_API_V4_URL) with token.
func NewClient(apiURL, token string) *sticky.Client {
	h := http.Header{}
	h.Set("PRIVATE-TOKEN", token)
	return &sticky.Client{Platform: "GitLab", BaseURL: apiURL, Header: h}
}

type glNote struct {
	ID     int64  `json:"id"`
	Body   string `json:"body"`
	System bool   `json:"system"`
	Author struct {
		Username string `json:"username"`
	} `json:"author"`
}

func (t *Thread) note(n glNote) sticky.Comment {
	u := ""
	if t.ProjectURL != "" {
		u = fmt.Sprintf("%s/-/merge_requests/%d#note_%d", t.ProjectURL, t.IID, n.ID)
	}
	return sticky.Comment{ID: n.ID, Body: n.Body, URL: u, Author: n.Author.Username}
}

func (t *Thread) base() string {
	return fmt.Sprintf("/projects/%s/merge_requests/%d/notes", url.PathEscape(t.Project), t.IID)
}

// Me returns the token's username (GET /user).
func (t *Thread) Me(ctx context.Context) (string, error) { return me(ctx, t.Client) }

func me(ctx context.Context, c *sticky.Client) (string, error) {
	var u struct {
		Username string `json:"username"`
	}
	_, err := c.Do(ctx, http.MethodGet, "/user", nil, &u)
	return u.Username, err
}

// DefaultAuthor is empty: without /user no note is trusted as khook's.
func (t *Thread) DefaultAuthor() string { return "" }

// List returns every note, following X-Next-Page.
func (t *Thread) List(ctx context.Context) ([]sticky.Comment, error) {
	ns, err := getAll[glNote](ctx, t.Client, t.base()+"?per_page=100&sort=asc")
	var out []sticky.Comment
	for _, n := range ns {
		if !n.System {
			out = append(out, t.note(n))
		}
	}
	return out, err
}

// getAll GETs path (which has a query) page by page, following
// X-Next-Page, at most 1000 pages.
func getAll[T any](ctx context.Context, c *sticky.Client, path string) ([]T, error) {
	var out []T
	for page := 1; page > 0 && page < 1000; {
		var items []T
		h, err := c.Do(ctx, http.MethodGet, fmt.Sprintf("%s&page=%d", path, page), nil, &items)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		page, _ = strconv.Atoi(h.Get("X-Next-Page"))
	}
	return out, nil
}

// Create posts a new note.
func (t *Thread) Create(ctx context.Context, body string) (sticky.Comment, error) {
	var n glNote
	_, err := t.Client.Do(ctx, http.MethodPost, t.base(), map[string]string{"body": body}, &n)
	return t.note(n), err
}

// Update replaces a note's body.
func (t *Thread) Update(ctx context.Context, id int64, body string) (sticky.Comment, error) {
	var n glNote
	_, err := t.Client.Do(ctx, http.MethodPut, fmt.Sprintf("%s/%d", t.base(), id), map[string]string{"body": body}, &n)
	return t.note(n), err
}
