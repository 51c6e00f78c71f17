package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/test/needtool"
)

// TestVersionFromGitCheckout: a plain `go build` in a git checkout (no
// release stamp) reports the checkout's commit and module version, read
// from the build info Go embeds. The checkout is a fresh clone of this
// repository's HEAD: Go takes VCS data only from a .git directory, which a
// git worktree lacks. GOFLAGS is set to Go's default (-buildvcs=auto)
// whatever the machine's go env says.
func TestVersionFromGitCheckout(t *testing.T) {
	needtool.Path(t, "git", "the version test reads the checkout's commit with it")
	head, err := exec.Command("git", "-C", repoRoot, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("%s is not a git checkout: %v", repoRoot, err)
	}
	dir := filepath.Join(t.TempDir(), "khook")
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = filepath.Dir(dir)
		if name == "go" {
			cmd.Dir = dir
			// make test's GOFLAGS (-trimpath) kept: with other flags this
			// build compiled khook's whole graph a second time (1,597 s
			// of a run from nothing, the slowest test of the suite).
			cmd.Env = append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -buildvcs=auto"))
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	run("git", "clone", "--quiet", "--no-checkout", repoRoot, dir)
	run("git", "-C", dir, "checkout", "--quiet", strings.TrimSpace(string(head)))
	run("go", "build", "-o", "khook", ".")

	out, err := exec.Command(filepath.Join(dir, "khook"), "version", "-o", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var info struct{ Version, Commit, BuildDate string }
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatalf("version -o json: %v\n%s", err, out)
	}
	want := strings.TrimSpace(string(head))
	if info.Commit != want || info.BuildDate == "unknown" || info.Version == "(devel)" {
		t.Errorf("khook version -o json in a git checkout at %s:\n%s\nwant commit %s, its commit date and a module version", want, out, want)
	}
	t.Logf("khook version -o json:\n%s", out)
}
