package github

import (
	"context"
	"strings"
	"testing"

	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/internal/ci/sticky"
)

func TestStickyCommentPaginatesAndUpdatesInPlace(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	ctx := context.Background()
	// 150 comments from others, one lookalike from another user.
	for i := 0; i < 150; i++ {
		srv.Seed(7, "someone", "hello")
	}
	marker := sticky.Marker("prod")
	srv.Seed(7, "mallory", marker+"\nnot khook's")
	th := NewThread(srv.URL, "t0k", "o/r", 7)

	res, err := sticky.Upsert(ctx, th, marker, marker+"\nplanned", true)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Created || !strings.HasPrefix(res.Comment.URL, "https://github.com/o/r/pull/7#issuecomment-") {
		t.Fatalf("want a new comment, got %+v", res)
	}
	res2, err := sticky.Upsert(ctx, th, marker, marker+"\napplied", true)
	if err != nil {
		t.Fatal(err)
	}
	if !res2.Updated || res2.Comment.ID != res.Comment.ID {
		t.Fatalf("want the same comment updated, got %+v", res2)
	}
	cs := srv.Comments(7)
	if len(cs) != 152 || cs[151].Body != marker+"\napplied" || cs[150].Body != marker+"\nnot khook's" {
		t.Errorf("comments after two runs: %d, last %q", len(cs), cs[len(cs)-1].Body)
	}
	// Another identifier gets its own comment.
	if r, _ := sticky.Upsert(ctx, th, sticky.Marker("staging"), sticky.Marker("staging")+"\nx", true); !r.Created {
		t.Error("another identifier must get its own comment")
	}
}

func TestStickyCommentForbidden(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	srv.ForbidWrites = true
	th := NewThread(srv.URL, "t0k", "o/r", 1)
	m := sticky.Marker("x")
	_, err := sticky.Upsert(context.Background(), th, m, m, true)
	if !sticky.IsForbidden(err) {
		t.Fatalf("want a forbidden error, got %v", err)
	}
	if !strings.Contains(err.Error(), "403") || strings.Contains(err.Error(), "t0k") {
		t.Errorf("error should say 403 and never the token: %v", err)
	}
}

func TestStickyCommentNotCreatedWhenNotNeeded(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	srv.Login = "khook-bot"
	th := NewThread(srv.URL, "t0k", "o/r", 1)
	m := sticky.Marker("x")
	if _, err := sticky.Upsert(context.Background(), th, m, m, false); err != sticky.ErrNotCreated {
		t.Fatalf("want ErrNotCreated, got %v", err)
	}
}
