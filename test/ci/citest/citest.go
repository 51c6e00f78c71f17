// Package citest runs the built khook binary the way CI runners do: a
// GitHub Actions step's environment and files, or a GitLab job's.
package citest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/khook/khook/test/filelock"
	"github.com/khook/khook/test/reporoot"
)

// RepoRoot is the module root.
func RepoRoot() string { return reporoot.MustDir() }

type build struct {
	name string // of its lock: builds of one kind share all but the link
	once sync.Once
	dir  string
	err  error
}

var (
	plainBuild  = build{name: "plain"}
	staticBuild = build{name: StaticBuild}
)

// StaticBuild names the lock of builds with the Dockerfile's flags, which
// test/release's GoReleaser build shares.
const StaticBuild = "static"

// LockBuild takes the lock of one kind of khook build, so that test
// packages building it at once compile it once: the others wait, then only
// link from the build cache.
func LockBuild(ctx context.Context, kind string) (func(), error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return nil, fmt.Errorf("no user cache directory for the build lock: %w", err)
	}
	return filelock.Lock(ctx, filepath.Join(cache, "khook", "build-"+kind+".lock"), io.Discard)
}

// Khook builds the binary once per test process and returns its path. It
// uses the toolchain's default flags so it shares the build cache with
// `go test`; StaticKhook builds what the Dockerfile builds.
func Khook(t testing.TB) string { return plainBuild.get(t, nil) }

// StaticKhook builds with the Dockerfile's flags: CGO_ENABLED=0, -trimpath,
// -ldflags "-s -w" (a static binary for a FROM scratch image). A binary
// built that way already can be named by KHOOK_TEST_STATIC_BINARY.
func StaticKhook(t testing.TB) string {
	if p := os.Getenv("KHOOK_TEST_STATIC_BINARY"); p != "" {
		return p
	}
	return staticBuild.get(t, []string{"-trimpath", "-ldflags", "-s -w"}, "CGO_ENABLED=0")
}

// RemoveBuilds deletes the binaries this test binary built; TestMain calls it
// after m.Run so repeated runs leave nothing behind in the temp dir.
func RemoveBuilds() {
	for _, b := range []*build{&plainBuild, &staticBuild} {
		if b.dir != "" {
			os.RemoveAll(b.dir)
		}
	}
}

func (b *build) get(t testing.TB, flags []string, env ...string) string {
	t.Helper()
	b.once.Do(func() {
		b.dir, b.err = os.MkdirTemp("", "khook-ci-bin-")
		if b.err != nil {
			return
		}
		// The wait for another package's build of the same kind, then
		// the build, each bounded on its own: from nothing on a loaded
		// 2-core machine a cold build of khook (Helm, client-go) took over
		// 25 minutes, and the lock's wait is as long as the other's build.
		// Both only guard against a hang: the package's -timeout bounds
		// the whole.
		wait, stop := context.WithTimeout(context.Background(), 40*time.Minute)
		defer stop()
		unlock, err := LockBuild(wait, b.name)
		if err != nil {
			b.err = fmt.Errorf("building khook: %w", err)
			return
		}
		defer unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
		defer cancel()
		args := append(append([]string{"build"}, flags...), "-o", filepath.Join(b.dir, "khook"), ".")
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = RepoRoot()
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("building khook (go %s): %v\n%s", strings.Join(args, " "), err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return filepath.Join(b.dir, "khook")
}

// Result is one run of the binary.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Run runs `khook ci` in dir with exactly environ (no inherited variables,
// as a container sees only what the runner passes).
func Run(t testing.TB, dir string, environ []string, args ...string) Result {
	t.Helper()
	if len(args) == 0 {
		args = []string{"ci"}
	}
	bin := Khook(t) // built first: on a fresh machine the build is minutes of the run's bound
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = environ
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running khook: %v", err)
	}
	return Result{Code: code, Stdout: out.String(), Stderr: errOut.String()}
}

// GitHub is a GitHub Actions Docker action step: a workspace (the working
// directory), the file-command files and a pull_request event.
type GitHub struct {
	Dir       string // holds the files below
	Workspace string
	Environ   []string
}

// NewGitHub lays out a runner for a pull_request event on PR number, with
// the API at apiURL. inputs are the with: values by input name; they are
// passed as the runner does, INPUT_ + upper case, hyphens kept.
func NewGitHub(t testing.TB, apiURL string, number int, inputs map[string]string) *GitHub {
	t.Helper()
	dir := t.TempDir()
	g := &GitHub{Dir: dir, Workspace: filepath.Join(dir, "workspace")}
	if err := os.MkdirAll(g.Workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	g.Event(t, number, "0123456789abcdef0123456789abcdef01234567")
	for _, f := range []string{"output", "summary", "env"} {
		os.WriteFile(filepath.Join(dir, f), nil, 0o644)
	}
	g.Environ = []string{
		"GITHUB_ACTIONS=true", "CI=true", "HOME=/github/home",
		"GITHUB_WORKSPACE=" + g.Workspace, "GITHUB_REPOSITORY=acme/infra", "GITHUB_RUN_ID=4242",
		"GITHUB_SERVER_URL=https://github.com", "GITHUB_API_URL=" + apiURL, "GITHUB_SHA=fedcba9876543210",
		"GITHUB_EVENT_NAME=pull_request", "GITHUB_EVENT_PATH=" + filepath.Join(dir, "event.json"),
		"GITHUB_OUTPUT=" + filepath.Join(dir, "output"), "GITHUB_STEP_SUMMARY=" + filepath.Join(dir, "summary"),
		"GITHUB_ENV=" + filepath.Join(dir, "env"), "RUNNER_TEMP=" + filepath.Join(dir),
	}
	for name, v := range inputs {
		g.Environ = append(g.Environ, "INPUT_"+strings.ToUpper(name)+"="+v)
	}
	return g
}

// Event writes the pull_request event payload: PR number at head commit sha.
func (g *GitHub) Event(t testing.TB, number int, sha string) {
	t.Helper()
	event := fmt.Sprintf(`{"action":"synchronize","number":%d,"pull_request":{"number":%d,"head":{"sha":%q,"repo":{"fork":false}}}}`, number, number, sha)
	if err := os.WriteFile(filepath.Join(g.Dir, "event.json"), []byte(event), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Set adds or overrides environment variables.
func (g *GitHub) Set(kv ...string) {
	for _, s := range kv {
		k, _, _ := strings.Cut(s, "=")
		out := g.Environ[:0]
		for _, e := range g.Environ {
			if !strings.HasPrefix(e, k+"=") {
				out = append(out, e)
			}
		}
		g.Environ = append(out, s)
	}
}

// Read returns a file of the runner's (output, summary).
func (g *GitHub) Read(t testing.TB, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(g.Dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// ResetFiles empties the file-command files, as a new step gets new ones.
func (g *GitHub) ResetFiles() {
	for _, f := range []string{"output", "summary", "env"} {
		os.WriteFile(filepath.Join(g.Dir, f), nil, 0o644)
	}
}

// Write puts a file into the workspace.
func (g *GitHub) Write(t testing.TB, name, content string) {
	t.Helper()
	p := filepath.Join(g.Workspace, name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

var (
	durations = regexp.MustCompile(`\b\d+(\.\d+)?(ms|s|m\d\ds|h\d\dm)\b`)
	hosts     = regexp.MustCompile(`https://127\.0\.0\.1:\d+`)
	clock     = regexp.MustCompile(`\b\d\d:\d\d:\d\d\b`)
	nsNames   = regexp.MustCompile(`t-[a-z0-9-]+-[a-z0-9]{5}\b`)
	// A plan's fingerprint covers the per-test namespace and the cluster.
	fingerprints = regexp.MustCompile(`\b([0-9a-f]{64}|(Plan fingerprint ` + "`" + `)[0-9a-f]{12}\b)`)
)

// Normalize replaces what changes from run to run (durations, the API
// server's port, times, per-test namespaces, plan fingerprints) so output
// can be compared with golden files.
func Normalize(s, namespace string) string {
	if namespace != "" {
		s = strings.ReplaceAll(s, namespace, "<ns>")
	}
	s = hosts.ReplaceAllString(s, "https://127.0.0.1:<port>")
	s = nsNames.ReplaceAllString(s, "<ns>")
	s = clock.ReplaceAllString(s, "<time>")
	s = fingerprints.ReplaceAllString(s, "$2<fingerprint>")
	return durations.ReplaceAllString(s, "<dur>")
}

// Golden compares got with path, or rewrites it when update is set.
func Golden(t testing.TB, path, got string, update bool) {
	t.Helper()
	if update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file.\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}
