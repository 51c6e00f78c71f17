package chartsrc

import (
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"

	"github.com/khook/khook/test/needtool"
)

// GitRepo is a git repository holding test charts under charts/, served
// over git's smart HTTP protocol by git http-backend (the server git
// itself ships) on a loopback port: the helm-git plugin's source, real.
type GitRepo struct {
	// URL is the repository's HTTP URL (http://127.0.0.1:PORT/charts.git).
	URL string
	Dir string // the work tree; Commit changes it

	requests atomic.Int64
	git      string
}

// Requests counts the requests the server has answered.
func (r *GitRepo) Requests() int64 { return r.requests.Load() }

// RepoURL is the helm-git repo: URL for the charts folder at ref.
func (r *GitRepo) RepoURL(ref string) string {
	return "git+" + r.URL + "@charts?ref=" + ref
}

// NewGitRepo commits the named test charts under charts/<name> on branch
// main, tags the commit v1 (an annotated tag) and serves the repository;
// with a non-zero auth every request needs those basic-auth credentials.
func NewGitRepo(t testing.TB, auth Auth, charts ...string) *GitRepo {
	t.Helper()
	r := &GitRepo{git: needtool.Path(t, "git", "the git chart source is tested against git's own HTTP server")}
	root := t.TempDir()
	r.Dir = filepath.Join(root, "work")
	bare := filepath.Join(root, "srv", "charts.git")
	r.run(t, root, "init", "-q", "-b", "main", r.Dir)
	for _, name := range charts {
		if err := os.CopyFS(filepath.Join(r.Dir, "charts", name), os.DirFS(ChartDir(name))); err != nil {
			t.Fatalf("chartsrc: cannot copy chart %s: %v", name, err)
		}
	}
	r.Commit(t, "charts")
	r.run(t, root, "init", "-q", "--bare", bare)
	// A commit is fetched by its hash only where the server allows it.
	r.run(t, bare, "config", "uploadpack.allowReachableSHA1InWant", "true")
	r.run(t, r.Dir, "remote", "add", "origin", bare)
	r.Tag(t, "v1")

	out, err := exec.Command(r.git, "--exec-path").Output()
	if err != nil {
		t.Fatalf("chartsrc: git --exec-path: %v", err)
	}
	backend := &cgi.Handler{Path: filepath.Join(strings.TrimSpace(string(out)), "git-http-backend"),
		Env: []string{"GIT_PROJECT_ROOT=" + filepath.Dir(bare), "GIT_HTTP_EXPORT_ALL=1"}}
	r.URL = serve(t, auth, &r.requests, backend) + "/charts.git"
	return r
}

// Unpack writes the packaged chart tgz as its folder under dir of the work
// tree (dir/<chart name>), as a project keeps its chart in git.
func (r *GitRepo) Unpack(t testing.TB, tgz, dir string) {
	t.Helper()
	ch, err := loader.Load(tgz)
	if err != nil {
		t.Fatalf("chartsrc: cannot load %s: %v", tgz, err)
	}
	if err := chartutil.SaveDir(ch, filepath.Join(r.Dir, dir)); err != nil {
		t.Fatalf("chartsrc: cannot unpack %s: %v", tgz, err)
	}
}

// Tag tags HEAD (an annotated tag) and pushes it.
func (r *GitRepo) Tag(t testing.TB, name string) {
	t.Helper()
	r.run(t, r.Dir, "tag", "-a", "-m", name, name)
	r.Push(t)
}

// Commit commits everything in the work tree and returns the commit hash.
func (r *GitRepo) Commit(t testing.TB, msg string) string {
	t.Helper()
	r.run(t, r.Dir, "add", "-A")
	r.run(t, r.Dir, "commit", "-q", "--allow-empty", "-m", msg)
	return r.Head(t)
}

// Push pushes main and the tags to the served repository.
func (r *GitRepo) Push(t testing.TB) {
	t.Helper()
	r.run(t, r.Dir, "push", "-q", "--follow-tags", "origin", "main")
}

// Head is the work tree's HEAD commit.
func (r *GitRepo) Head(t testing.TB) string {
	t.Helper()
	return r.run(t, r.Dir, "rev-parse", "HEAD")
}

func (r *GitRepo) run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(r.git, args...)
	cmd.Dir = dir
	// Nothing of the developer's git configuration reaches the repository.
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=khook test", "GIT_AUTHOR_EMAIL=test@khook.invalid",
		"GIT_COMMITTER_NAME=khook test", "GIT_COMMITTER_EMAIL=test@khook.invalid")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("chartsrc: git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}
