// Package sticky keeps one comment per (pull request, identifier) on a
// GitHub pull request or GitLab merge request: it finds the comment by a
// hidden HTML marker and by author, and edits it in place.
//
// May import: the standard library only.
package sticky

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Comment is a PR comment or MR note.
type Comment struct {
	ID     int64
	Body   string
	URL    string // a link a person can open
	Author string // login / username
}

// Thread is the comments of one PR or MR, through a platform's API.
type Thread interface {
	// Me returns the login of the token's user; "" and an error when the
	// token may not ask (GitHub installation tokens cannot read /user).
	Me(ctx context.Context) (string, error)
	// DefaultAuthor is whom to trust when Me fails ("github-actions[bot]").
	DefaultAuthor() string
	List(ctx context.Context) ([]Comment, error)
	Create(ctx context.Context, body string) (Comment, error)
	Update(ctx context.Context, id int64, body string) (Comment, error)
}

// Marker is the hidden line that identifies khook's comment for an identifier.
func Marker(identifier string) string {
	return fmt.Sprintf("<!-- khook:comment identifier=%q -->", identifier)
}

// Result says what Upsert did.
type Result struct {
	Comment Comment
	Created bool
	Updated bool
}

// ErrNotCreated is returned when no comment exists and create was false.
var ErrNotCreated = errors.New("no comment to update and none was needed")

// Upsert edits the comment that carries marker and was written by the
// token's user, or creates one when create is true. body must contain marker.
func Upsert(ctx context.Context, t Thread, marker, body string, create bool) (Result, error) {
	if !strings.Contains(body, marker) {
		return Result{}, fmt.Errorf("comment body lacks its marker %s", marker)
	}
	c, found, err := Find(ctx, t, marker)
	if err != nil {
		return Result{}, err
	}
	if found {
		if c.Body == body {
			return Result{Comment: c}, nil
		}
		u, err := t.Update(ctx, c.ID, body)
		if err != nil {
			return Result{}, err
		}
		return Result{Comment: u, Updated: true}, nil
	}
	if !create {
		return Result{}, ErrNotCreated
	}
	created, err := t.Create(ctx, body)
	if err != nil {
		return Result{}, err
	}
	return Result{Comment: created, Created: true}, nil
}

// Find returns the comment that carries marker and was written by the
// token's user (whom to trust: a lookalike from someone else is ignored).
func Find(ctx context.Context, t Thread, marker string) (Comment, bool, error) {
	me := whoAmI(ctx, t)
	comments, err := t.List(ctx)
	if err != nil {
		return Comment{}, false, err
	}
	for _, c := range comments {
		if owned(c.Body, c.Author, marker, me) {
			return c, true, nil
		}
	}
	return Comment{}, false, nil
}

// whoAmI is the token's user, or the platform's default author when the
// token may not ask.
func whoAmI(ctx context.Context, t interface {
	Me(context.Context) (string, error)
	DefaultAuthor() string
}) string {
	me, err := t.Me(ctx)
	if err != nil || me == "" {
		me = t.DefaultAuthor()
	}
	return me
}

// owned is the trust rule for a comment or issue: it carries the marker
// and the token's user wrote it (a lookalike from someone else is ignored).
func owned(body, author, marker, me string) bool {
	return strings.Contains(body, marker) && strings.EqualFold(author, me)
}
