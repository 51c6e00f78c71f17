// Package githubtest is a local stand-in for the GitHub REST endpoints a
// sticky pull request comment uses: GET /user, list (paginated), create and
// update issue comments. Tests start it on loopback and point GITHUB_API_URL
// at it.
package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync"
)

// Comment is a stored comment.
type Comment struct {
	ID     int64
	Number int // pull request
	Body   string
	Author string
}

// Server is the fake API. Set the fields before requests arrive.
type Server struct {
	*httptest.Server

	// Login is whom the token belongs to; "" makes GET /user answer 403, as
	// GitHub does for GITHUB_TOKEN (an installation token).
	Login string
	// ForbidWrites makes create and update answer 403, as for a fork's
	// read-only token.
	ForbidWrites bool
	// Token, when set, is the only bearer token accepted.
	Token string
	// Pulls maps a commit SHA to the pull request it was merged from, for
	// GET /repos/{repo}/commits/{sha}/pulls.
	Pulls map[string]int

	mu       sync.Mutex
	nextID   int64
	comments []Comment
	// Requests lists "METHOD path" of every request, in order.
	Requests []string
}

// New starts a server; Close it when done.
func New() *Server {
	s := &Server{nextID: 1000}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Seed stores a comment as if someone had written it.
func (s *Server) Seed(number int, author, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	s.comments = append(s.comments, Comment{ID: s.nextID, Number: number, Body: body, Author: author})
	return s.nextID
}

// Comments returns the comments of a pull request, oldest first.
func (s *Server) Comments(number int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.comments {
		if c.Number == number {
			out = append(out, c)
		}
	}
	return out
}

var (
	listRe   = regexp.MustCompile(`^/repos/([^/]+/[^/]+)/issues/(\d+)/comments$`)
	updateRe = regexp.MustCompile(`^/repos/([^/]+/[^/]+)/issues/comments/(\d+)$`)
	pullsRe  = regexp.MustCompile(`^/repos/([^/]+/[^/]+)/commits/([0-9a-f]+)/pulls$`)
)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Requests = append(s.Requests, r.Method+" "+r.URL.Path)
	if s.Token != "" && r.Header.Get("Authorization") != "Bearer "+s.Token {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials"})
		return
	}
	login := s.Login
	if login == "" {
		login = "github-actions[bot]"
	}
	switch {
	case r.URL.Path == "/user" && r.Method == http.MethodGet:
		if s.Login == "" {
			writeJSON(w, http.StatusForbidden, map[string]string{"message": "Resource not accessible by integration"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"login": s.Login})
	case listRe.MatchString(r.URL.Path):
		m := listRe.FindStringSubmatch(r.URL.Path)
		number, _ := strconv.Atoi(m[2])
		switch r.Method {
		case http.MethodGet:
			s.list(w, r, m[1], number)
		case http.MethodPost:
			if s.ForbidWrites {
				writeJSON(w, http.StatusForbidden, map[string]string{"message": "Resource not accessible by integration"})
				return
			}
			var in struct{ Body string }
			if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
				writeJSON(w, http.StatusBadRequest, map[string]string{"message": err.Error()})
				return
			}
			s.nextID++
			c := Comment{ID: s.nextID, Number: number, Body: in.Body, Author: login}
			s.comments = append(s.comments, c)
			writeJSON(w, http.StatusCreated, s.json(m[1], c))
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	case pullsRe.MatchString(r.URL.Path) && r.Method == http.MethodGet:
		out := []any{}
		sha := pullsRe.FindStringSubmatch(r.URL.Path)[2]
		if n := s.Pulls[sha]; n > 0 {
			out = append(out, map[string]any{"number": n, "state": "closed", "merged_at": "2026-11-22T10:00:00Z", "merge_commit_sha": sha})
		}
		writeJSON(w, http.StatusOK, out)
	case updateRe.MatchString(r.URL.Path) && r.Method == http.MethodPatch:
		m := updateRe.FindStringSubmatch(r.URL.Path)
		id, _ := strconv.ParseInt(m[2], 10, 64)
		if s.ForbidWrites {
			writeJSON(w, http.StatusForbidden, map[string]string{"message": "Resource not accessible by integration"})
			return
		}
		var in struct{ Body string }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"message": err.Error()})
			return
		}
		for i := range s.comments {
			if s.comments[i].ID == id {
				s.comments[i].Body = in.Body
				writeJSON(w, http.StatusOK, s.json(m[1], s.comments[i]))
				return
			}
		}
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
	default:
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
	}
}

func (s *Server) list(w http.ResponseWriter, r *http.Request, repo string, number int) {
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per <= 0 || per > 100 {
		per = 30
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if page <= 0 {
		page = 1
	}
	var all []Comment
	for _, c := range s.comments {
		if c.Number == number {
			all = append(all, c)
		}
	}
	lo, hi := (page-1)*per, page*per
	if lo > len(all) {
		lo = len(all)
	}
	if hi > len(all) {
		hi = len(all)
	}
	if hi < len(all) {
		w.Header().Set("Link", fmt.Sprintf(`<%s%s?per_page=%d&page=%d>; rel="next"`, s.URL, r.URL.Path, per, page+1))
	}
	out := []any{}
	for _, c := range all[lo:hi] {
		out = append(out, s.json(repo, c))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) json(repo string, c Comment) map[string]any {
	return map[string]any{
		"id":       c.ID,
		"body":     c.Body,
		"html_url": fmt.Sprintf("https://github.com/%s/pull/%d#issuecomment-%d", repo, c.Number, c.ID),
		"user":     map[string]any{"login": c.Author, "type": "Bot"},
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
