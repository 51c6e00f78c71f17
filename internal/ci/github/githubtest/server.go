// Package githubtest is a local stand-in for the GitHub REST endpoints a
// sticky pull request comment uses: GET /user, list (paginated), create and
// update issue comments; and those a drift issue uses: list (paginated,
// by state and creator), create and edit issues. Tests start it on loopback and point GITHUB_API_URL
// at it.
//
// May import: the standard library only (a test stand-in).
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

	// PerPage, when set, caps every page (GitHub's per_page), to test
	// pagination with few items.
	PerPage int

	mu       sync.Mutex
	nextID   int64
	comments []Comment
	issues   []*Issue
	nextNum  int
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

// Issue is a stored issue; its comments are Comments(Number).
type Issue struct {
	Number int
	Title  string
	Body   string
	Author string
	Labels []string
	State  string // open, closed
}

// SeedIssue stores an open issue as if someone had opened it.
func (s *Server) SeedIssue(author, title, body string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addIssue(author, title, body, nil).Number
}

func (s *Server) addIssue(author, title, body string, labels []string) *Issue {
	if s.nextNum == 0 {
		s.nextNum = 100
	}
	s.nextNum++
	is := &Issue{Number: s.nextNum, Title: title, Body: body, Author: author, Labels: labels, State: "open"}
	s.issues = append(s.issues, is)
	return is
}

// Issues returns copies of every issue, oldest first.
func (s *Server) Issues() []Issue {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Issue, len(s.issues))
	for i, is := range s.issues {
		out[i] = *is
	}
	return out
}

var (
	issuesRe = regexp.MustCompile(`^/repos/([^/]+/[^/]+)/issues$`)
	issueRe  = regexp.MustCompile(`^/repos/([^/]+/[^/]+)/issues/(\d+)$`)
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
	case issuesRe.MatchString(r.URL.Path):
		s.serveIssues(w, r, issuesRe.FindStringSubmatch(r.URL.Path)[1], login)
	case issueRe.MatchString(r.URL.Path) && r.Method == http.MethodPatch:
		m := issueRe.FindStringSubmatch(r.URL.Path)
		n, _ := strconv.Atoi(m[2])
		s.editIssue(w, r, m[1], n)
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
	var all []any
	for _, c := range s.comments {
		if c.Number == number {
			all = append(all, s.json(repo, c))
		}
	}
	s.page(w, r, all)
}

// page answers one page of all, with a Link rel="next" that keeps the
// query's other parameters.
func (s *Server) page(w http.ResponseWriter, r *http.Request, all []any) {
	q := r.URL.Query()
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 || per > 100 {
		per = 30
	}
	if s.PerPage > 0 && per > s.PerPage {
		per = s.PerPage
	}
	page, _ := strconv.Atoi(q.Get("page"))
	if page <= 0 {
		page = 1
	}
	lo, hi := (page-1)*per, page*per
	if lo > len(all) {
		lo = len(all)
	}
	if hi > len(all) {
		hi = len(all)
	}
	if hi < len(all) {
		q.Set("page", strconv.Itoa(page+1))
		w.Header().Set("Link", fmt.Sprintf(`<%s%s?%s>; rel="next"`, s.URL, r.URL.Path, q.Encode()))
	}
	out := []any{}
	out = append(out, all[lo:hi]...)
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) serveIssues(w http.ResponseWriter, r *http.Request, repo, login string) {
	switch r.Method {
	case http.MethodGet:
		q := r.URL.Query()
		var all []any
		for _, is := range s.issues {
			if (q.Get("state") == "" || q.Get("state") == "all" || q.Get("state") == is.State) && (q.Get("creator") == "" || q.Get("creator") == is.Author) {
				all = append(all, s.issueJSON(repo, is))
			}
		}
		s.page(w, r, all)
	case http.MethodPost:
		if s.ForbidWrites {
			writeJSON(w, http.StatusForbidden, map[string]string{"message": "Resource not accessible by integration"})
			return
		}
		var in struct {
			Title, Body string
			Labels      []string
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Title == "" {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Validation Failed"})
			return
		}
		writeJSON(w, http.StatusCreated, s.issueJSON(repo, s.addIssue(login, in.Title, in.Body, in.Labels)))
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (s *Server) editIssue(w http.ResponseWriter, r *http.Request, repo string, number int) {
	if s.ForbidWrites {
		writeJSON(w, http.StatusForbidden, map[string]string{"message": "Resource not accessible by integration"})
		return
	}
	var in struct {
		Body, State *string
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": err.Error()})
		return
	}
	for _, is := range s.issues {
		if is.Number == number {
			if in.Body != nil {
				is.Body = *in.Body
			}
			if in.State != nil {
				is.State = *in.State
			}
			writeJSON(w, http.StatusOK, s.issueJSON(repo, is))
			return
		}
	}
	writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
}

func (s *Server) issueJSON(repo string, is *Issue) map[string]any {
	return map[string]any{
		"number": is.Number, "title": is.Title, "body": is.Body, "state": is.State,
		"html_url": fmt.Sprintf("https://github.com/%s/issues/%d", repo, is.Number),
		"user":     map[string]any{"login": is.Author},
	}
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
