package ci

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/khook/khook/report"
)

// fakeGitLab serves the merge request notes endpoints a sticky note uses.
type fakeGitLab struct {
	mu       sync.Mutex
	notes    []map[string]any
	next     int64
	requests []string // "METHOD path", in order
	// issues are the project's; issueNotes their notes by iid. perPage
	// caps the issue list's pages (X-Next-Page); forbid answers writes 403.
	issues     []map[string]any
	issueNotes map[int64][]string
	perPage    int
	forbid     bool
}

var glIssueRe = regexp.MustCompile(`^/projects/42/issues/(\d+)(/notes)?$`)

// serveIssues serves the project's issues endpoints; false when r is not one.
func (f *fakeGitLab) serveIssues(w http.ResponseWriter, r *http.Request) bool {
	if f.forbid && r.Method != http.MethodGet {
		w.WriteHeader(http.StatusForbidden)
		json.NewEncoder(w).Encode(map[string]any{"message": "403 Forbidden"})
		return true
	}
	var in map[string]string
	if r.Method != http.MethodGet {
		json.NewDecoder(r.Body).Decode(&in)
	}
	switch m := glIssueRe.FindStringSubmatch(r.URL.Path); {
	case r.URL.Path == "/projects/42/issues" && r.Method == http.MethodGet:
		q := r.URL.Query()
		var sel []map[string]any
		for _, is := range f.issues {
			if is["state"] == q.Get("state") && is["author"].(map[string]any)["username"] == q.Get("author_username") {
				sel = append(sel, is)
			}
		}
		page, _ := strconv.Atoi(q.Get("page"))
		per := f.perPage
		if per == 0 {
			per = 100
		}
		lo, hi := min((page-1)*per, len(sel)), min(page*per, len(sel))
		if hi < len(sel) {
			w.Header().Set("X-Next-Page", strconv.Itoa(page+1))
		}
		json.NewEncoder(w).Encode(append([]map[string]any{}, sel[lo:hi]...))
	case r.URL.Path == "/projects/42/issues" && r.Method == http.MethodPost:
		iid := int64(len(f.issues) + 1)
		is := map[string]any{"iid": iid, "title": in["title"], "description": in["description"], "labels": in["labels"], "state": "opened",
			"web_url": fmt.Sprintf("https://gitlab.example/acme/infra/-/issues/%d", iid), "author": map[string]any{"username": "khook-bot"}}
		f.issues = append(f.issues, is)
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(is)
	case m != nil:
		iid, _ := strconv.ParseInt(m[1], 10, 64)
		if iid < 1 || int(iid) > len(f.issues) {
			w.WriteHeader(http.StatusNotFound)
			return true
		}
		is := f.issues[iid-1]
		switch {
		case m[2] != "" && r.Method == http.MethodPost:
			if f.issueNotes == nil {
				f.issueNotes = map[int64][]string{}
			}
			f.issueNotes[iid] = append(f.issueNotes[iid], in["body"])
			w.WriteHeader(http.StatusCreated)
			json.NewEncoder(w).Encode(map[string]any{"id": 1, "body": in["body"]})
		case m[2] == "" && r.Method == http.MethodPut:
			if d, ok := in["description"]; ok {
				is["description"] = d
			}
			if in["state_event"] == "close" {
				is["state"] = "closed"
			}
			json.NewEncoder(w).Encode(is)
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	default:
		return false
	}
	return true
}

func (f *fakeGitLab) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r.Method+" "+r.URL.Path)
	if r.Header.Get("PRIVATE-TOKEN") != "glpat-t0ken" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/projects/42/issues") && f.serveIssues(w, r) {
		return
	}
	base := "/projects/42/merge_requests/5/notes"
	switch {
	case r.URL.Path == "/user":
		json.NewEncoder(w).Encode(map[string]any{"username": "khook-bot"})
	case r.URL.Path == base && r.Method == http.MethodGet:
		json.NewEncoder(w).Encode(f.notes)
	case r.URL.Path == base && r.Method == http.MethodPost:
		var in map[string]string
		json.NewDecoder(r.Body).Decode(&in)
		f.next++
		n := map[string]any{"id": f.next, "body": in["body"], "author": map[string]any{"username": "khook-bot"}}
		f.notes = append(f.notes, n)
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(n)
	case strings.HasPrefix(r.URL.Path, base+"/") && r.Method == http.MethodPut:
		var in map[string]string
		json.NewDecoder(r.Body).Decode(&in)
		for _, n := range f.notes {
			if fmt.Sprint(n["id"]) == strings.TrimPrefix(r.URL.Path, base+"/") {
				n["body"] = in["body"]
				json.NewEncoder(w).Encode(n)
				return
			}
		}
		w.WriteHeader(http.StatusNotFound)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func TestGitLabJobReportsAndStickyNote(t *testing.T) {
	gl := &fakeGitLab{}
	srv := httptest.NewServer(gl)
	defer srv.Close()
	dir := t.TempDir()
	for _, f := range []string{"khook.yaml", "vars.yaml"} {
		data, _ := os.ReadFile(filepath.Join("testdata", f))
		os.WriteFile(filepath.Join(dir, f), data, 0o644)
	}
	env := []string{"GITLAB_CI=true", "CI_PROJECT_DIR=" + dir, "CI_API_V4_URL=" + srv.URL, "CI_PROJECT_ID=42",
		"CI_MERGE_REQUEST_IID=5", "CI_PROJECT_URL=https://gitlab.example/acme/infra", "GITLAB_TOKEN=glpat-t0ken",
		"KHOOK_COMMAND=plan", "KHOOK_VAR_FILE=vars.yaml", "KHOOK_TERRAFORM_REPORT=true", "KHOOK_SECRET_DB_TOKEN=s3cr3t"}
	code, out, _ := run(t, env, &fakeBackend{planChanges: true})
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "\x1b[0Ksection_start:1795341600:khook_migrate[collapsed=true]\r\x1b[0Kmigrate (job): run\n") ||
		!strings.Contains(out, "\x1b[0Ksection_end:1795341600:khook_migrate\r\x1b[0K\n") {
		t.Errorf("no per-step sections:\n%q", out)
	}
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(dir, ".khook", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	var suites report.JUnitSuites
	if err := xml.Unmarshal([]byte(read(JUnitFile)), &suites); err != nil || suites.Tests != 3 {
		t.Errorf("JUnit: %+v %v", suites, err)
	}
	if got := read(TerraformFile); got != `{"create":1,"update":0,"delete":0}`+"\n" {
		t.Errorf("terraform report %s", got)
	}
	if env := read(DotenvFile); !strings.Contains(env, "KHOOK_STATUS=ok\n") || !strings.Contains(env, "KHOOK_COMMENT_URL=https://gitlab.example/acme/infra/-/merge_requests/5#note_1\n") {
		t.Errorf("dotenv:\n%s", env)
	}
	// Apply: the same note, now applied.
	env = append(env, "KHOOK_COMMAND=apply")
	if code, out, _ := run(t, env, &fakeBackend{}); code != 0 {
		t.Fatalf("apply exit %d\n%s", code, out)
	}
	if len(gl.notes) != 1 || !strings.Contains(gl.notes[0]["body"].(string), "applied") {
		t.Errorf("notes after apply: %v", gl.notes)
	}
	// For an apply the widget counts what apply did (one ConfigMap created),
	// and JUnit names it.
	if got := read(TerraformFile); got != `{"create":1,"update":0,"delete":0}`+"\n" {
		t.Errorf("apply's terraform report %s", got)
	}
	if !strings.Contains(read(JUnitFile), "created ConfigMap demo/settings") {
		t.Errorf("JUnit lacks the change set:\n%s", read(JUnitFile))
	}
	// A converged apply: no changes, and the note is left alone.
	before := len(gl.requests)
	if code, out, _ := run(t, env, &fakeBackend{converged: true}); code != 0 {
		t.Fatalf("converged apply exit %d\n%s", code, out)
	}
	if got := read(TerraformFile); got != `{"create":0,"update":0,"delete":0}`+"\n" {
		t.Errorf("converged apply's terraform report %s", got)
	}
	if env := read(DotenvFile); !strings.Contains(env, "KHOOK_CHANGES=false\n") {
		t.Errorf("converged dotenv:\n%s", env)
	}
	for _, r := range gl.requests[before:] {
		if !strings.HasPrefix(r, "GET ") {
			t.Errorf("the converged apply wrote to GitLab: %s", r)
		}
	}
	if strings.Contains(out, "glpat-t0ken") || strings.Contains(read(JUnitFile), "s3cr3t") {
		t.Error("a token or secret leaked")
	}
}
