package sticky

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
)

// Issue is a GitHub issue or GitLab issue.
type Issue struct {
	Number int64 // GitHub's number, GitLab's iid
	Body   string
	URL    string
	Author string
}

// Tracker is a repository's issues, through a platform's API.
type Tracker interface {
	// Me and DefaultAuthor decide whose issue to trust, as for a Thread.
	Me(ctx context.Context) (string, error)
	DefaultAuthor() string
	// OpenIssues lists the open issues author opened, every page.
	OpenIssues(ctx context.Context, author string) ([]Issue, error)
	CreateIssue(ctx context.Context, title, body string, labels []string) (Issue, error)
	EditIssue(ctx context.Context, number int64, body string) (Issue, error)
	CommentIssue(ctx context.Context, number int64, body string) error
	CloseIssue(ctx context.Context, number int64) error
}

// IssueMarker is the hidden line that identifies khook's drift issue for an
// identifier (a spec's, or "fleet/<name>").
func IssueMarker(identifier string) string {
	return fmt.Sprintf("<!-- khook:drift-issue identifier=%q -->", identifier)
}

// DriftSetLine is the hidden line that records which objects drifted, so a
// later run can tell whether the set changed without parsing the table.
func DriftSetLine(drifted []string) string {
	s := append([]string(nil), drifted...)
	sort.Strings(s)
	sum := sha256.Sum256([]byte(strings.Join(s, "\n")))
	return "<!-- khook:drift-set " + hex.EncodeToString(sum[:12]) + " -->"
}

func driftSetOf(body string) string {
	const prefix = "<!-- khook:drift-set "
	i := strings.Index(body, prefix)
	if i < 0 {
		return ""
	}
	rest := body[i:]
	if j := strings.Index(rest, "-->"); j >= 0 {
		return rest[:j+3]
	}
	return ""
}

// DriftIssue is what one drift run wants of its issue.
type DriftIssue struct {
	Marker string
	Title  string
	// Drifted lists the drifted objects; empty means the run found none.
	Drifted []string
	// Body is the issue's text (the drift table); it must carry Marker.
	// Unused without drift.
	Body   string
	Labels []string
	// Changed is the comment added when the drifted set differs from the
	// one the issue records; Resolved the comment that closes it.
	Changed, Resolved string
}

// IssueResult says what SyncIssue did.
type IssueResult struct {
	Issue                              Issue
	Found                              bool
	Created, Edited, Commented, Closed bool
}

// SyncIssue brings the open drift issue in line with a drift run: opens it
// on drift, edits its body on later runs (a comment when the set of
// drifted objects changes), and comments and closes it when the run found
// no drift. It finds the issue by its marker among the open issues the
// token's user opened, so it never opens a second one.
func SyncIssue(ctx context.Context, t Tracker, d DriftIssue) (IssueResult, error) {
	me := whoAmI(ctx, t)
	issues, err := t.OpenIssues(ctx, me)
	if err != nil {
		return IssueResult{}, err
	}
	var res IssueResult
	for _, is := range issues {
		if owned(is.Body, is.Author, d.Marker, me) {
			res.Issue, res.Found = is, true
			break
		}
	}
	if len(d.Drifted) == 0 {
		if !res.Found {
			return res, nil
		}
		if err := t.CommentIssue(ctx, res.Issue.Number, d.Resolved); err != nil {
			return res, err
		}
		res.Commented = true
		if err := t.CloseIssue(ctx, res.Issue.Number); err != nil {
			return res, err
		}
		res.Closed = true
		return res, nil
	}
	set := DriftSetLine(d.Drifted)
	body := strings.TrimRight(d.Body, "\n") + "\n" + set + "\n"
	if !strings.Contains(body, d.Marker) {
		return res, fmt.Errorf("drift issue body lacks its marker %s", d.Marker)
	}
	if !res.Found {
		is, err := t.CreateIssue(ctx, d.Title, body, d.Labels)
		if err != nil {
			return res, err
		}
		res.Issue, res.Created = is, true
		return res, nil
	}
	changed := driftSetOf(res.Issue.Body) != set
	if res.Issue.Body != body {
		is, err := t.EditIssue(ctx, res.Issue.Number, body)
		if err != nil {
			return res, err
		}
		if is.URL == "" {
			is.URL = res.Issue.URL
		}
		res.Issue, res.Edited = is, true
	}
	if changed {
		if err := t.CommentIssue(ctx, res.Issue.Number, d.Changed); err != nil {
			return res, err
		}
		res.Commented = true
	}
	return res, nil
}
